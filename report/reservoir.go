package report

import (
	"math"
	"math/rand/v2"

	"github.com/inferprobe/inferprobe/stats"
)

// reservoir keeps a uniform random sample of at most max values (Vitter's
// algorithm R, seeded, so that a run's report does not vary with the clock)
// and the exact count, mean, spread and extremes of all of them. Until more
// than max values come, its statistics are exactly stats.Of's.
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
func (r *reservoir) stats(level float64) stats.Stats {
	s := stats.Of(r.kept, level)
	if r.n > len(r.kept) {
		s.Count, s.Avg, s.Min, s.Max, s.Std = r.n, r.mean, r.lo, r.hi, math.Sqrt(r.m2/float64(r.n))
		s.Sum = r.mean * float64(r.n)
		if s.Intervals != nil {
			s.Intervals.Avg = stats.MeanInterval(s.Count, s.Avg, s.Std, level)
		}
	}
	return s
}
