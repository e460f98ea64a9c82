package collector

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/stats"
)

// TestBurstsSetLast checks the last-run gauges of one run, and that a run
// without streamed samples removes the quantiles an older run left.
func TestBurstsSetLast(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := NewBursts(reg)
	b.Declare("nightly", "vllm")
	b.SetLast("nightly", "vllm", BurstResult{
		Summary: report.Summary{
			TTFT: stats.Stats{Count: 3, P50: 0.1, P90: 0.2, P95: 0.3, P99: 0.4},
			OK:   3, Failed: 1, Good: 2, Duration: 2 * time.Second, RequestThroughput: 1.5, OutputTokenThroughput: 96,
		},
		End: 1700000000,
	})
	for _, tc := range []struct {
		name  string
		vec   *prometheus.GaugeVec
		extra []string
		want  float64
	}{
		{"ttft p50", b.ttft, []string{"0.5"}, 0.1},
		{"ttft p99", b.ttft, []string{"0.99"}, 0.4},
		{"request throughput", b.reqThroughput, nil, 1.5},
		{"output token throughput", b.outThroughput, nil, 96},
		{"goodput: 2 good of 4 finished", b.goodput, nil, 0.5},
		{"error ratio: 1 failed of 4", b.errorRatio, nil, 0.25},
		{"duration", b.duration, nil, 2},
		{"end", b.end, nil, 1700000000},
	} {
		if got := testutil.ToFloat64(tc.vec.WithLabelValues(append([]string{"nightly", "vllm"}, tc.extra...)...)); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
	}
	if n := testutil.CollectAndCount(b.itl); n != 0 {
		t.Errorf("%d ITL quantiles exported for a run without ITL samples", n)
	}

	b.SetLast("nightly", "vllm", BurstResult{Summary: report.Summary{Failed: 2}})
	if n := testutil.CollectAndCount(b.ttft); n != 0 {
		t.Errorf("%d TTFT quantiles left from the older run", n)
	}
	if got := testutil.ToFloat64(b.errorRatio.WithLabelValues("nightly", "vllm")); got != 1 {
		t.Errorf("error ratio = %v, want 1", got)
	}

	b.Forget("nightly", "vllm")
	for _, v := range []prometheus.Collector{b.running, b.runs, b.skipped, b.queued, b.errorRatio} {
		if n := testutil.CollectAndCount(v); n != 0 {
			t.Errorf("%d series left after Forget", n)
		}
	}
}

// TestBurstsRegression: a run's verdicts replace the earlier run's, and a
// run without one (no earlier run) leaves none standing.
func TestBurstsRegression(t *testing.T) {
	b := NewBursts(prometheus.NewRegistry())
	b.SetLast("nightly", "vllm", BurstResult{Regressions: []BurstRegression{
		{Metric: "time_to_first_token", Regressed: true, P99Change: 0.12}, {Metric: "request_latency", P99Change: -0.01}}})
	if got := testutil.ToFloat64(b.regression.WithLabelValues("nightly", "vllm", "time_to_first_token")); got != 1 {
		t.Errorf("TTFT regression %v, want 1", got)
	}
	if got := testutil.ToFloat64(b.regressionChange.WithLabelValues("nightly", "vllm", "time_to_first_token")); got != 0.12 {
		t.Errorf("TTFT p99 change %v, want 0.12", got)
	}
	if got := testutil.ToFloat64(b.regression.WithLabelValues("nightly", "vllm", "request_latency")); got != 0 {
		t.Errorf("latency regression %v, want 0", got)
	}
	b.SetLast("nightly", "vllm", BurstResult{})
	if n := testutil.CollectAndCount(b.regression) + testutil.CollectAndCount(b.regressionChange); n != 0 {
		t.Errorf("%d verdict series left from the earlier run", n)
	}
}
