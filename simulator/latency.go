package simulator

import (
	"math"
	"math/rand/v2"
	"time"
)

// sampler draws durations around a mean. Its parameters are worked out
// once per request so that a draw per token is a few float operations.
type sampler struct {
	dist      string
	mean      float64 // nanoseconds
	sd        float64 // normal: standard deviation
	mu, sigma float64 // lognormal: parameters of the underlying normal
}

func newSampler(dist string, mean time.Duration, jitter float64) sampler {
	s := sampler{dist: dist, mean: float64(mean)}
	if mean <= 0 || jitter == 0 {
		s.dist = Constant
	}
	switch s.dist {
	case Normal:
		s.sd = jitter * s.mean
	case LogNormal:
		// Chosen so that the distribution's mean is the mean asked for and
		// its stddev/mean is jitter.
		s.sigma = math.Sqrt(math.Log1p(jitter * jitter))
		s.mu = math.Log(s.mean) - s.sigma*s.sigma/2
	}
	return s
}

func (s sampler) draw(r *rand.Rand) time.Duration {
	switch s.dist {
	case Normal:
		// Clamped at 0: a latency cannot be negative. With a large jitter
		// this raises the mean a little.
		return time.Duration(max(0, s.mean+s.sd*r.NormFloat64()))
	case LogNormal:
		return time.Duration(math.Exp(s.mu + s.sigma*r.NormFloat64()))
	default:
		return time.Duration(s.mean)
	}
}
