package stats

import (
	"math"
	"slices"
	"sort"
)

// Spread is one statistic measured once per run, summarised across the
// runs as AIPerf's multi-run confidence aggregate does: the mean of the
// runs' values, their sample standard deviation (n−1), min and max, the
// coefficient of variation Std/Mean, the standard error Std/√n, and
// Student's t interval for the mean, whose half-width is T × SE.
type Spread struct {
	N         int
	Mean, Std float64
	Min, Max  float64
	CV, SE    float64
	Interval  Interval
	T         float64 // the t critical value; NaN for one run
}

// Across is the Spread of values, one per run (at least one), at level.
// One value gives AIPerf's degenerate single-run aggregate: no spread, the
// interval collapsed to the value, T NaN. A zero mean makes CV infinite.
func Across(values []float64, level float64) Spread {
	n := len(values)
	s := Spread{N: n, T: math.NaN()}
	s.Min, s.Max = slices.Min(values), slices.Max(values)
	for _, v := range values {
		s.Mean += v
	}
	s.Mean /= float64(n)
	if n == 1 {
		s.Interval = Interval{s.Mean, s.Mean}
		return s
	}
	var sq float64
	for _, v := range values {
		sq += (v - s.Mean) * (v - s.Mean)
	}
	s.Std = math.Sqrt(sq / float64(n-1))
	s.SE = s.Std / math.Sqrt(float64(n))
	s.CV = math.Inf(1)
	if s.Mean != 0 {
		s.CV = s.Std / s.Mean
	}
	s.T = StudentQuantile(1-(1-level)/2, float64(n-1))
	s.Interval = Interval{s.Mean - s.T*s.SE, s.Mean + s.T*s.SE}
	return s
}

// KruskalWallis tests that every group (a run's per-request values) comes
// from one distribution, against some group tending to larger or smaller
// values: the rank-sum statistic H, corrected for ties, and its p-value
// from the χ² distribution with k−1 degrees of freedom (valid with about
// five or more values a group). Empty groups are left out; with fewer
// than two groups left, or every value equal, p is 1.
func KruskalWallis(groups [][]float64) (h, p float64) {
	type sample struct {
		v     float64
		group int
	}
	var all []sample
	k := 0
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		for _, v := range g {
			all = append(all, sample{v, k})
		}
		k++
	}
	if k < 2 {
		return 0, 1
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	rankSum, size := make([]float64, k), make([]float64, k)
	var ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // mean of ranks i+1 … j
		for _, s := range all[i:j] {
			rankSum[s.group] += rank
			size[s.group]++
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	n := float64(len(all))
	correction := 1 - ties/(n*n*n-n)
	if correction <= 0 {
		return 0, 1 // every value equal
	}
	for g := range rankSum {
		h += rankSum[g] * rankSum[g] / size[g]
	}
	h = (12/(n*(n+1))*h - 3*(n+1)) / correction
	return h, ChiSquareSF(h, float64(k-1))
}

// KolmogorovSmirnov is the two-sided p-value of the two-sample
// Kolmogorov–Smirnov test that a and b come from one distribution: the
// largest gap D between their empirical distribution functions, against
// Kolmogorov's limiting distribution at (√nₑ + 0.12 + 0.11/√nₑ)·D with
// nₑ = n₁n₂/(n₁+n₂) (Stephens' correction for small samples). 1 when
// either side has fewer than two values.
func KolmogorovSmirnov(a, b []float64) float64 {
	if len(a) < 2 || len(b) < 2 {
		return 1
	}
	x, y := slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	var d float64
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		v := min(x[i], y[j])
		for i < len(x) && x[i] == v {
			i++
		}
		for j < len(y) && y[j] == v {
			j++
		}
		d = max(d, math.Abs(float64(i)/float64(len(x))-float64(j)/float64(len(y))))
	}
	en := math.Sqrt(float64(len(x)) * float64(len(y)) / float64(len(x)+len(y)))
	return kolmogorovSF((en + 0.12 + 0.11/en) * d)
}

// kolmogorovSF is P(K > z) for Kolmogorov's distribution:
// 2 Σ (−1)^(j−1) exp(−2 j² z²).
func kolmogorovSF(z float64) float64 {
	if z < 0.27 {
		return 1 // the series converges slowly here, to 1 within 1e-6
	}
	var sum float64
	sign := 1.0
	for j := 1.0; j <= 100; j++ {
		term := sign * math.Exp(-2*j*j*z*z)
		sum += term
		if math.Abs(term) < 1e-12 {
			break
		}
		sign = -sign
	}
	return min(1, max(0, 2*sum))
}

// ChiSquareSF is P(X > x) for X of the χ² distribution with df degrees of
// freedom: the regularized upper incomplete gamma function Q(df/2, x/2).
func ChiSquareSF(x, df float64) float64 {
	if x <= 0 {
		return 1
	}
	return upperGamma(df/2, x/2)
}

// upperGamma is the regularized upper incomplete gamma function Q(a, x),
// by its series below a+1 and its continued fraction above (Numerical
// Recipes, gser and gcf).
func upperGamma(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	front := math.Exp(-x + a*math.Log(x) - lg)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1.0; n < 1e4; n++ {
			term *= x / (a + n)
			sum += term
			if math.Abs(term) < math.Abs(sum)*1e-15 {
				break
			}
		}
		return max(0, 1-front*sum)
	}
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1.0; i < 1e4; i++ {
		an := -i * (i - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		if math.Abs(d*c-1) < 1e-15 {
			break
		}
	}
	return front * h
}
