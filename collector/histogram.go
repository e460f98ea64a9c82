// Package collector turns request records into Prometheus metrics and exposes
// the exporter's own health.
package collector

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

const namespace = "inferprobe"

// Native histogram settings. A bucket factor of 1.03 makes client_golang pick
// schema 5 (buckets 2^(1/32) ≈ 2.2 % wide), so a quantile read from the native
// histogram lies in the bucket holding the exact one: within 2.2 %, inside the
// 3 % the metric contract asks for. 640 buckets at schema 5 span 2^20 (1 ms to
// about 17 minutes), more than any honest latency spread, so the cap bounds
// memory without ever halving the resolution (which would cost the 3 %).
const (
	nativeBucketFactor = 1.03
	nativeMaxBuckets   = 640
)

// Exemplar label names: the request ID as sent in X-Request-ID, and the trace
// ID of its traceparent, which Grafana links to a trace backend.
const (
	ExemplarRequestID = "request_id"
	ExemplarTraceID   = "trace_id"
)

// Classic buckets, for Prometheus servers that do not ingest native histograms. The latency
// histograms use the bounds of native schema 3, 2^(k/8): buckets 2^(1/8) ≈ 9 % wide, so a
// classic quantile (interpolated inside the bucket holding the exact one) is within 9 % of it and
// within 10 % of the native quantile, whatever the latencies. The ranges cover what an endpoint
// answers in; a value beyond one falls into +Inf (or the first bucket) and only its quantile is
// coarse. The cost is series: about 100 buckets a histogram where the native form needs only the
// populated ones.
var (
	ttftBuckets     = octaveBuckets(-7, 6)                    // 7.8 ms … 64 s
	itlBuckets      = octaveBuckets(-11, 1)                   // 0.49 ms … 2 s
	durationBuckets = octaveBuckets(-6, 9)                    // 15.6 ms … 512 s
	tokenBuckets    = prometheus.ExponentialBuckets(1, 2, 18) // 1 … 131072
	lagBuckets      = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
	// A request's stages run from microseconds (a write on loopback) to a
	// long prefill; the native histogram holds their detail.
	stageBuckets = []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
)

// classicBucketsPerOctave sets the width of the latency buckets: 2^(1/8), native schema 3.
const classicBucketsPerOctave = 8

// octaveBuckets returns the bounds 2^(k/classicBucketsPerOctave) from 2^from to 2^to seconds.
func octaveBuckets(from, to int) []float64 {
	var b []float64
	for k := from * classicBucketsPerOctave; k <= to*classicBucketsPerOctave; k++ {
		b = append(b, math.Exp2(float64(k)/classicBucketsPerOctave))
	}
	return b
}

func histogramVec(name, help string, classic []float64, labels []string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace:                      namespace,
		Name:                           name,
		Help:                           help,
		Buckets:                        classic,
		NativeHistogramBucketFactor:    nativeBucketFactor,
		NativeHistogramMaxBucketNumber: nativeMaxBuckets,
	}, labels)
}
