package capacity

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Settings are a search's settings as AIPerf's flags give them; a zero
// field is a flag not given.
type Settings struct {
	Recipe string // --search-recipe
	Style  string // --search-style; "" for the recipe's default

	// The SLA targets: milliseconds, and the error rate as a fraction.
	TTFT, ITL, TPOT, E2E float64  // --ttft-sla-ms, --itl-sla-ms, --tpot-sla-ms, --e2e-sla-ms
	ErrorRate            float64  // --error-rate-sla
	Attainment           float64  // --slo-attainment-fraction
	Filters              []Filter // --search-sla, judged after the recipe's own

	Min, Max, Steps int // --concurrency-min, --concurrency-max, --concurrency-steps
	MaxIterations   int // --search-max-iterations

	// Replicates is AIPerf's sla_replicates: smooth_isotonic measures the
	// fit's zero this many times (at most 20) and stops when the
	// bootstrap interval of the binding margin there leaves out zero.
	Replicates int
	// Warmup is AIPerf's sla_warmup_seconds: the base warm-up before each
	// smooth_isotonic step, in seconds; 0 turns it off, nil is AIPerf's
	// default (Plan.Warmup).
	Warmup *float64

	DegradationThreshold float64 // --degradation-threshold
	DegradationMetric    string  // --degradation-metric-tag
	DegradationStat      string  // --degradation-stat

	// Streaming is whether the steps stream: TTFT and ITL need it.
	Streaming bool
}

// Plan is a search ready to run: what each step is judged by, and how the
// next one is chosen.
type Plan struct {
	Recipe, Style string
	// Filters decide whether a step is feasible: every one must hold.
	Filters []Filter
	// SLOs are the per-request limits (metric tag → milliseconds) that
	// make a request good, for max-goodput-under-slo: each step counts its
	// good requests against them (AIPerf's --goodput).
	SLOs map[string]float64
	// Min and Max bound the concurrencies measured.
	Min, Max int
	// Grid is the grid style's concurrencies, in order.
	Grid []int
	// MaxIterations bounds the steps of an adaptive style.
	MaxIterations int
	// Replicates and WarmupSeconds are smooth_isotonic's sla_replicates
	// and sla_warmup_seconds (Settings); WarmupSeconds is 0 for none.
	Replicates    int
	WarmupSeconds float64
	// Objective is the metric (its avg) whose best feasible step
	// search_history.json names; "" for none.
	Objective string
	// Knee is concurrency-ramp's degradation test; nil for the others.
	Knee *Knee

	style style
}

// Knee is concurrency-ramp's test: the first concurrency whose Stat of
// Metric exceeds the lowest concurrency's by more than Threshold (a share).
type Knee struct {
	Threshold    float64
	Metric, Stat string
}

// Adaptive says whether the style chooses each step from the ones before
// (its steps are search_iter_NNNN), rather than walking a grid.
func (p *Plan) Adaptive() bool { return p.Grid == nil }

// recipe is one of AIPerf's search recipes.
type recipe struct {
	name         string
	styles       []string // the styles it runs, its default first
	plan         func(s Settings, p *Plan) error
	maxIteration map[string]int // the default --search-max-iterations of each adaptive style
}

var recipes = map[string]recipe{}

func registerRecipe(r recipe) { recipes[r.name] = r }

// Recipes are the recipes a search runs, sorted.
func Recipes() []string { return slices.Sorted(maps.Keys(recipes)) }

// Styles are the styles a search runs, sorted.
func Styles() []string { return slices.Sorted(maps.Keys(styles)) }

// refusedRecipes are AIPerf's recipes a search does not run, and what to
// run instead.
var refusedRecipes = map[string]string{
	"max-throughput-ttft-sla": "it is a Bayesian search; --search-recipe max-concurrency-under-sla --ttft-sla-ms MS finds the highest concurrency within the same TTFT p95 SLA deterministically",
	"max-throughput-itl-sla":  "it is a Bayesian search; --search-recipe max-concurrency-under-sla --itl-sla-ms MS finds the highest concurrency within the same ITL p95 SLA deterministically",
	"prefill-ttft-curve":      "it sweeps the prompt length; run a sweep of bench runs with --isl values instead",
	"decode-itl-curve":        "it sweeps the output length; run a sweep of bench runs with --osl values instead",
	"pareto-sweep":            "it sweeps workload shapes; run --search-recipe concurrency-ramp once per --isl/--osl pair instead",
}

// refusedStyles are AIPerf's Bayesian styles: their trajectories depend on
// random draws, so a search would not repeat.
var refusedStyles = map[string]bool{"bo": true, "optuna": true}

