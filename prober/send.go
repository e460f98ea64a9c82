package prober

import (
	"context"
	"time"
)

// send starts pl's request, scheduled at scheduled and held capWait by the
// cap, and then the later turns of its session, each its think time after
// the turn before ended. finished, if set, is told when the last of them
// ends (or when the schedule ended before a later turn was due), before that
// request is recorded. The whole session is folded into the digest now, so
// the digest does not depend on how the turns of concurrent sessions
// interleave.
func (r *run) send(pl planned, scheduled time.Time, capWait time.Duration, finished func(end time.Time)) {
	r.rec.Started()
	r.probe.sent.add(pl.seq, pl.offset, pl.prompt)
	for i, t := range pl.turns {
		// Later turns are sent when earlier ones end: like a closed loop's
		// requests, their send times are not part of what a seed reproduces.
		r.probe.sent.add(pl.seq+1+uint64(i), 0, t.prompt)
	}
	if len(pl.turns) > 0 {
		r.sending.Add(1)
	}
	r.inFlight.Go(func() {
		done := finished
		if len(pl.turns) > 0 {
			done = nil
		}
		end := r.do(pl.seq, pl.req, pl.err, scheduled, capWait, pl.cancelAfter, done)
		if len(pl.turns) == 0 {
			return
		}
		timer := time.NewTimer(time.Hour)
		timer.Stop()
		defer timer.Stop()
		for i, t := range pl.turns {
			at := end.Add(t.delay)
			capWait, ok := r.await(timer, at)
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
			end = r.do(pl.seq+1+uint64(i), t.req, t.err, at, capWait, t.cancelAfter, done)
		}
	})
}

// await waits until a later turn due at at may be sent: its time has come
// (less the dispatch lead) and, under a cap, a slot is free. It returns how
// long the cap held the turn past at, and false if the schedule ended first.
func (r *run) await(timer *time.Timer, at time.Time) (time.Duration, bool) {
	if !sleepUntil(r.ctx, timer, at.Add(-dispatchLead)) {
		return 0, false
	}
	if r.slots == nil {
		return 0, true
	}
	select {
	case r.slots <- struct{}{}:
		return 0, true
	default:
	}
	select {
	case r.slots <- struct{}{}:
		return max(0, time.Since(at)), true
	case <-r.ctx.Done():
		return 0, false
	}
}

// do runs one request, cancelled cancelAfter after scheduled when that is
// set, and records it; under a cap it then frees the slot the request held.
// done, if set, is told when the request ended, before it is recorded. do
// returns when the request ended.
func (r *run) do(seq uint64, req *Request, err error, scheduled time.Time, capWait, cancelAfter time.Duration, done func(end time.Time)) time.Time {
	var out *Record
	if err != nil {
		// Unreachable after NewProbe's check, but a request is never lost silently.
		out = &Record{Seq: seq, Scheduled: scheduled, Sent: time.Now(), FirstOutput: -1}
		out.fail(ReasonProtocol, 0, err)
	} else {
		req.Seq, req.Scheduled = seq, scheduled
		ctx := r.reqCtx
		if cancelAfter > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			// Cancelled as a user would: from the request's scheduled send,
			// and counted as outcome cancelled, not as an error.
			stop := time.AfterFunc(time.Until(scheduled.Add(cancelAfter)), cancel)
			defer stop.Stop()
			defer cancel()
		}
		out = r.exec.Do(ctx, r.probe.Target, req)
	}
	end := time.Now()
	if r.slots != nil {
		<-r.slots
	}
	if done != nil {
		done(end)
	}
	out.CapWait = capWait
	r.rec.Observe(out)
	return end
}

// fail records that the dataset could not go on; the probe then stops
// sending.
func (r *run) fail(pl planned) {
	r.rec.Started()
	now := time.Now()
	out := &Record{Seq: pl.seq, Scheduled: now, Sent: now, FirstOutput: -1}
	out.fail(ReasonDataset, 0, pl.err)
	r.rec.Observe(out)
}
