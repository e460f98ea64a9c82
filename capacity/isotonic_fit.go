package capacity

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The numerics of smooth_isotonic, each AIPerf 0.13's function of the same
// name in its search_planner package (named in each comment).

// isotonicFit is smooth_isotonic_fit: the isotonic regression (PAVA) of
// ys over xs, its flat runs broken by a ramp of 1e-9 of its span, then
// scipy's PCHIP through the points.
func isotonicFit(xs []int, ys []float64) pchip {
	fit := pava(ys)
	strictify(fit)
	x := make([]float64, len(xs))
	for i, v := range xs {
		x[i] = float64(v)
	}
	return newPCHIP(x, fit)
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

// pava is the isotonic (non-decreasing) regression of ys, each weighing
// the same as AIPerf's (scipy's isotonic_regression): the
// pool-adjacent-violators algorithm.
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

// on is the interpolant on interval k at x.
func (p pchip) on(k int, x float64) float64 {
	h := p.x[k+1] - p.x[k]
	t := (x - p.x[k]) / h
	t2, t3 := t*t, t*t*t
	return (2*t3-3*t2+1)*p.y[k] + (t3-2*t2+t)*h*p.d[k] + (-2*t3+3*t2)*p.y[k+1] + (t3-t2)*h*p.d[k+1]
}

// at is the interpolant at x, inside its knots.
func (p pchip) at(x float64) float64 {
	k, _ := slices.BinarySearch(p.x, x)
	k = max(min(k-1, len(p.x)-2), 0)
	return p.on(k, x)
}

// root is where the interpolant crosses zero on interval k, whose ends
// have opposite signs: by bisection, the cubic being monotone there.
func (p pchip) root(k int) float64 {
	lo, hi := p.x[k], p.x[k+1]
	for range 100 {
		mid := (lo + hi) / 2
		if (p.on(k, mid) <= 0) == (p.y[k] < p.y[k+1]) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// findRoot is find_root: the first zero of the interpolant (scipy's
// PPoly.solve without extrapolation) inside [lo, hi]; false for none.
func (p pchip) findRoot(lo, hi float64) (float64, bool) {
	for k := range len(p.x) {
		var r float64
		switch {
		case p.y[k] == 0:
			r = p.x[k]
		case k+1 < len(p.x) && p.y[k+1] != 0 && (p.y[k] < 0) != (p.y[k+1] < 0):
			r = p.root(k)
		default:
			continue
		}
		if lo <= r && r <= hi {
			return r, true
		}
	}
	return 0, false
}

// point is a concurrency and the mean margin measured at it.
type point struct {
	x int
	y float64
}

// detectCliff is detect_cliff: the last point (the highest concurrency)
// lies more than 3 population standard deviations of the last three
// margins off the fit, and the bracket is still wider than precision ×
// --concurrency-max.
func detectCliff(raw []point, fit pchip, feasibleMax, infeasibleMin, xHi int) bool {
	if len(raw) < 3 {
		return false
	}
	recent := raw[len(raw)-3:]
	var mean float64
	for _, p := range recent {
		mean += p.y / 3
	}
	var v float64
	for _, p := range recent {
		v += (p.y - mean) * (p.y - mean) / 3
	}
	sigma := math.Sqrt(v)
	if sigma == 0 {
		return false
	}
	last := raw[len(raw)-1]
	if math.Abs(last.y-fit.at(float64(last.x))) <= 3*sigma {
		return false
	}
	gap := 0
	if feasibleMax != 0 && infeasibleMin != 0 {
		gap = infeasibleMin - feasibleMax
	}
	return float64(gap) > precision*float64(xHi)
}

// replicateCount is replicate_count: min(20, max(3, ⌈4 (σ/|threshold|)²⌉)).
func replicateCount(sigma, threshold float64) int {
	r := math.Ceil(4 * math.Pow(sigma/max(math.Abs(threshold), 1e-9), 2))
	return int(min(20, max(3, r)))
}

// sampleSD is the standard deviation of xs with n − 1 (0 for fewer than 2).
func sampleSD(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var mean, v float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	return math.Sqrt(v / float64(len(xs)-1))
}

// bootstrapResamples and bootstrapSeed make boundaryCI repeat: AIPerf's
// scipy.stats.bootstrap draws 10000 resamples from an unseeded generator.
const (
	bootstrapResamples = 10000
	bootstrapSeed      = 0x5eed
)

// boundaryCI is boundary_ci: the 95 % bias-corrected and accelerated (BCa,
// scipy's default) bootstrap interval of the mean of xs; a point for one
// sample, false where BCa is undefined (every sample alike), where scipy
// gives NaN.
func boundaryCI(xs []float64) (lo, hi float64, ok bool) {
	n := len(xs)
	if n == 1 {
		return xs[0], xs[0], true
	}
	var theta float64
	for _, x := range xs {
		theta += x
	}
	theta /= float64(n)
	rng := rand.New(rand.NewPCG(bootstrapSeed, bootstrapSeed))
	b := make([]float64, bootstrapResamples)
	below := 0
	for i := range b {
		var s float64
		for range n {
			s += xs[rng.IntN(n)]
		}
		b[i] = s / float64(n)
		if b[i] < theta {
			below += 2
		} else if b[i] == theta {
			below++
		}
	}
	z0 := ndtri(float64(below) / float64(2*len(b)))
	// The acceleration, from the jackknife means.
	jack := make([]float64, n)
	var dot float64
	for i := range xs {
		jack[i] = (theta*float64(n) - xs[i]) / float64(n-1)
		dot += jack[i] / float64(n)
	}
	var num, den float64
	for _, j := range jack {
		d := dot - j
		num += d * d * d
		den += d * d
	}
	a := num / (6 * math.Pow(den, 1.5))
	slices.Sort(b)
	z := ndtri(0.025)
	q1 := ndtr(z0 + (z0+z)/(1-a*(z0+z)))
	q2 := ndtr(z0 + (z0-z)/(1-a*(z0-z)))
	lo, hi = quantile(b, q1), quantile(b, q2)
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return 0, 0, false
	}
	return lo, hi, true
}

// quantile is numpy's linear quantile q of sorted s.
func quantile(s []float64, q float64) float64 {
	if math.IsNaN(q) {
		return math.NaN()
	}
	h := q * float64(len(s)-1)
	i := int(math.Floor(h))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}

func ndtri(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
func ndtr(z float64) float64  { return 0.5 * math.Erfc(-z/math.Sqrt2) }
