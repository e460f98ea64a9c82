package capacity

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"
)

// aiperfCase is a synthetic target and what AIPerf 0.13's
// SmoothIsotonicSLAPlanner does against it: the expected values are what
// testdata/aiperf_smooth_isotonic.py prints, run with AIPerf's Python.
type aiperfCase struct {
	name       string
	settings   Settings
	metrics    func(x, n int) (ttft, itl float64) // the n-th step at x
	steps      []int
	reason     string
	fm, im     int
	boundary   string
	binding    string
	ci         *[2]float64
	nonMonoton bool
}

var aiperfCases = []aiperfCase{
	{
		name:     "smooth",
		settings: Settings{TTFT: 200, ITL: 20},
		metrics:  func(x, _ int) (float64, float64) { return 100 + 100*float64(x)/37.5, 10 + 0.01*float64(x) },
		steps:    []int{1, 2, 4, 8, 16, 32, 64, 40, 48, 56, 37, 38},
		reason:   "smooth_isotonic_precision_reached", fm: 37, im: 38,
		boundary: "smooth", binding: "0:time_to_first_token.p95.lt.200.0",
	},
	{
		// TTFT crosses 200 ms at 80, ITL 20 ms at 50: ITL binds, though
		// TTFT's margin is the larger in milliseconds.
		name:     "two_filters",
		settings: Settings{TTFT: 200, ITL: 20},
		metrics:  func(x, _ int) (float64, float64) { return 2.5 * float64(x), 0.4 * float64(x) },
		steps:    []int{1, 2, 4, 8, 16, 32, 64, 40, 48, 56, 50},
		reason:   "smooth_isotonic_precision_reached", fm: 48, im: 50,
		boundary: "smooth", binding: "1:inter_token_latency.p95.lt.20.0",
	},
	{
		// Rising to 190 ms at 256, an overshoot to 2200 ms up to 352, a
		// ~700 ms plateau above: the highest steps sit far below the fit,
		// so the cliff guard fires and the bracket is bisected.
		name:     "cliff",
		settings: Settings{TTFT: 200},
		metrics: func(x, _ int) (float64, float64) {
			switch {
			case x <= 256:
				return 100 + 90*float64(x)/256, 10
			case x <= 352:
				return 2200, 10
			}
			return 700 + 0.001*float64(x), 10
		},
		steps:  []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 320, 384, 448, 288, 272, 264},
		reason: "smooth_isotonic_cliff_precision_reached", fm: 256, im: 264,
		boundary: "cliff", binding: "0:time_to_first_token.p95.lt.200.0",
	},
	{
		// Noise that depends on the replicate: four replicates at the
		// fit's zero, whose bootstrap interval leaves out zero. AIPerf's
		// interval is from unseeded draws: [-10.1667, -1.6667] in the run
		// recorded; this one is seeded, so only close to it.
		name:     "replicates",
		settings: Settings{TTFT: 200, Replicates: 4},
		metrics: func(x, n int) (float64, float64) {
			return 100 + 100*float64(x)/37.5 + []float64{7, -5, 3, -2, 6, -4}[n%6], 10
		},
		steps:  []int{1, 2, 4, 8, 16, 32, 64, 40, 48, 56, 35, 35, 35, 35},
		reason: "smooth_isotonic_precision_reached", fm: 32, im: 35,
		boundary: "smooth", binding: "0:time_to_first_token.p95.lt.200.0",
		ci: &[2]float64{-10.166666666666686, -1.6666666666666856}, nonMonoton: true,
	},
	{
		// A one-concurrency bracket, so 2 is measured again: TTFT's margin
		// there is the larger (60 ms against 10) but noisy, ITL's steady;
		// divided by their noise, ITL's binds.
		name:     "noisy_binding",
		settings: Settings{TTFT: 200, ITL: 20},
		metrics: func(x, n int) (float64, float64) {
			if x <= 1 {
				return 150, 10
			}
			return 260 + []float64{40, -40, 30, -30}[n%4], 30
		},
		steps:  []int{1, 2, 2, 2, 2},
		reason: "smooth_isotonic_precision_reached", fm: 1, im: 2,
		boundary: "smooth", binding: "1:inter_token_latency.p95.lt.20.0",
	},
	{
		// A one-concurrency bracket: AIPerf measures the failed
		// concurrency again until its three fits are spent.
		name:     "capacity_1",
		settings: Settings{TTFT: 200},
		metrics: func(x, _ int) (float64, float64) {
			if x <= 1 {
				return 50, 10
			}
			return 250, 10
		},
		steps:  []int{1, 2, 2, 2, 2},
		reason: "smooth_isotonic_precision_reached", fm: 1, im: 2,
		boundary: "smooth", binding: "0:time_to_first_token.p95.lt.200.0",
	},
}

