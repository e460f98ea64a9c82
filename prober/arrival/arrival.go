// Package arrival generates the send times of a request stream as offsets from
// its start. Callers add each offset to one fixed start instant, so waiting never
// accumulates drift the way chained relative sleeps do.
package arrival

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Process yields successive send offsets from the start of a stream.
type Process interface {
	// Next returns the offset of the next send; offsets never decrease.
	Next() time.Duration
}

// New returns the process for pattern at rate requests per second. rng is only
// used by random patterns.
func New(pattern string, rate float64, rng *rand.Rand) (Process, error) {
	if !(rate > 0) {
		return nil, fmt.Errorf("arrival rate must be > 0, got %v", rate)
	}
	switch pattern {
	case "poisson":
		return &poisson{rate: rate, rng: rng}, nil
	case "constant":
		return &constant{gap: 1 / rate}, nil
	}
	return nil, fmt.Errorf("unknown arrival pattern %q (want poisson or constant)", pattern)
}

// poisson has exponentially distributed gaps: memoryless arrivals, like many
// independent users.
type poisson struct {
	rate float64
	rng  *rand.Rand
	at   float64 // seconds; summed in float so rounding does not build up
}

func (p *poisson) Next() time.Duration {
	p.at += p.rng.ExpFloat64() / p.rate
	return seconds(p.at)
}

// constant sends at exact 1/rate intervals.
type constant struct {
	gap float64
	n   float64
}

func (c *constant) Next() time.Duration {
	c.n++
	return seconds(c.n * c.gap)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
