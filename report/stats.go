package report

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Stats summarises one metric's samples. Std is the population standard
// deviation and percentiles interpolate linearly between closest ranks, as
// numpy's defaults (and so AIPerf) do.
type Stats struct {
	Count int     `json:"count"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Std   float64 `json:"std"`
	Sum   float64 `json:"sum"`
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
}

// StatsOf is the exact Stats of samples.
func StatsOf(samples []float64) Stats {
	if len(samples) == 0 {
		return Stats{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum float64
	for _, v := range s {
		sum += v
	}
	avg := sum / float64(len(s))
	var sq float64
	for _, v := range s {
		sq += (v - avg) * (v - avg)
	}
	q := func(p float64) float64 { return Percentile(s, p) }
	return Stats{
		Count: len(s), Avg: avg, Min: s[0], Max: s[len(s)-1], Std: math.Sqrt(sq / float64(len(s))), Sum: sum,
		P1: q(.01), P5: q(.05), P10: q(.10), P25: q(.25), P50: q(.50), P75: q(.75), P90: q(.90), P95: q(.95), P99: q(.99),
	}
}

// Percentile is the p (0 to 1) percentile of sorted, interpolated linearly
// between closest ranks as numpy's default is.
func Percentile(sorted []float64, p float64) float64 {
	pos := p * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}

// reservoir keeps a uniform random sample of at most max values (Vitter's
// algorithm R, seeded, so that a run's report does not vary with the clock)
// and the exact count, mean, spread and extremes of all of them. Until more
// than max values come, its statistics are exactly StatsOf's.
type reservoir struct {
	max      int
	kept     []float64
	n        int
	mean, m2 float64 // Welford's running mean and sum of squared deviations
	lo, hi   float64
	rng      *rand.Rand
}

func newReservoir(max int) reservoir {
	return reservoir{max: max, rng: rand.New(rand.NewPCG(1, 2))}
}

func (r *reservoir) add(v float64) {
	r.n++
	if r.n == 1 {
		r.lo, r.hi = v, v
	}
	r.lo, r.hi = min(r.lo, v), max(r.hi, v)
	d := v - r.mean
	r.mean += d / float64(r.n)
	r.m2 += d * (v - r.mean)
	switch {
	case len(r.kept) < r.max:
		r.kept = append(r.kept, v)
	case r.max > 0:
		if j := r.rng.IntN(r.n); j < r.max {
			r.kept[j] = v
		}
	}
}

// stats are exact while every value is kept; after that the percentiles
// come from the sample and the rest stays exact.
func (r *reservoir) stats() Stats {
	s := StatsOf(r.kept)
	if r.n > len(r.kept) {
		s.Count, s.Avg, s.Min, s.Max, s.Std = r.n, r.mean, r.lo, r.hi, math.Sqrt(r.m2/float64(r.n))
		s.Sum = r.mean * float64(r.n)
	}
	return s
}