// TestSmoothIsotonicMatchesAIPerf: per-filter fits, the binding filter,
// the cliff guard and its bisection, and the replicate phase take AIPerf's
// steps and end with its reason, bracket and boundary fields.
func TestSmoothIsotonicMatchesAIPerf(t *testing.T) {
	for _, tc := range aiperfCases {
		s := tc.settings
		s.Recipe, s.Streaming = "max-concurrency-under-sla", true
		p := plan(t, s)
		seen := map[int]int{}
		r, err := p.Run(context.Background(), time.Time{}, func(_ context.Context, st Step) (Metrics, error) {
			ttft, itl := tc.metrics(st.Concurrency, seen[st.Concurrency])
			seen[st.Concurrency]++
			return Metrics{"time_to_first_token": {"p95": ttft}, "inter_token_latency": {"p95": itl}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var steps []int
		for _, st := range r.Steps {
			steps = append(steps, st.Concurrency)
		}
		if !slices.Equal(steps, tc.steps) || r.Reason != tc.reason {
			t.Errorf("%s: steps %v (%s), AIPerf's %v (%s)", tc.name, steps, r.Reason, tc.steps, tc.reason)
		}
		if r.FeasibleMax == nil || r.FeasibleMax.Concurrency != tc.fm || r.InfeasibleMin == nil || r.InfeasibleMin.Concurrency != tc.im || r.NonMonotonic != tc.nonMonoton {
			t.Errorf("%s: bracket %+v %+v (non-monotonic %v), AIPerf's %d %d (%v)", tc.name, r.FeasibleMax, r.InfeasibleMin, r.NonMonotonic, tc.fm, tc.im, tc.nonMonoton)
		}
		if b := r.Boundary; b == nil || b.Type != tc.boundary || b.BindingConstraint != tc.binding || (b.CI == nil) != (tc.ci == nil) {
			t.Errorf("%s: boundary %+v, AIPerf's %s, %s, CI %v", tc.name, b, tc.boundary, tc.binding, tc.ci)
		} else if tc.ci != nil && (math.Abs(b.CI[0]-tc.ci[0]) > 1 || math.Abs(b.CI[1]-tc.ci[1]) > 1) {
			t.Errorf("%s: CI %v, AIPerf's %v", tc.name, *b.CI, *tc.ci)
		}
	}
}

// TestIsotonicHelpersMatchAIPerf: replicate_count, boundary_ci and the
// warm-up durations of _apply_sla_warmup, against the values AIPerf 0.13's
// functions return for the same inputs (run with its Python; its
// bootstrap is unseeded, so its intervals are those it gave on five runs,
// which agreed to 0.07; the means of five of 1, 2, 3, 4, 8 step by 0.2, and
// the seeded draws here land one step off scipy's in the upper tail, where
// the BCa quantiles, 0.053 and 0.992, are scipy's to 0.001).
func TestIsotonicHelpersMatchAIPerf(t *testing.T) {
	for _, tc := range []struct {
		sigma, threshold float64
		want             int
	}{{0, 200, 3}, {10, 200, 3}, {60, 200, 3}, {150, 200, 3}, {400, 200, 16}, {1, 0, 20}} {
		if got := replicateCount(tc.sigma, tc.threshold); got != tc.want {
			t.Errorf("replicateCount(%g, %g) = %d, AIPerf's %d", tc.sigma, tc.threshold, got, tc.want)
		}
	}
	for _, tc := range []struct {
		xs     []float64
		lo, hi float64
	}{
		{[]float64{0.33, -11.67, -3.67, -8.67}, -10.17, -1.67},
		{[]float64{1, 2, 4, 8, 3}, 2, 6.4},
		{[]float64{-5, -4, -6}, -6, -4},
	} {
		lo, hi, ok := boundaryCI(tc.xs)
		lo2, hi2, _ := boundaryCI(tc.xs)
		if !ok || math.Abs(lo-tc.lo) > 0.25 || math.Abs(hi-tc.hi) > 0.25 || lo != lo2 || hi != hi2 {
			t.Errorf("boundaryCI(%v) = [%g, %g] then [%g, %g], AIPerf's [%g, %g]", tc.xs, lo, hi, lo2, hi2, tc.lo, tc.hi)
		}
	}
	if _, _, ok := boundaryCI([]float64{2, 2, 2}); ok {
		t.Error("boundaryCI of equal margins: want none (scipy's BCa gives NaN)")
	}
	// The warm-up before steps at 4, 8, 4: AIPerf's durations for
	// sla_warmup_seconds unset, 0, 10 and 100.
	ptr := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		warmup *float64
		want   []time.Duration
	}{
		{nil, []time.Duration{60 * time.Second, 60 * time.Second, 30 * time.Second}},
		{ptr(0), []time.Duration{0, 0, 0}},
		{ptr(10), []time.Duration{60 * time.Second, 60 * time.Second, 15 * time.Second}},
		{ptr(100), []time.Duration{100 * time.Second, 100 * time.Second, 100 * time.Second}},
	} {
		p := plan(t, Settings{Recipe: "max-concurrency-under-sla", TTFT: 200, Streaming: true, Warmup: tc.warmup})
		var steps []Step
		var got []time.Duration
		for _, c := range []int{4, 8, 4} {
			s := Step{Concurrency: c}
			got = append(got, p.warmup(steps, s))
			steps = append(steps, s)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("sla_warmup_seconds %v: warm-ups %v, AIPerf's %v", tc.warmup, got, tc.want)
		}
	}
	if _, err := NewPlan(Settings{Recipe: "max-concurrency-under-sla", Style: "monotonic", TTFT: 200, Streaming: true, Replicates: 3}); err == nil {
		t.Error("replicates with monotonic: want an error, it has no replicate phase")
	}
}
