package daemon

import (
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/scenarios"
)

// TestStepSpec: a search step runs the burst at its concurrency, with its
// smooth_isotonic warm-up in place of the burst's warmup (on the
// coordinator and, from the clusterStep it is sent, on every peer), and
// the burst's own warmup when the step has none; the burst is left as
// configured.
func TestStepSpec(t *testing.T) {
	spec := &burstSpec{burst: scenarios.Burst{Warmup: scenarios.Warmup{Requests: 5}}}
	at := stepSpec(spec, clusterStep{Concurrency: 8, Warmup: time.Minute})
	if at.burst.Arrival.Concurrency != 8 || at.burst.Warmup != (scenarios.Warmup{Duration: scenarios.Duration(time.Minute)}) {
		t.Errorf("step with a warm-up: concurrency %d, warmup %+v; want 8 and 60s alone", at.burst.Arrival.Concurrency, at.burst.Warmup)
	}
	if at := stepSpec(spec, clusterStep{Concurrency: 4}); at.burst.Warmup != (scenarios.Warmup{Requests: 5}) {
		t.Errorf("step without one: warmup %+v, want the burst's", at.burst.Warmup)
	}
	if spec.burst.Arrival.Concurrency != 0 || spec.burst.Warmup != (scenarios.Warmup{Requests: 5}) {
		t.Errorf("the burst changed: %+v", spec.burst)
	}
}
