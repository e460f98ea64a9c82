// Package arrival generates the send times of an open-loop request stream as
// offsets from its start. Callers add each offset to one fixed start instant, so
// waiting never accumulates drift the way chained relative sleeps do.
//
// A process is a renewal process run in operational time and mapped onto real
// time through the cumulative rate (the time-rescaling theorem): gaps of mean 1
// are drawn from the pattern's distribution and summed to u, and the send
// happens at the instant t where Λ(t) = ∫₀ᵗ rate = u. At a steady rate this is
// plain gaps of mean 1/rate; under a ramp or a series the instantaneous rate
// follows the profile exactly, for every pattern, with no rejected draws (which
// thinning would need, and which would not keep gamma gaps gamma-shaped).
package arrival

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/inferprobe/inferprobe/scenarios"
)

// Process yields successive send offsets from the start of a stream.
type Process interface {
	// Next returns the offset of the next send; offsets never decrease.
	Next() time.Duration
}

// New returns the process for an open-loop arrival spec, which must have
// passed scenario validation. rng is used only by random patterns.
func New(a scenarios.Arrival, rng *rand.Rand) (Process, error) {
	var gap func() float64
	switch a.Pattern {
	case scenarios.ArrivalPoisson:
		gap = rng.ExpFloat64
	case scenarios.ArrivalConstant:
		gap = func() float64 { return 1 }
	case scenarios.ArrivalGamma:
		k := a.Smoothness
		if !(k > 0) || math.IsInf(k, 1) {
			return nil, fmt.Errorf("gamma smoothness must be > 0, got %v", k)
		}
		gap = func() float64 { return gammaVariate(rng, k) / k }
	case scenarios.ArrivalConcurrency:
		return nil, fmt.Errorf("pattern %s is closed-loop: its send times follow the responses, not offsets", a.Pattern)
	default:
		return nil, fmt.Errorf("unknown arrival pattern %q", a.Pattern)
	}
	prof, err := newProfile(a)
	if err != nil {
		return nil, err
	}
	return &process{gap: gap, profile: prof}, nil
}

type process struct {
	gap     func() float64 // a gap in operational time, mean 1
	profile *profile
	u       float64 // operational time of the last send; summed in float so rounding does not build up
}

func (p *process) Next() time.Duration {
	p.u += p.gap()
	return seconds(p.profile.invert(p.u))
}

// segment is a stretch of time from at (seconds) over which the rate changes
// linearly: rate at its start, plus slope per second. cum is Λ(at).
type segment struct{ at, rate, slope, cum float64 }

// profile is a piecewise-linear rate; its last segment runs forever at a
// constant rate > 0, so Λ grows without bound and every u has its instant.
type profile struct {
	segs []segment
	i    int // the segment of the last inverted u; u only grows
}

func newProfile(a scenarios.Arrival) (*profile, error) {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	var segs []segment
	switch {
	case len(a.Series) > 0:
		var at, cum float64
		for i, s := range a.Series {
			last := i == len(a.Series)-1
			if !(s.Rate >= 0) || !finite(s.Rate) || last && s.Rate == 0 {
				return nil, fmt.Errorf("series step %d: rate must be >= 0, and > 0 in the last step, got %v", i, s.Rate)
			}
			d := time.Duration(s.Duration).Seconds()
			if !last && !(d > 0) {
				return nil, fmt.Errorf("series step %d: duration must be > 0, got %v", i, s.Duration)
			}
			segs = append(segs, segment{at: at, rate: s.Rate, cum: cum})
			at, cum = at+d, cum+s.Rate*d
		}
	case a.RampOver > 0:
		over := time.Duration(a.RampOver).Seconds()
		if !(a.Rate >= 0) || !finite(a.Rate) || !(a.RampTo > 0) || !finite(a.RampTo) {
			return nil, fmt.Errorf("ramp from %v to %v: rates must be >= 0 and end > 0", a.Rate, a.RampTo)
		}
		segs = []segment{
			{at: 0, rate: a.Rate, slope: (a.RampTo - a.Rate) / over},
			{at: over, rate: a.RampTo, cum: (a.Rate + a.RampTo) / 2 * over},
		}
	default:
		if !(a.Rate > 0) || !finite(a.Rate) {
			return nil, fmt.Errorf("arrival rate must be > 0, got %v", a.Rate)
		}
		segs = []segment{{rate: a.Rate}}
	}
	return &profile{segs: segs}, nil
}

// invert returns the instant t, in seconds, at which Λ(t) = u.
func (p *profile) invert(u float64) float64 {
	// The earliest such instant, so a send due exactly at the end of a step
	// belongs to it; but never inside a pause (rate 0), where Λ is flat.
	for p.i+1 < len(p.segs) && (p.segs[p.i+1].cum < u || p.segs[p.i].rate == 0 && p.segs[p.i].slope == 0) {
		p.i++
	}
	s := p.segs[p.i]
	d := u - s.cum
	switch {
	case d <= 0:
		return s.at
	case s.slope == 0:
		return s.at + d/s.rate
	}
	// Solve slope/2·x² + rate·x = d for x ≥ 0, in the form that does not
	// cancel when slope is small. Inside the segment the discriminant is the
	// squared rate reached, ≥ 0 but for rounding.
	return s.at + 2*d/(s.rate+math.Sqrt(max(0, s.rate*s.rate+2*s.slope*d)))
}

// gammaVariate draws from the gamma distribution of shape k > 0 and scale 1, by
// Marsaglia and Tsang's squeeze method ("A simple method for generating gamma
// variables", 2000); shapes below 1 use their boost: if X ~ Gamma(k+1) and
// U ~ Uniform(0,1], then X·U^(1/k) ~ Gamma(k).
func gammaVariate(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		x := gammaVariate(rng, k+1)
		return x * math.Pow(1-rng.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < x2/2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// seconds converts to a Duration, rounding to the nearest nanosecond so that
// exact schedules (constant at 3/s) do not come out a nanosecond early. An
// offset past the 292 years a Duration holds (a rate like 1e-12) becomes the
// longest one: converted as is, it would wrap negative and be due at once.
func seconds(s float64) time.Duration {
	ns := math.Round(s * float64(time.Second))
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
