package prober

import (
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
)

// send starts pl's request, scheduled at scheduled and held capWait by the
// cap, and then the later turns of its session (see sendSession). finished,
// if set, is told when the last of them ends, before that request is
// recorded.
func (r *run) send(pl planned, scheduled time.Time, capWait time.Duration, finished func(end time.Time)) {
	r.rec.Started()
	r.probe.started.Store(pl.item + 1) // the loops send in order, from one goroutine
	entry := newDigestEntry(pl.seq, pl.offset, pl.prompt)
	r.probe.sent.Add(entry)
	if len(pl.turns) > 0 {
		r.sendSession(pl, entry, scheduled, capWait, finished)
		return
	}
	r.inFlight.Go(func() {
		r.do(pl.seq, entry, pl.req, pl.err, scheduled, capWait, finished)
	})
}

// newDigestEntry is the digest entry of request seq, planned at offset
// with prompt p.
func newDigestEntry(seq uint64, offset time.Duration, p dataset.Prompt) record.DigestEntry {
	text := p.Text
	if p.Media != nil { // the same text with other images is another request
		text += "\x00" + p.Media.Key
	}
	return record.NewDigestEntry(seq, offset, p.InputTokens, p.OutputTokens, text)
}

// do runs one request, folded into the digest as entry, and records it;
// under a cap it then frees the slot the request held. done, if set, is
// told when the request ended, before it is recorded. do returns when the
// request ended.
func (r *run) do(seq uint64, entry record.DigestEntry, req *Request, err error, scheduled time.Time, capWait time.Duration, done func(end time.Time)) time.Time {
	var out *record.Record
	if err != nil {
		// Unreachable after NewProbe's check, but a request is never lost silently.
		out = record.Unsent(seq, r.probe.requestID(seq), scheduled, record.OutcomeError, record.ReasonProtocol, err.Error())
	} else {
		req.Seq, req.ID, req.Scheduled = seq, r.probe.requestID(seq), scheduled
		out = r.exec.Do(r.reqCtx, r.probe.Target, req)
		out.PromptTokens, out.Session, out.Body = req.InputTokens, req.Session, req.Body
		out.Images, out.AudioSeconds, out.URL = req.Images, req.AudioSeconds, req.URL
	}
	end := time.Now()
	if req != nil {
		req.FirstToken() // a request that ended without one frees its prefill slot now
	}
	if r.slots != nil {
		<-r.slots
	}
	if done != nil {
		done(end)
	}
	out.CapWait, out.Digest, out.Run = capWait, entry, r.probe.run
	if !out.Sent.IsZero() {
		// This process's pauses: the worker's came with the record (in
		// process, the executor is this process).
		out.ClientPaused += ClientPaused(scheduled, out.Sent.Add(out.Duration))
	}
	r.rec.Observe(out)
	return end
}

// fail records that the dataset could not go on; the probe then stops
// sending.
func (r *run) fail(pl planned) {
	r.rec.Started()
	// Nothing scheduled it: the dataset failed as its time came.
	rec := record.Unsent(pl.seq, r.probe.requestID(pl.seq), time.Now(), record.OutcomeError, record.ReasonDataset, pl.err.Error())
	rec.Run = r.probe.run
	r.rec.Observe(rec)
}
