package prober

import (
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

// closedLoop keeps a number of requests in flight (pattern concurrency),
// optionally ramped: each one that finishes is replaced at once, and each
// step of a ramp adds or retires one.
type closedLoop struct {
	ramp concurrencyRamp
}

func newClosedLoop(a scenarios.Arrival) *closedLoop {
	c := &closedLoop{ramp: concurrencyRamp{from: a.Concurrency, to: a.Concurrency}}
	if a.RampOver > 0 {
		c.ramp.to, c.ramp.over = int(a.RampTo), time.Duration(a.RampOver)
	}
	return c
}

// offset is 0: a closed loop's send times follow the server's answers, so
// they are not part of what a seed reproduces.
func (*closedLoop) offset(*dataset.Item) time.Duration { return 0 }

// loop schedules a request at the instant its slot opened (the end of the
// request it replaces, or its ramp step), so its lag is the client's reaction
// time, even when the client is late for several steps at once.
func (c *closedLoop) loop(r *run) {
	ctx, ramp, shard := r.ctx, &c.ramp, r.probe.shard
	ended := make(chan time.Time)
	stopped := make(chan struct{})
	defer close(stopped)
	finished := func(end time.Time) {
		select {
		case ended <- end:
		case <-stopped: // Run has stopped sending; nobody counts slots any more
		}
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	// A duration limit ends the loop on time, not at the next slot to open.
	var deadline <-chan time.Time
	if d := r.probe.limit.Duration; d > 0 {
		t := time.NewTimer(time.Until(r.start.Add(d)))
		defer t.Stop()
		deadline = t.C
	}
	inFlight, steps, opened := 0, 0, r.start
	pl := <-r.planned
	for {
		for ; inFlight < shard.Share(ramp.level(steps)); inFlight++ {
			if pl.stop {
				r.fail(pl)
				return
			}
			// The prefill cap holds a request back past its slot's opening:
			// that is cap wait, not the client's reaction time.
			waited, ok := r.acquirePrefill(pl.req)
			if !ok {
				return
			}
			if ctx.Err() != nil || r.probe.limit.reached(pl.seq, time.Since(r.start)) {
				if pl.req != nil {
					pl.req.FirstToken() // frees the slot it will not use
				}
				return
			}
			var capWait time.Duration
			if waited {
				capWait = max(0, time.Since(opened))
			}
			r.send(pl, opened, capWait, finished)
			pl = <-r.planned
		}
		var step <-chan time.Time
		if steps < ramp.steps() {
			timer.Reset(time.Until(r.start.Add(ramp.at(steps + 1))))
			step = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			return
		case opened = <-ended:
			inFlight--
		case <-step:
			steps++
			opened = r.start.Add(ramp.at(steps))
		}
	}
}

// concurrencyRamp is the closed loop's whole number of requests in flight:
// from, moving one step at a time to to, the steps spread evenly over over.
type concurrencyRamp struct {
	from, to int
	over     time.Duration
}

// steps is the number of steps the ramp takes.
func (c *concurrencyRamp) steps() int { return max(c.to-c.from, c.from-c.to) }

// level is the number in flight after step steps.
func (c *concurrencyRamp) level(steps int) int {
	if c.to < c.from {
		return c.from - steps
	}
	return c.from + steps
}

// at is the time from the start at which step j (from 1) is taken.
func (c *concurrencyRamp) at(j int) time.Duration {
	return time.Duration(float64(c.over) * float64(j) / float64(c.steps()))
}
