// Package seeded derives independent random streams from one scenario seed.
//
// Each component (a probe's arrivals, its prompt lengths, …) gets a stream keyed
// by the seed and its own name, so the same seed replays the same choices and
// adding a component never shifts the draws of another.
package seeded

import (
	"hash/fnv"
	"math/rand/v2"
)

// New returns the random stream for component under seed.
func New(seed uint64, component string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(component))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}