// NewPlan checks s as AIPerf does and plans the search.
func NewPlan(s Settings) (*Plan, error) {
	r, ok := recipes[s.Recipe]
	if !ok {
		if why, known := refusedRecipes[s.Recipe]; known {
			return nil, fmt.Errorf("--search-recipe %s is not run by inferprobe: %s", s.Recipe, why)
		}
		return nil, fmt.Errorf("--search-recipe %q: not a recipe; use one of %s", s.Recipe, strings.Join(Recipes(), ", "))
	}
	p := &Plan{Recipe: r.name, Style: s.Style}
	if p.Style == "" {
		p.Style = r.styles[0]
	}
	if refusedStyles[p.Style] {
		return nil, fmt.Errorf("--search-style %s: inferprobe runs no Bayesian search (its steps depend on random draws, so it would not repeat); use --search-style %s", p.Style, r.styles[0])
	}
	if !slices.Contains(r.styles, p.Style) {
		return nil, fmt.Errorf("--search-style %q: --search-recipe %s runs %s", p.Style, r.name, strings.Join(r.styles, ", "))
	}
	p.style = styles[p.Style]
	var errs []error
	p.Min, p.Max = 1, 1000
	if s.Min != 0 {
		p.Min = s.Min
	}
	if s.Max != 0 {
		p.Max = s.Max
	}
	if p.Min < 1 {
		errs = append(errs, fmt.Errorf("--concurrency-min %d: must be at least 1", p.Min))
	} else if p.Min >= p.Max {
		errs = append(errs, fmt.Errorf("--concurrency-min (%d) must be < --concurrency-max (%d): the search needs a range", p.Min, p.Max))
	}
	for _, v := range []struct {
		flag string
		v    float64
	}{{"--ttft-sla-ms", s.TTFT}, {"--itl-sla-ms", s.ITL}, {"--tpot-sla-ms", s.TPOT}, {"--e2e-sla-ms", s.E2E}} {
		if v.v < 0 || math.IsNaN(v.v) {
			errs = append(errs, fmt.Errorf("%s %g: must be a number of milliseconds > 0", v.flag, v.v))
		}
	}
	for _, v := range []struct {
		flag string
		v    float64
		one  bool // 1 is allowed
	}{{"--error-rate-sla", s.ErrorRate, false}, {"--slo-attainment-fraction", s.Attainment, true}, {"--degradation-threshold", s.DegradationThreshold, false}} {
		if v.v != 0 && !(v.v > 0 && (v.v < 1 || v.one && v.v == 1)) {
			errs = append(errs, fmt.Errorf("%s %g: must be a fraction between 0 and 1 (0.05 is 5%%)", v.flag, v.v))
		}
	}
	if s.Steps != 0 && s.Steps < 2 {
		errs = append(errs, fmt.Errorf("--concurrency-steps %d: must be at least 2 (a ramp needs a baseline and a step)", s.Steps))
	}
	if err := r.plan(s, p); err != nil {
		errs = append(errs, err)
	}
	if err := p.isotonicKnobs(s); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if p.style.adaptive() {
		p.MaxIterations = r.maxIteration[p.Style]
		if s.MaxIterations != 0 {
			p.MaxIterations = s.MaxIterations
		}
		if p.MaxIterations < 2 {
			return nil, fmt.Errorf("--search-max-iterations %d: must be at least 2", p.MaxIterations)
		}
	} else {
		if s.MaxIterations != 0 {
			return nil, fmt.Errorf("--search-max-iterations: --search-recipe %s --search-style %s walks a fixed grid; drop the flag, or use an adaptive style", r.name, p.Style)
		}
		if p.Grid == nil {
			p.Grid = logspace(p.Min, p.Max, 8)
		}
	}
	return p, nil
}

// slaFilters are the filters AIPerf's max-concurrency-under-sla builds from
// the named SLA flags: TTFT and ITL at p95, request latency at p99, the
// error rate on average (in percent, as the metric is).
func slaFilters(s Settings) ([]Filter, error) {
	var out []Filter
	if s.TTFT != 0 {
		out = append(out, Filter{Metric: "time_to_first_token", Stat: "p95", Op: "lt", Threshold: s.TTFT})
	}
	itl, err := interTokenSLA(s)
	if err != nil {
		return nil, err
	}
	if itl != 0 {
		out = append(out, Filter{Metric: "inter_token_latency", Stat: "p95", Op: "lt", Threshold: itl})
	}
	if s.E2E != 0 {
		out = append(out, Filter{Metric: "request_latency", Stat: "p99", Op: "lt", Threshold: s.E2E})
	}
	if s.ErrorRate != 0 {
		out = append(out, Filter{Metric: "request_error_rate", Stat: "avg", Op: "lt", Threshold: s.ErrorRate * 100})
	}
	return out, nil
}

// interTokenSLA is --tpot-sla-ms or its alias --itl-sla-ms.
func interTokenSLA(s Settings) (float64, error) {
	if s.TPOT != 0 && s.ITL != 0 && s.TPOT != s.ITL {
		return 0, fmt.Errorf("--tpot-sla-ms %g and --itl-sla-ms %g: they are one inter-token latency SLA; give one", s.TPOT, s.ITL)
	}
	return max(s.TPOT, s.ITL), nil
}

// needStreaming refuses a plan that judges TTFT or ITL, or counts good
// requests by them, for a run that cannot stream: it would measure
// neither, and every step would fail.
func needStreaming(s Settings, p *Plan) error {
	if !s.Streaming && p.NeedsStreaming() {
		return fmt.Errorf("--search-recipe %s judges time to first token or inter-token latency, which only a streamed run measures: drop --no-streaming", p.Recipe)
	}
	return nil
}

// NeedsStreaming says whether the steps must stream: a filter, the knee or
// the per-request SLOs are on TTFT or ITL.
func (p *Plan) NeedsStreaming() bool {
	metrics := slices.Collect(maps.Keys(p.SLOs))
	for _, f := range p.Filters {
		metrics = append(metrics, f.Metric)
	}
	if p.Knee != nil {
		metrics = append(metrics, p.Knee.Metric)
	}
	return slices.Contains(metrics, "time_to_first_token") || slices.Contains(metrics, "inter_token_latency")
}

// logspace is AIPerf's _logspace_int_steps: steps log-spaced integers from
// lo to hi, both included, rounded half to even as Python's round, without
// repeats.
func logspace(lo, hi, steps int) []int {
	var out []int
	a, b := math.Log(float64(lo)), math.Log(float64(hi))
	for i := range steps {
		v := max(int(math.RoundToEven(math.Exp(a+(b-a)*float64(i)/float64(steps-1)))), 1)
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}
