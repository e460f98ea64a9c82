package capacity

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// target is a server whose TTFT p95 is 50 ms up to its capacity and 150 ms
// above it: a cliff, as a full batch makes.
func target(capacity int) (Measure, *[]int) {
	var asked []int
	return func(_ context.Context, s Step) (Metrics, error) {
		asked = append(asked, s.Concurrency)
		ttft := 50.0
		if s.Concurrency > capacity {
			ttft = 150
		}
		return Metrics{"time_to_first_token": {"p95": ttft}, "output_token_throughput": {"avg": float64(s.Concurrency)}}, nil
	}, &asked
}

func plan(t *testing.T, s Settings) *Plan {
	t.Helper()
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStylesFindCapacity: each style's answer is the capacity (the grid's,
// the grid value below it), the bracket holds it, no step goes past
// --concurrency-max, and the adaptive styles end with AIPerf's reasons.
// smooth_isotonic takes AIPerf's steps (testdata/aiperf_smooth_isotonic.py
// run with AIPerf's Python printed these for the same target).
func TestStylesFindCapacity(t *testing.T) {
	// Enough for monotonic's two steps at each of its concurrencies.
	iterations := map[string]int{"monotonic": 40}
	aiperfSteps := map[int][]int{
		1:   {1, 2, 2, 2, 2},
		7:   {1, 2, 4, 8, 5, 6, 7, 7, 7},
		8:   {1, 2, 4, 8, 16, 10, 12, 14, 9, 9},
		37:  {1, 2, 4, 8, 16, 32, 64, 40, 48, 56, 33, 37, 38, 39},
		500: {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 320, 384, 448, 456, 488, 491, 503},
	}
	for _, capacity := range []int{1, 7, 8, 37, 500} {
		for _, style := range []string{"monotonic", "smooth_isotonic", "grid"} {
			p := plan(t, Settings{Recipe: "max-concurrency-under-sla", Style: style, TTFT: 100, Streaming: true, Max: 600, MaxIterations: iterations[style]})
			measure, asked := target(capacity)
			r, err := p.Run(context.Background(), time.Time{}, measure)
			if err != nil {
				t.Fatal(err)
			}
			want := capacity
			if style == "grid" {
				want = 0
				for _, c := range p.Grid {
					if c <= capacity {
						want = c
					}
				}
			}
			// An adaptive search ends within 5 % of the boundary.
			if r.FeasibleMax != nil && r.InfeasibleMin != nil && style != "grid" && r.FeasibleMax.Concurrency <= capacity && narrow(r.FeasibleMax.Concurrency, r.InfeasibleMin.Concurrency) {
				want = r.FeasibleMax.Concurrency
			}
			if r.FeasibleMax == nil || r.FeasibleMax.Concurrency != want {
				t.Errorf("%s, capacity %d: answer %+v after %v (%s), want %d", style, capacity, r.FeasibleMax, *asked, r.Reason, want)
				continue
			}
			if r.InfeasibleMin == nil || r.InfeasibleMin.Concurrency <= capacity {
				t.Errorf("%s, capacity %d: first infeasible %+v", style, capacity, r.InfeasibleMin)
			}
			if slices.Max(*asked) > 600 {
				t.Errorf("%s: measured %v, past --concurrency-max 600", style, *asked)
			}
			if style != "grid" && !strings.HasSuffix(r.Reason, "_precision_reached") {
				t.Errorf("%s, capacity %d: ended with %q", style, capacity, r.Reason)
			}
			if style == "smooth_isotonic" {
				if !slices.Equal(*asked, aiperfSteps[capacity]) {
					t.Errorf("smooth_isotonic, capacity %d: measured %v, AIPerf %v", capacity, *asked, aiperfSteps[capacity])
				}
				continue // its internal probes go on above a failed one, as AIPerf's
			}
			// Once a step failed, no step measures above it.
			for i, s := range r.Steps {
				if !s.Feasible && slices.ContainsFunc(r.Steps[i+1:], func(n Step) bool { return n.Concurrency > s.Concurrency }) {
					t.Errorf("%s: climbed past the failed step at %d: %v", style, s.Concurrency, *asked)
				}
			}
		}
	}
}

// TestMonotonicMeasuresTwice: a monotonic verdict stands once two steps
// agree, so every concurrency is measured twice; the search is AIPerf's
// doubling and bisection.
func TestMonotonicMeasuresTwice(t *testing.T) {
	p := plan(t, Settings{Recipe: "max-concurrency-under-sla", Style: "monotonic", TTFT: 100, Streaming: true, Max: 64})
	measure, asked := target(10)
	if _, err := p.Run(context.Background(), time.Time{}, measure); err != nil {
		t.Fatal(err)
	}
	want := []int{1, 1, 2, 2, 4, 4, 8, 8, 16, 16, 12, 12, 10, 10, 11, 11}
	if !slices.Equal(*asked, want) {
		t.Errorf("measured %v, want %v", *asked, want)
	}
}

// TestSearchBounds: every style never measures past the bounds, ends at
// the maximum when nothing fails and at the minimum when everything does.
func TestSearchBounds(t *testing.T) {
	for _, style := range []string{"monotonic", "smooth_isotonic", "grid"} {
		for capacity, wantReason := range map[int]string{1000: "no_failure_in_range", 0: "no_pass_in_range"} {
			p := plan(t, Settings{Recipe: "max-concurrency-under-sla", Style: style, TTFT: 100, Streaming: true, Min: 3, Max: 50})
			measure, asked := target(capacity)
			r, err := p.Run(context.Background(), time.Time{}, measure)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Min(*asked) < 3 || slices.Max(*asked) > 50 {
				t.Errorf("%s: measured %v outside 3..50", style, *asked)
			}
			if style != "grid" && !strings.HasSuffix(r.Reason, wantReason) {
				t.Errorf("%s, capacity %d: ended with %q, want …%s", style, capacity, r.Reason, wantReason)
			}
			if capacity == 1000 && (r.FeasibleMax == nil || r.FeasibleMax.Concurrency != 50 || r.InfeasibleMin != nil) {
				t.Errorf("%s: nothing failed, bracket %+v %+v, want 50 and none", style, r.FeasibleMax, r.InfeasibleMin)
			}
			if capacity == 0 && (r.FeasibleMax != nil || len(r.Steps) != p.style.trials()) {
				t.Errorf("%s: everything failed, answer %+v after %v, want none after the first", style, r.FeasibleMax, *asked)
			}
		}
	}
}

// TestSearchLimits: --search-max-iterations and the time limit end a
// search, and a step cut by the time limit is not judged.
func TestSearchLimits(t *testing.T) {
	p := plan(t, Settings{Recipe: "max-concurrency-under-sla", Style: "monotonic", TTFT: 100, Streaming: true, MaxIterations: 5})
	measure, asked := target(300)
	r, err := p.Run(context.Background(), time.Time{}, measure)
	if err != nil || r.Reason != "max_iterations" || len(*asked) != 5 {
		t.Errorf("max iterations 5: %d steps, %q, %v", len(*asked), r.Reason, err)
	}
	p = plan(t, Settings{Recipe: "max-concurrency-under-sla", Style: "smooth_isotonic", TTFT: 100, Streaming: true})
	cut := func(_ context.Context, s Step) (Metrics, error) {
		if s.Index == 2 {
			return nil, ErrTimeLimit
		}
		return Metrics{"time_to_first_token": {"p95": 10}}, nil
	}
	r, err = p.Run(context.Background(), time.Time{}, cut)
	if err != nil || r.Reason != ReasonTimeLimit || len(r.Steps) != 2 || r.FeasibleMax.Concurrency != 2 {
		t.Errorf("cut at the third step: %d steps, %q, answer %+v, %v", len(r.Steps), r.Reason, r.FeasibleMax, err)
	}
	r, err = p.Run(context.Background(), time.Now().Add(-time.Second), cut)
	if err != nil || r.Reason != ReasonTimeLimit || len(r.Steps) != 0 {
		t.Errorf("past the deadline: %d steps, %q, %v", len(r.Steps), r.Reason, err)
	}
	boom := errors.New("boom")
	r, err = p.Run(context.Background(), time.Time{}, func(context.Context, Step) (Metrics, error) { return nil, boom })
	if !errors.Is(err, boom) || len(r.Steps) != 0 {
		t.Errorf("a failing step: %v, %d steps", err, len(r.Steps))
	}
}

// TestRampKnee: concurrency-ramp walks AIPerf's log-spaced grid and names
// the first concurrency past the lowest's latency × (1 + threshold).
func TestRampKnee(t *testing.T) {
	p := plan(t, Settings{Recipe: "concurrency-ramp", Max: 64, DegradationThreshold: 0.5})
	if want := []int{1, 2, 3, 6, 11, 20, 35, 64}; !slices.Equal(p.Grid, want) {
		t.Errorf("grid %v, want AIPerf's %v", p.Grid, want)
	}
	latency := map[int]float64{1: 100, 2: 110, 3: 140, 6: 160, 11: 300, 20: 600, 35: 900, 64: 2000}
	r, err := p.Run(context.Background(), time.Time{}, func(_ context.Context, s Step) (Metrics, error) {
		return Metrics{"request_latency": {"p99": latency[s.Concurrency]}}, nil
	})
	if err != nil || len(r.Steps) != 8 || r.Reason != "grid_complete" {
		t.Fatalf("%d steps, %q, %v", len(r.Steps), r.Reason, err)
	}
	if r.Knee == nil || r.Knee.Concurrency != 6 || r.Baseline != 100 {
		t.Errorf("knee %+v from baseline %v, want 6 (160 > 150)", r.Knee, r.Baseline)
	}
}

// TestNewPlanRefuses: AIPerf's checks, with the flag named.
func TestNewPlanRefuses(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		want string
	}{
		{Settings{Recipe: "max-concurrency-under-sla", Style: "bo", TTFT: 1, Streaming: true}, "--search-style bo: inferprobe runs no Bayesian search"},
		{Settings{Recipe: "max-concurrency-under-sla", Style: "optuna", TTFT: 1, Streaming: true}, "use --search-style smooth_isotonic"},
		{Settings{Recipe: "max-concurrency-under-sla", Streaming: true}, "needs at least one of --ttft-sla-ms"},
		{Settings{Recipe: "max-concurrency-under-sla", TTFT: 1}, "drop --no-streaming"},
		{Settings{Recipe: "max-concurrency-under-sla", E2E: 1, Min: 8, Max: 8}, "--concurrency-min (8) must be < --concurrency-max (8)"},
		{Settings{Recipe: "max-concurrency-under-sla", E2E: 1, Style: "grid", MaxIterations: 5}, "walks a fixed grid"},
		{Settings{Recipe: "max-concurrency-under-sla", ITL: 10, TPOT: 20, Streaming: true}, "they are one inter-token latency SLA"},
		{Settings{Recipe: "max-concurrency-under-sla", ErrorRate: 5}, "--error-rate-sla 5: must be a fraction"},
		{Settings{Recipe: "max-goodput-under-slo", TTFT: 1, Streaming: true}, "needs --tpot-sla-ms, --e2e-sla-ms"},
		{Settings{Recipe: "max-throughput-ttft-sla", TTFT: 1}, "max-concurrency-under-sla --ttft-sla-ms MS"},
		{Settings{Recipe: "nope"}, "use one of concurrency-ramp, max-concurrency-under-sla, max-goodput-under-slo"},
		{Settings{Recipe: "concurrency-ramp", Style: "monotonic"}, "--search-recipe concurrency-ramp runs grid"},
		{Settings{Recipe: "concurrency-ramp", Steps: 1}, "--concurrency-steps 1: must be at least 2"},
	} {
		if _, err := NewPlan(tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
}

// TestRecipeFilters: the filters AIPerf's recipes build from the SLA
// flags, then --search-sla's, and the goodput recipe's per-request SLOs.
func TestRecipeFilters(t *testing.T) {
	extra, err := ParseFilter("output_token_throughput:avg:gt:100")
	if err != nil {
		t.Fatal(err)
	}
	p := plan(t, Settings{Recipe: "max-concurrency-under-sla", TTFT: 200, ITL: 15, E2E: 2000, ErrorRate: 0.01, Streaming: true, Filters: []Filter{extra}})
	var got []string
	for _, f := range p.Filters {
		got = append(got, f.String())
	}
	want := []string{"time_to_first_token:p95:lt:200", "inter_token_latency:p95:lt:15", "request_latency:p99:lt:2000", "request_error_rate:avg:lt:1", "output_token_throughput:avg:gt:100"}
	if !slices.Equal(got, want) || p.Style != "smooth_isotonic" || p.MaxIterations != 30 {
		t.Errorf("filters %q, style %s, %d iterations; want %q, smooth_isotonic, 30", got, p.Style, p.MaxIterations, want)
	}
	g := plan(t, Settings{Recipe: "max-goodput-under-slo", TTFT: 500, TPOT: 15, E2E: 2000, Streaming: true})
	if g.Filters[0].String() != "good_request_fraction:avg:ge:0.95" || g.SLOs["inter_token_latency"] != 15 || g.Objective != "goodput" {
		t.Errorf("goodput plan: filters %v, SLOs %v, objective %s", g.Filters, g.SLOs, g.Objective)
	}
	for s, want := range map[string]string{
		"ttft:p95:lt":      "want metric_tag:stat:op:threshold",
		"ttft:p42:lt:1":    `stat "p42" is not one of`,
		"ttft:p95:below:1": `op "below" is not one of`,
		"ttft:p95:lt:lots": `threshold "lots" is not a finite number`,
		":p95:lt:1":        "the metric tag is empty",
	} {
		if _, err := ParseFilter(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFilter(%q): %v, want %q", s, err, want)
		}
	}
}

// TestFitRoot: the isotonic fit's zero is AIPerf's, scipy's PCHIP through
// the PAVA fit (the roots here are what AIPerf's smooth_isotonic_fit and
// find_root give for the same points: 9.1269… and 9.1057…).
func TestFitRoot(t *testing.T) {
	for _, tc := range []struct {
		xs      []int
		margins []float64
		want    float64
	}{
		{[]int{1, 2, 4, 8, 10, 12, 14, 16}, []float64{-0.5, -0.5, -0.45, -0.3, 0.2, 0.25, 0.6, 0.5}, 9.126923973943184},
		{[]int{4, 8, 10, 16}, []float64{-0.9, -0.6, 0.4, 0.5}, 9.10577219116739},
	} {
		got, ok := isotonicFit(tc.xs, slices.Clone(tc.margins)).findRoot(float64(tc.xs[0]), float64(tc.xs[len(tc.xs)-1]))
		if !ok || math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%v, %v: root %v, want %v", tc.xs, tc.margins, got, tc.want)
		}
	}
}
