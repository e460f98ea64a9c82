package prober

import (
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// sendSession sends the first turn of pl, a multi-turn session, and then
// its later turns, each its think time after the turn before ended (under
// user_centric, its turn gap after the turn before was due).
// finished, if set, is told when the last turn ends, or when the schedule
// ended before a later turn was due. The whole session is folded into the
// digest now, so the digest does not depend on how the turns of concurrent
// sessions interleave.
func (r *run) sendSession(pl planned, first record.DigestEntry, scheduled time.Time, capWait time.Duration, finished func(end time.Time)) {
	entries := make([]record.DigestEntry, len(pl.turns))
	for i, t := range pl.turns {
		// Later turns are sent when earlier ones end: like a closed loop's
		// requests, their send times are not part of what a seed reproduces.
		entries[i] = newDigestEntry(pl.seq+1+uint64(i), 0, t.prompt)
		r.probe.sent.Add(entries[i])
	}
	r.sending.Add(1)
	r.inFlight.Go(func() {
		end := r.do(pl.seq, first, pl.req, pl.err, scheduled, capWait, nil)
		var done func(end time.Time)
		at := scheduled
		for i, t := range pl.turns {
			if pl.turnGap > 0 {
				// A user's next turn is due gap after its last was due,
				// at once if that one ended later (AIPerf's
				// max(now, next_send_time + turn_gap)).
				at = at.Add(pl.turnGap)
				if end.After(at) {
					at = end
				}
			} else {
				at = end.Add(t.delay)
			}
			capWait, ok := r.await(at, t.req)
			if !ok {
				r.sending.Done()
				if finished != nil {
					finished(time.Now())
				}
				return
			}
			if i == len(pl.turns)-1 {
				done = finished
				r.sending.Done() // the last turn goes now
			}
			r.rec.Started()
			end = r.do(pl.seq+1+uint64(i), entries[i], t.req, t.err, at, capWait, done)
		}
	})
}

// await waits until a later turn due at at, req, may be sent: its time
// has come (less the dispatch lead) and, under a cap, a slot is free, and
// under a prefill cap a prefill slot. It returns how long the caps held the
// turn past at, and false if the schedule ended first.
func (r *run) await(at time.Time, req *Request) (time.Duration, bool) {
	if !sleepUntil(r.ctx, at.Add(-dispatchLead)) {
		return 0, false
	}
	waited := false
	if r.slots != nil {
		select {
		case r.slots <- struct{}{}:
		default:
			select {
			case r.slots <- struct{}{}:
				waited = true
			case <-r.ctx.Done():
				return 0, false
			}
		}
	}
	w, ok := r.acquirePrefill(req)
	if !ok {
		return 0, false
	}
	if waited || w {
		return max(0, time.Since(at)), true
	}
	return 0, true
}
