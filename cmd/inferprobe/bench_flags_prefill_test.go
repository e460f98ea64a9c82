package main

import (
	"testing"

	"github.com/inferprobe/inferprobe/scenarios"
)

// TestPrefillFlags: --prefill-concurrency and its ramp cap the run's
// requests waiting for a first token; the warmup's options, else the
// run's, cap the warmup's.
func TestPrefillFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"closed loop", []string{"--model", "m", "--streaming", "--concurrency", "8", "--prefill-concurrency", "2", "--prefill-concurrency-ramp-duration", "3"},
			[]string{"concurrency: 8", "max_prefill_concurrency: 2", "max_prefill_concurrency_ramp_over: 3s"}},
		{"rate", []string{"--model", "m", "--streaming", "--request-rate", "10", "--prefill-concurrency", "4"},
			[]string{"rate: 10", "max_prefill_concurrency: 4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, yml := scenarioYAML(t, tc.args, tc.want)
			checkWritten(t, sc, yml)
		})
	}
	for _, tc := range []struct {
		args     []string
		want     int
		wantRamp scenarios.Duration
	}{
		{[]string{"--model", "m", "--streaming", "--concurrency", "8", "--prefill-concurrency", "2", "--warmup-request-count", "4"}, 0, 0}, // the run's load, its cap with it
		{[]string{"--model", "m", "--streaming", "--concurrency", "8", "--prefill-concurrency", "2", "--warmup-request-count", "4", "--warmup-prefill-concurrency", "3", "--warmup-prefill-concurrency-ramp-duration", "1"}, 3, scenarios.Duration(1e9)},
		{[]string{"--model", "m", "--streaming", "--concurrency", "8", "--prefill-concurrency", "2", "--warmup-request-count", "4", "--warmup-concurrency", "4"}, 2, 0},
	} {
		f := parseBench(t, tc.args...)
		if _, err := f.scenario(); err != nil {
			t.Fatal(err)
		}
		a, err := f.load.warmup.arrival(f)
		if err != nil {
			t.Fatal(err)
		}
		got, ramp := 0, scenarios.Duration(0)
		if a != nil {
			got, ramp = a.MaxPrefillConcurrency, a.MaxPrefillConcurrencyRampOver
		}
		if got != tc.want || ramp != tc.wantRamp {
			t.Errorf("%v: the warmup's own prefill cap %d over %v, want %d over %v", tc.args, got, ramp, tc.want, tc.wantRamp)
		}
	}
}

// TestPrefillFlagErrors: AIPerf's refusals.
func TestPrefillFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		// AIPerf's default concurrency is 1.
		{[]string{"--model", "m", "--streaming", "--prefill-concurrency", "2"}, "Phase 'profiling': prefill_concurrency must be <= concurrency"},
		{[]string{"--model", "m", "--streaming", "--request-rate", "5", "--concurrency", "2", "--prefill-concurrency", "3"}, "Phase 'profiling': prefill_concurrency must be <= concurrency"},
		{[]string{"--model", "m", "--concurrency", "4", "--prefill-concurrency", "2"}, "--prefill-concurrency caps the requests waiting for their first token, which only a stream shows: add --streaming"},
		{[]string{"--model", "m", "--streaming", "--concurrency", "4", "--prefill-concurrency", "2", "--prefill-concurrency-ramp-duration", "0"}, "--prefill-concurrency-ramp-duration 0: must be a number of seconds > 0"},
	} {
		wantScenarioError(t, tc.args, tc.want)
	}
}
