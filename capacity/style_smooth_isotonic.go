package capacity

import (
	"math"
	"slices"
)

// smoothIsotonic is AIPerf's SmoothIsotonicSLAPlanner, its default style:
// double the concurrency until a step fails, as monotonic does; then
// measure three concurrencies evenly inside the bracket (those still
// inside it as they come: AIPerf measures all three), fit each step's
// margin to the SLA (the worst filter's distance past its threshold, as a
// share of it) with an isotonic regression (PAVA) in the concurrency, and
// measure where the fit crosses zero; refit and measure again until the
// bracket is within 5 % (or one apart). One step settles a concurrency.
// AIPerf interpolates the fit with PCHIP; here it is piecewise linear,
// which crosses zero between the same two measured steps.
type smoothIsotonic struct{}

func init() { registerStyle("smooth_isotonic", smoothIsotonic{}) }

func (smoothIsotonic) trials() int    { return 1 }
func (smoothIsotonic) adaptive() bool { return true }

// internalProbes is AIPerf's _FIT_INTERNAL_PROBES.
const internalProbes = 3

func (s smoothIsotonic) next(p *Plan, steps []Step) (int, string) {
	if len(steps) == 0 {
		return p.Min, ""
	}
	v := verdicts(steps, s.trials())
	feasible, infeasible, _ := bracket(v)
	if infeasible == 0 {
		return climb(p, steps[len(steps)-1].Concurrency, "smooth_isotonic")
	}
	if feasible == 0 {
		return 0, "smooth_isotonic_no_pass_in_range"
	}
	// The internal probes of the bracket the climb found.
	first := slices.IndexFunc(steps, func(s Step) bool { return !s.Feasible })
	lo := 0
	for _, s := range steps[:first] {
		lo = max(lo, s.Concurrency)
	}
	hi := steps[first].Concurrency
	for k := 1; k <= internalProbes; k++ {
		x := lo + max(1, int(math.Round(float64(hi-lo)*float64(k)/(internalProbes+1))))
		x = max(min(x, hi-1), lo+1)
		// One the bracket has since left is not measured: below a
		// feasible step it would pass, above a failed one it would fail.
		if _, done := v[x]; !done && x > feasible && x < infeasible {
			return x, ""
		}
	}
	if narrow(feasible, infeasible) {
		return 0, "smooth_isotonic_precision_reached"
	}
	x := fitRoot(p, steps, feasible, infeasible)
	if _, done := v[x]; done || x <= feasible || x >= infeasible {
		x = feasible + (infeasible-feasible)/2 // the fit gives nothing new: bisect
	}
	return x, ""
}

// fitRoot is where the isotonic fit of the steps' margins crosses zero
// inside the bracket, rounded to a concurrency strictly inside it.
func fitRoot(p *Plan, steps []Step, feasible, infeasible int) int {
	// The mean margin at each concurrency, in order.
	sum, n := map[int]float64{}, map[int]float64{}
	for _, s := range steps {
		sum[s.Concurrency] += worstMargin(p.Filters, s.Metrics)
		n[s.Concurrency]++
	}
	xs := make([]int, 0, len(sum))
	for x := range sum {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	ys, ws := make([]float64, len(xs)), make([]float64, len(xs))
	for i, x := range xs {
		ys[i], ws[i] = sum[x]/n[x], n[x]
	}
	fit := pava(ys, ws)
	for i := 1; i < len(xs); i++ {
		if fit[i-1] <= 0 && fit[i] > 0 && xs[i] > feasible && xs[i-1] < infeasible {
			r := float64(xs[i-1]) + (0-fit[i-1])*float64(xs[i]-xs[i-1])/(fit[i]-fit[i-1])
			return max(min(int(math.Round(r)), infeasible-1), feasible+1)
		}
	}
	return 0
}

// worstMargin is the largest of the filters' margins at a step: below zero
// when every filter holds. A metric the step did not measure counts as
// a breach of its whole threshold.
func worstMargin(filters []Filter, m Metrics) float64 {
	worst := math.Inf(-1)
	for _, f := range filters {
		g := 1.0
		if v, ok := f.observe(m); ok {
			g = f.margin(v)
		}
		worst = max(worst, g)
	}
	return worst
}

// pava is the weighted isotonic (non-decreasing) regression of ys: the
// pool-adjacent-violators algorithm.
func pava(ys, ws []float64) []float64 {
	type block struct {
		mean, weight float64
		n            int
	}
	var blocks []block
	for i, y := range ys {
		blocks = append(blocks, block{y, ws[i], 1})
		for len(blocks) > 1 && blocks[len(blocks)-2].mean > blocks[len(blocks)-1].mean {
			a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
			w := a.weight + b.weight
			blocks = append(blocks[:len(blocks)-2], block{(a.mean*a.weight + b.mean*b.weight) / w, w, a.n + b.n})
		}
	}
	out := make([]float64, 0, len(ys))
	for _, b := range blocks {
		for range b.n {
			out = append(out, b.mean)
		}
	}
	return out
}
