package stats

import (
	"encoding/json"
	"math"
	"sort"
)

// DefaultLevel is the confidence level of intervals and tests unless one
// is given: AIPerf's --confidence-level default.
const DefaultLevel = 0.95

// Interval is a confidence interval. A side the samples cannot bound at
// the level (too few of them for an extreme percentile) is infinite, so
// that it is never shown as a number that looks exact.
type Interval struct {
	Low, High float64
}

// Bounded says both sides are finite.
func (i Interval) Bounded() bool { return !math.IsInf(i.Low, 0) && !math.IsInf(i.High, 0) }

// Scaled is i in another unit.
func (i Interval) Scaled(k float64) Interval { return Interval{i.Low * k, i.High * k} }

// MarshalJSON writes [low, high], null for an unbounded side: JSON has no
// infinity.
func (i Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]*float64{finite(i.Low), finite(i.High)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (i *Interval) UnmarshalJSON(b []byte) error {
	var v [2]*float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	i.Low, i.High = math.Inf(-1), math.Inf(1)
	if v[0] != nil {
		i.Low = *v[0]
	}
	if v[1] != nil {
		i.High = *v[1]
	}
	return nil
}

func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

// Intervals are a distribution's confidence intervals at Level: Avg's and
// each percentile's.
type Intervals struct {
	Level                                     float64  `json:"level"`
	Avg                                       Interval `json:"avg"`
	P1, P5, P10, P25, P50, P75, P90, P95, P99 Interval
}

func intervalsOf(sorted []float64, avg, std float64, level float64) *Intervals {
	q := func(p float64) Interval { return PercentileInterval(sorted, p, level) }
	return &Intervals{
		Level: level, Avg: MeanInterval(len(sorted), avg, std, level),
		P1: q(.01), P5: q(.05), P10: q(.10), P25: q(.25), P50: q(.50), P75: q(.75), P90: q(.90), P95: q(.95), P99: q(.99),
	}
}

// PercentileInterval is the distribution-free confidence interval at level
// for the p (0 to 1) quantile of the population sorted was drawn from: the
// order statistics X(l) ≤ X(u) between which the quantile lies with
// probability at least level, as the number of samples below it is
// binomial(n, p) whatever the distribution. The tails are equal (each at
// most (1−level)/2). A side is infinite when no order statistic bounds it:
// p99 of fewer than 368 samples has no upper bound at 95 % (MinSamples).
// It assumes independent samples from one distribution.
func PercentileInterval(sorted []float64, p, level float64) Interval {
	n := len(sorted)
	tail := (1 - level) / 2
	out := Interval{math.Inf(-1), math.Inf(1)}
	if n == 0 {
		return out
	}
	// l: the largest rank with P(B ≤ l−1) ≤ tail, so P(X(l) > ξp) ≤ tail.
	if l := sort.Search(n+1, func(l int) bool { return binomialCDF(l, n, p) > tail }); l >= 1 {
		out.Low = sorted[l-1]
	}
	// u: the smallest rank with P(B ≥ u) ≤ tail, so P(X(u) < ξp) ≤ tail.
	if u := sort.Search(n+1, func(u int) bool { return 1-binomialCDF(u-1, n, p) <= tail }); u >= 1 && u <= n {
		out.High = sorted[u-1]
	}
	return out
}

// MinSamples is how many samples PercentileInterval needs to bound the p
// quantile on both sides at level: a side is bounded once the chance that
// every sample falls on the other side of it is at most (1−level)/2.
func MinSamples(p, level float64) int {
	tail := math.Log((1 - level) / 2)
	return int(math.Ceil(tail / math.Log(max(p, 1-p))))
}

// MeanInterval is Student's t interval at level for the mean of n samples
// of mean avg and population standard deviation std; unbounded below two
// samples. It assumes independent samples; by the central limit theorem it
// holds for skewed latencies once n is in the tens.
func MeanInterval(n int, avg, std, level float64) Interval {
	if n < 2 {
		return Interval{math.Inf(-1), math.Inf(1)}
	}
	se := std * math.Sqrt(float64(n)/float64(n-1)) / math.Sqrt(float64(n))
	h := StudentQuantile(1-(1-level)/2, float64(n-1)) * se
	return Interval{avg - h, avg + h}
}

// MeanIntervalOf is MeanInterval of samples.
func MeanIntervalOf(samples []float64, level float64) Interval {
	s := Of(samples, 0)
	return MeanInterval(s.Count, s.Avg, s.Std, level)
}

// binomialCDF is P(B ≤ k) for B binomial(n, p).
func binomialCDF(k, n int, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	}
	return regularizedBeta(float64(n-k), float64(k+1), 1-p)
}

// StudentCDF is P(T ≤ t) for T of Student's t distribution with df degrees
// of freedom.
func StudentCDF(t, df float64) float64 {
	tail := regularizedBeta(df/2, 0.5, df/(df+t*t)) / 2
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// StudentQuantile is the t with StudentCDF(t, df) = q, by bisection.
func StudentQuantile(q, df float64) float64 {
	if q < 0.5 {
		return -StudentQuantile(1-q, df)
	}
	lo, hi := 0.0, 1.0
	for StudentCDF(hi, df) < q {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if StudentCDF(mid, df) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// NormalCDF is the standard normal distribution function.
func NormalCDF(z float64) float64 { return math.Erfc(-z/math.Sqrt2) / 2 }

// NormalQuantile is the z with NormalCDF(z) = q.
func NormalQuantile(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

// regularizedBeta is the regularized incomplete beta function I_x(a, b),
// by its continued fraction (Numerical Recipes, betacf), which converges
// in about √max(a, b) steps.
func regularizedBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

func betaFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1.0; m < 1e6; m++ {
		m2 := 2 * m
		for _, num := range []float64{m * (b - m) * x / ((a + m2 - 1) * (a + m2)), -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			h *= d * c
		}
		if math.Abs(d*c-1) < 1e-15 {
			break
		}
	}
	return h
}
