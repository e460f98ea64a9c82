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
// The fit is AIPerf's: PAVA, its flat runs broken by a ramp of 1e-9 of its
// span, then PCHIP (scipy's monotone cubic) through the points.
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
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = sum[x] / n[x]
	}
	fit := pava(ys)
	strictify(fit)
	x := make([]float64, len(xs))
	for i, v := range xs {
		x[i] = float64(v)
	}
	curve := newPCHIP(x, fit)
	for i := 1; i < len(xs); i++ {
		if fit[i-1] <= 0 && fit[i] > 0 && xs[i] > feasible && xs[i-1] < infeasible {
			r := curve.root(i - 1)
			return max(min(int(math.Round(r)), infeasible-1), feasible+1)
		}
	}
	return 0
}

// strictify adds i × 1e-9 of ys' span to each ys[i], as AIPerf does, so
// that PAVA's flat runs do not make the spline flat across zero.
func strictify(ys []float64) {
	eps := 1e-9
	if span := ys[len(ys)-1] - ys[0]; span > 0 {
		eps *= span
	}
	for i := range ys {
		ys[i] += float64(i) * eps
	}
}

// pchip is a piecewise cubic Hermite interpolant with scipy's
// PchipInterpolator slopes: monotone wherever its points are.
type pchip struct{ x, y, d []float64 }

func newPCHIP(x, y []float64) pchip {
	n := len(x)
	h, m, d := make([]float64, n-1), make([]float64, n-1), make([]float64, n)
	for k := range n - 1 {
		h[k] = x[k+1] - x[k]
		m[k] = (y[k+1] - y[k]) / h[k]
	}
	if n == 2 {
		d[0], d[1] = m[0], m[0]
		return pchip{x, y, d}
	}
	for k := 1; k < n-1; k++ {
		if m[k-1]*m[k] > 0 {
			w1, w2 := 2*h[k]+h[k-1], h[k]+2*h[k-1]
			d[k] = (w1 + w2) / (w1/m[k-1] + w2/m[k])
		}
	}
	d[0] = pchipEnd(h[0], h[1], m[0], m[1])
	d[n-1] = pchipEnd(h[n-2], h[n-3], m[n-2], m[n-3])
	return pchip{x, y, d}
}

// pchipEnd is scipy's one-sided three-point slope at an end, kept
// monotone.
func pchipEnd(h0, h1, m0, m1 float64) float64 {
	d := ((2*h0+h1)*m0 - h0*m1) / (h0 + h1)
	switch {
	case math.Signbit(d) != math.Signbit(m0) || d == 0 || m0 == 0:
		return 0
	case math.Signbit(m0) != math.Signbit(m1) && math.Abs(d) > 3*math.Abs(m0):
		return 3 * m0
	}
	return d
}

// at is the interpolant on interval k at x.
func (p pchip) at(k int, x float64) float64 {
	h := p.x[k+1] - p.x[k]
	t := (x - p.x[k]) / h
	t2, t3 := t*t, t*t*t
	return (2*t3-3*t2+1)*p.y[k] + (t3-2*t2+t)*h*p.d[k] + (-2*t3+3*t2)*p.y[k+1] + (t3-t2)*h*p.d[k+1]
}

// root is where the interpolant crosses zero on interval k, whose ends
// have opposite signs: by bisection, the cubic being monotone there.
func (p pchip) root(k int) float64 {
	lo, hi := p.x[k], p.x[k+1]
	for range 100 {
		mid := (lo + hi) / 2
		if p.at(k, mid) <= 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
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

// pava is the isotonic (non-decreasing) regression of ys, each weighing
// the same as AIPerf's: the pool-adjacent-violators algorithm.
func pava(ys []float64) []float64 {
	type block struct {
		mean float64
		n    int
	}
	var blocks []block
	for _, y := range ys {
		blocks = append(blocks, block{y, 1})
		for len(blocks) > 1 && blocks[len(blocks)-2].mean > blocks[len(blocks)-1].mean {
			a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
			n := a.n + b.n
			blocks = append(blocks[:len(blocks)-2], block{(a.mean*float64(a.n) + b.mean*float64(b.n)) / float64(n), n})
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
