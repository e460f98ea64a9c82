package prober

import (
	"time"

	"github.com/inferprobe/inferprobe/prober/arrival"
	"github.com/inferprobe/inferprobe/prober/dataset"
)

// openLoop sends at the times of an arrival process (patterns poisson,
// constant and gamma), whatever the server's answers.
type openLoop struct {
	arrivals arrival.Process
}

func (o openLoop) offset(*dataset.Item) time.Duration { return o.arrivals.Next() }

func (openLoop) loop(r *run) { r.sendAtOffsets() }

// sendAtOffsets sends each request at start + its offset: the loop of an
// open loop and of a replay. With a cap, a request whose time has come waits
// for a free slot.
func (r *run) sendAtOffsets() {
	ctx := r.ctx
	if n := r.probe.maxConcurrency; n > 0 {
		r.slots = make(chan struct{}, n)
		stop := r.rampCap(n)
		defer stop()
	}
	slots := r.slots
	// capFreed is when the latest wait for a slot (or prefill slot) ended. A request due before
	// then was held back by the cap, by its own wait or by the requests queued
	// ahead of it, so that time is its cap wait and not client lag.
	var capFreed time.Time
	for {
		pl := <-r.planned
		if pl.stop {
			r.fail(pl)
			return
		}
		if r.probe.limit.reached(pl.seq, pl.offset) {
			return
		}
		at := r.start.Add(pl.offset)
		if !sleepUntil(ctx, at.Add(-dispatchLead)) {
			return
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
			default:
				select {
				case slots <- struct{}{}:
					capFreed = time.Now()
				case <-ctx.Done():
					return
				}
			}
		}
		// The prefill cap holds a request as the cap does.
		switch waited, ok := r.acquirePrefill(pl.req); {
		case !ok:
			return
		case waited:
			capFreed = time.Now()
		}
		r.send(pl, at, max(0, capFreed.Sub(at)), nil)
	}
}

// rampCap makes the cap of n slots rise from 1 to n over the probe's
// capRampOver, one slot at a time at evenly spread steps, as AIPerf ramps
// its concurrency limit: the slots not yet open are held by the ramp and
// given back at each step. A request held back by the ramp is held by the
// cap, so its wait is cap wait, not schedule lag. stop ends the ramp.
func (r *run) rampCap(n int) (stop func()) {
	return rampSlots(r.slots, r.start, n, r.probe.capRampOver)
}

// rampSlots opens the n slots of slots (empty) one at a time over over
// from start, as rampCap says; the prefill cap ramps the same way.
func rampSlots(slots chan struct{}, start time.Time, n int, over time.Duration) (stop func()) {
	ramp := concurrencyRamp{from: 1, to: n, over: over}
	closed := ramp.steps()
	if ramp.over <= 0 || closed == 0 {
		return func() {}
	}
	for range closed {
		slots <- struct{}{}
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for j := 1; j <= closed; j++ {
			timer.Reset(time.Until(start.Add(ramp.at(j))))
			select {
			case <-done:
				return
			case <-timer.C:
				<-slots
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}
