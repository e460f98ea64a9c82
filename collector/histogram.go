// Package collector turns request records into Prometheus metrics and exposes
// the exporter's own health.
package collector

import "github.com/prometheus/client_golang/prometheus"

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

// Classic buckets, for Prometheus servers that do not ingest native histograms.
var (
	ttftBuckets     = []float64{.01, .025, .05, .1, .15, .2, .3, .5, .75, 1, 1.5, 2, 3, 5, 10, 20, 30, 60}
	itlBuckets      = []float64{.001, .0025, .005, .0075, .01, .015, .02, .03, .05, .075, .1, .15, .25, .5, 1}
	durationBuckets = []float64{.05, .1, .25, .5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 60, 120, 300}
	tokenBuckets    = prometheus.ExponentialBuckets(1, 2, 18) // 1 … 131072
	lagBuckets      = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
)

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
