package capacity

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Step is one measured concurrency of a search.
type Step struct {
	Index       int // in the order measured, from 0: search_iter_NNNN
	Concurrency int
	// Warmup is how long the caller warms the target up at Concurrency
	// before measuring, left out of Metrics: smooth_isotonic's per-step
	// warm-up (AIPerf's _apply_sla_warmup); 0 for none.
	Warmup  time.Duration
	Metrics Metrics
	// Breaches are the filters the step did not meet; none when Feasible.
	Breaches []Breach
	Feasible bool
}

// Label is the step's directory name, as AIPerf names it: search_iter_NNNN
// for an adaptive style, concurrency_N for a grid.
func (p *Plan) Label(s Step) string {
	if p.Adaptive() {
		return fmt.Sprintf("search_iter_%04d", s.Index)
	}
	return fmt.Sprintf("concurrency_%d", s.Concurrency)
}

// Measure runs one step at s.Concurrency and returns its metrics. It
// returns ErrTimeLimit when the search's time limit cut the step short.
type Measure func(ctx context.Context, s Step) (Metrics, error)

// ErrTimeLimit is a step cut by the search's time limit: it is not judged.
var ErrTimeLimit = errors.New("the search's time limit ran out")

// ReasonTimeLimit ends a search whose time limit ran out.
const ReasonTimeLimit = "time_limit"

// Result is a finished search.
type Result struct {
	Plan  *Plan
	Steps []Step
	// Reason is why the search ended: AIPerf's convergence_reason, or
	// grid_complete, grid_first_breach, time_limit.
	Reason string
	// FeasibleMax is the answer, the highest concurrency that met every
	// filter below the lowest that did not; InfeasibleMin that lowest.
	// Nil when the search saw none.
	FeasibleMax, InfeasibleMin *Bound
	// NonMonotonic is set when a concurrency met the filters above one
	// that did not: the target is not steady, and the answer less sure.
	NonMonotonic bool
	// Knee is concurrency-ramp's answer; nil for the other recipes, and
	// when no step degraded past the threshold.
	Knee *KneePoint
	// Baseline is concurrency-ramp's lowest step's value of the knee's
	// statistic (0 when it measured none).
	Baseline float64
	// Boundary is smooth_isotonic's account of the boundary; nil for the
	// other styles, and before its first fit.
	Boundary *Boundary
}

// Bound is a concurrency of the bracket and the last step that settled it.
type Bound struct {
	Concurrency int
	Step        int
}

// KneePoint is the first concurrency past the degradation threshold.
type KneePoint struct {
	Concurrency int
	Value       float64
}

// Run measures steps until the style ends the search, the steps reach
// --search-max-iterations, or the time limit (deadline; zero for none)
// runs out. A step's error other than ErrTimeLimit ends the search with
// it, and the steps measured so far.
func (p *Plan) Run(ctx context.Context, deadline time.Time, measure Measure) (*Result, error) {
	r := &Result{Plan: p}
	var err error
	for {
		if p.Adaptive() && len(r.Steps) >= p.MaxIterations {
			r.Reason = "max_iterations"
			break
		}
		c, why := p.style.next(p, r.Steps)
		if c == 0 {
			r.Reason = why
			break
		}
		if c < p.Min || c > p.Max {
			return r, fmt.Errorf("internal error: the %s style asked for concurrency %d outside %d..%d", p.Style, c, p.Min, p.Max)
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			r.Reason = ReasonTimeLimit
			break
		}
		s := Step{Index: len(r.Steps), Concurrency: c}
		s.Warmup = p.warmup(r.Steps, s)
		s.Metrics, err = measure(ctx, s)
		if errors.Is(err, ErrTimeLimit) {
			r.Reason, err = ReasonTimeLimit, nil
			break
		}
		if err != nil {
			break
		}
		s.Breaches = judge(p.Filters, s.Metrics)
		s.Feasible = len(s.Breaches) == 0
		r.Steps = append(r.Steps, s)
	}
	r.settle()
	return r, err
}

// settle works out the bracket and the knee from the steps.
func (r *Result) settle() {
	p := r.Plan
	var feasible, infeasible int
	var nonMonotonic bool
	if rep, ok := p.style.(reporter); ok {
		feasible, infeasible, nonMonotonic, r.Boundary = rep.report(p, r.Steps)
	} else {
		feasible, infeasible, nonMonotonic = bracket(verdicts(r.Steps, p.style.trials()))
	}
	r.NonMonotonic = nonMonotonic
	r.FeasibleMax, r.InfeasibleMin = r.bound(feasible, true), r.bound(infeasible, false)
	if p.Knee == nil || len(r.Steps) == 0 {
		return
	}
	k := p.Knee
	base, ok := r.Steps[0].Metrics[k.Metric][k.Stat]
	if !ok || !(base > 0) {
		return
	}
	r.Baseline = base
	for _, s := range r.Steps[1:] {
		if y, ok := s.Metrics[k.Metric][k.Stat]; ok && y > base*(1+k.Threshold) {
			r.Knee = &KneePoint{Concurrency: s.Concurrency, Value: y}
			return
		}
	}
}

// bound is concurrency c of the bracket with the last step at c whose
// verdict agrees; nil for c = 0.
func (r *Result) bound(c int, feasible bool) *Bound {
	if c == 0 {
		return nil
	}
	for i := len(r.Steps) - 1; i >= 0; i-- {
		if s := r.Steps[i]; s.Concurrency == c && s.Feasible == feasible {
			return &Bound{Concurrency: c, Step: i}
		}
	}
	return nil
}

// Step returns the step a bound names.
func (r *Result) Step(b *Bound) Step { return r.Steps[b.Step] }
