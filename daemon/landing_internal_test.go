package daemon

import (
	"slices"
	"testing"
)

func TestMilliseconds(t *testing.T) {
	for s, want := range map[float64]string{0.00123: "1.23 ms", 0.0099996: "10.0 ms", 0.0456: "45.6 ms", 0.09996: "100 ms", 1.5: "1500 ms"} {
		if got := milliseconds(s); got != want {
			t.Errorf("milliseconds(%v) = %q, want %q", s, got, want)
		}
	}
}

// TestVerdicts: a run's verdicts say, per metric, regressed or not with its p99 change; a run
// without an earlier one, a search and a run that did not succeed say so or nothing.
func TestVerdicts(t *testing.T) {
	reg := &Regression{EarlierRuns: 2, Metrics: []MetricRegression{
		{Metric: "time_to_first_token", Regressed: true, P99Change: 0.256},
		{Metric: "inter_token_latency", P99Change: -0.0001},
	}}
	for _, c := range []struct {
		name string
		run  RunInfo
		want []verdictText
	}{
		{"judged", RunInfo{State: RunSucceeded, Report: &BurstReport{Regression: reg}}, []verdictText{
			{Text: "time_to_first_token: regressed (p99 +25.6 % vs 2 earlier runs)", Regressed: true},
			{Text: "inter_token_latency: no regression (p99 +0.0 % vs 2 earlier runs)"},
		}},
		{"first", RunInfo{State: RunSucceeded, Report: &BurstReport{}}, []verdictText{{Text: "no earlier run to compare with"}}},
		{"search", RunInfo{State: RunSucceeded, Report: &BurstReport{}, Search: &SearchReport{Answer: "4 concurrent requests"}}, []verdictText{{Text: "a search: 4 concurrent requests"}}},
		{"cancelled", RunInfo{State: RunCancelled, Report: &BurstReport{}}, nil},
	} {
		if got := verdicts(c.run); !slices.Equal(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
