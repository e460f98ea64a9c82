package prober

import (
	"time"

	"github.com/inferprobe/inferprobe/prober/arrival"
)

// openLoop sends at the times of an arrival process (patterns poisson,
// constant and gamma), whatever the server's answers.
type openLoop struct {
	arrivals arrival.Process
}

func (o openLoop) offset(time.Duration) time.Duration { return o.arrivals.Next() }

func (openLoop) loop(r *run) { r.sendAtOffsets() }

// sendAtOffsets sends each request at start + its offset: the loop of an
// open loop and of a replay. With a cap, a request whose time has come waits
// for a free slot.
func (r *run) sendAtOffsets() {
	ctx := r.ctx
	if n := r.probe.maxConcurrency; n > 0 {
		r.slots = make(chan struct{}, n)
	}
	slots := r.slots
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	// capFreed is when the latest wait for a slot ended. A request due before
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
		if !sleepUntil(ctx, timer, at.Add(-dispatchLead)) {
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
		r.send(pl, at, max(0, capFreed.Sub(at)), nil)
	}
}
