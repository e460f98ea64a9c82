package main

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/scenarios"
)

// TestRequestRateSeries: AIPerf's --request-rate-series file becomes the
// scenario's rate series as AIPerf applies it — the piecewise-linear rate
// sampled every 0.1 s, the first point's rate before it, the last's held
// after it — and is sent at --arrival-pattern times.
func TestRequestRateSeries(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "series.json")
	// Flat at 10 until 0.2 s, a line to 20 at 0.4 s, then 20.
	if err := os.WriteFile(file, []byte(`{"points": [{"time_s": 0.2, "qps": 10}, {"time_s": 0.4, "qps": 20}, {"time_s": 0.5, "qps": 20}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f := parseBench(t, "--model", "m", "--request-rate-series", file, "--arrival-pattern", "constant", "--concurrency", "4")
	sc, err := f.scenario()
	if err == nil {
		err = scenarios.Check(sc.cfg, "bench", sc.written)
	}
	if err != nil {
		t.Fatal(err)
	}
	step := scenarios.Duration(100 * time.Millisecond)
	want := scenarios.Arrival{Pattern: scenarios.ArrivalConstant, MaxConcurrency: 4, Series: []scenarios.Step{
		{Rate: 10, Duration: 3 * step}, {Rate: 15, Duration: step}, {Rate: 20}}}
	if dir := defaultArtifactDir(f); dir != filepath.Join("artifacts", "m-chat-concurrency4-request_rate10.0") {
		t.Errorf("artifact directory %s, want AIPerf's name by the series' first rate after its concurrency limit, concurrency4-request_rate10.0", dir)
	}
	got := sc.cfg.Probes["bench"].Arrival
	for i := range min(len(got.Series), len(want.Series)) {
		if math.Abs(got.Series[i].Rate-want.Series[i].Rate) < 1e-9 {
			got.Series[i].Rate = want.Series[i].Rate // sampling times are floats, as AIPerf's
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("arrival %+v, want %+v", got, want)
	}
}

// TestRequestRateSeriesWarmup: AIPerf's warmup does not follow a rate
// series (its warmup rate is --request-rate, unset): it is a closed loop at
// --concurrency, or 1.
func TestRequestRateSeriesWarmup(t *testing.T) {
	file := filepath.Join(t.TempDir(), "series.json")
	if err := os.WriteFile(file, []byte(`[{"time_s": 0, "qps": 5}, {"time_s": 10, "qps": 50}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	f := parseBench(t, "--model", "m", "--request-rate-series", file, "--warmup-request-count", "4")
	got, err := f.load.warmup.arrival(f)
	if want := (&scenarios.Arrival{Pattern: scenarios.ArrivalConcurrency, Concurrency: 1}); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("warmup arrival %+v, %v; want %+v", got, err, want)
	}
}

// TestRequestRateSeriesRefused: a series file AIPerf would refuse, and the
// options it cannot be used with, are refused with the reason.
func TestRequestRateSeriesRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		args    []string
		want    string
	}{
		{`[{"time_s": 0, "qps": 1}]`, nil, "needs at least two points"},
		{`[{"time_s": 1, "qps": 1}, {"time_s": 1, "qps": 2}]`, nil, "strictly increasing"},
		{`[{"time_s": 0, "qps": 0}, {"time_s": 1, "qps": 2}]`, nil, "qps 0 must be > 0"},
		{`[{"time_s": -1, "qps": 1}, {"time_s": 1, "qps": 2}]`, nil, "time_s -1 must be"},
		{`{"points": [], "extra": 1}`, nil, "only key is points"},
		{`[{"time_s": 0, "qps": 1, "rate": 2}, {"time_s": 1, "qps": 2}]`, nil, "unknown field"},
		{`[{"time_s": 0, "qps": 1}, {"time_s": 1, "qps": 2}]`, []string{"--request-rate", "3"}, "mutually exclusive"},
		{`[{"time_s": 0, "qps": 1}, {"time_s": 1, "qps": 2}]`, []string{"--request-rate-ramp-duration", "3"}, "--request-rate-ramp-duration cannot be used with --request-rate-series"},
	} {
		file := filepath.Join(dir, "s.json")
		if err := os.WriteFile(file, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := parseBench(t, append([]string{"--model", "m", "--request-rate-series", file}, tc.args...)...).scenario()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: error %v, want %q", tc.content, tc.args, err, tc.want)
		}
	}
}
