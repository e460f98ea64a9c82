package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/scenarios"
)

// TestWarmupLoad: the warmup's load is built as AIPerf 0.13's build_warmup
// builds its warmup phase: each --warmup-* option, else the run's; a rate
// makes an open loop capped by a concurrency when one is given, else a
// closed loop (1 by default); the run's ramps carry over.
func TestWarmupLoad(t *testing.T) {
	base := []string{"--model", "m", "--warmup-request-count", "5"}
	for _, tc := range []struct {
		name string
		args []string
		want *scenarios.Arrival
	}{
		{"none: the run's load", []string{"--concurrency", "4"}, nil},
		{"warmup concurrency", []string{"--concurrency", "4", "--warmup-concurrency", "2"},
			&scenarios.Arrival{Pattern: scenarios.ArrivalConcurrency, Concurrency: 2}},
		{"warmup rate over a closed loop: an open loop capped by --concurrency", []string{"--concurrency", "4", "--warmup-request-rate", "8"},
			&scenarios.Arrival{Pattern: scenarios.ArrivalPoisson, Rate: 8, MaxConcurrency: 4}},
		{"warmup pattern at the run's rate", []string{"--request-rate", "10", "--warmup-arrival-pattern", "constant"},
			&scenarios.Arrival{Pattern: scenarios.ArrivalConstant, Rate: 10}},
		{"warmup gamma takes --arrival-smoothness", []string{"--request-rate", "10", "--arrival-smoothness", "2", "--warmup-arrival-pattern", "gamma", "--warmup-request-rate", "5"},
			&scenarios.Arrival{Pattern: scenarios.ArrivalGamma, Rate: 5, Smoothness: 2}},
		{"warmup concurrency without a rate", []string{"--warmup-concurrency", "3"},
			&scenarios.Arrival{Pattern: scenarios.ArrivalConcurrency, Concurrency: 3}},
		// AIPerf starts a rate ramp at rate × 0.1 s / duration: 20 × 0.1 / 2 = 1.
		{"warmup rate ramp", []string{"--warmup-request-rate", "20", "--warmup-request-rate-ramp-duration", "2"},
			&scenarios.Arrival{Pattern: scenarios.ArrivalPoisson, Rate: 1, RampTo: 20, RampOver: scenarios.Duration(2 * time.Second)}},
		{"the run's concurrency ramp carries over", []string{"--concurrency", "8", "--concurrency-ramp-duration", "4", "--warmup-concurrency", "6"},
			&scenarios.Arrival{Pattern: scenarios.ArrivalConcurrency, Concurrency: 1, RampTo: 6, RampOver: scenarios.Duration(4 * time.Second)}},
		{"warmup concurrency ramp", []string{"--warmup-concurrency", "6", "--warmup-concurrency-ramp-duration", "3"},
			&scenarios.Arrival{Pattern: scenarios.ArrivalConcurrency, Concurrency: 1, RampTo: 6, RampOver: scenarios.Duration(3 * time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := parseBench(t, append(base, tc.args...)...)
			if _, err := f.scenario(); err != nil {
				t.Fatal(err)
			}
			got, err := f.load.warmup.arrival(f)
			switch {
			case err != nil:
				t.Fatal(err)
			case !reflect.DeepEqual(got, tc.want):
				t.Errorf("warmup arrival %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestWarmupRefusals: warmup options AIPerf refuses, or that bench cannot
// honour, are refused with what to do instead.
func TestWarmupRefusals(t *testing.T) {
	prompts := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := os.WriteFile(prompts, []byte(`{"text": "hello"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--warmup-request-count", "5", "--warmup-grace-period", "2"}, "--warmup-grace-period applies to a --warmup-duration warmup"},
		{[]string{"--warmup-request-count", "5", "--warmup-request-rate-ramp-duration", "2"}, "give --warmup-request-rate"},
		{[]string{"--warmup-request-count", "5", "--warmup-request-rate", "0"}, "--warmup-request-rate 0: must be"},
		{[]string{"--warmup-request-count", "5", "--warmup-concurrency", "2", "--save-scenario", "x.yml"}, "drop the --warmup-* load and grace options"},
		{[]string{"--num-warmup-sessions", "2", "--input-file", prompts}, "--num-warmup-sessions counts synthetic conversations"},
	} {
		var stdout, stderr strings.Builder
		code := runBenchArgs(t, &stdout, &stderr, append([]string{"--model", "m", "--url", "127.0.0.1:1"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
	}
}

// TestWarmupLimits: --num-warmup-sessions counts every turn of that many
// warmup conversations; with --warmup-request-count, whichever ends first;
// --warmup-grace-period needs --warmup-duration, as in AIPerf.
func TestWarmupLimits(t *testing.T) {
	f := parseBench(t, "--model", "m", "--num-warmup-sessions", "3", "--conversation-turn-mean", "4")
	_, warmup, _, err := f.load.limits(f)
	if err != nil || warmup.Requests != 12 {
		t.Errorf("3 sessions of 4 turns: warmup %+v, %v; want 12 requests", warmup, err)
	}
	f = parseBench(t, "--model", "m", "--num-warmup-sessions", "3", "--conversation-turn-mean", "4", "--warmup-request-count", "5")
	if _, warmup, _, err = f.load.limits(f); err != nil || warmup.Requests != 5 {
		t.Errorf("3 sessions or 5 requests: warmup %+v, %v; want 5 requests", warmup, err)
	}
	f = parseBench(t, "--model", "m", "--warmup-duration", "2", "--warmup-grace-period", "0.5")
	g, err := f.load.warmup.graceFor(true)
	if err != nil || g == nil || *g != 500*time.Millisecond {
		t.Errorf("warmup grace %v, %v; want 500ms", g, err)
	}
}
