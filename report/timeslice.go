package report

import (
	"iter"
	"time"
)

// A Timeslice is one window of a run cut into windows of a fixed length,
// AIPerf's --slice-duration: the requests sent in it, summarised over it.
type Timeslice struct {
	Start, End time.Time
	// Complete is false for the last window when the run ended inside it:
	// its End is then the run's end.
	Complete bool
	Summary  Summary
}

// Timeslices cuts reqs into windows of length d as AIPerf 0.13's
// accumulator does: from the first request's send to the last request's
// end, each request in the window its send falls in, windows without a
// request left out, the last window ending at the run's end. Each window's
// throughputs are over the window. slo counts good requests, as the run's.
func Timeslices(reqs []RequestRecord, d time.Duration, slo SLO) []Timeslice {
	var first, last time.Time
	for _, q := range reqs {
		if q.Sent.IsZero() {
			continue // never sent: in no window
		}
		if first.IsZero() || q.Sent.Before(first) {
			first = q.Sent
		}
		if end := q.Sent.Add(q.Duration); end.After(last) {
			last = end
		}
		if q.Sent.After(last) {
			last = q.Sent
		}
	}
	if first.IsZero() || d <= 0 {
		return nil
	}
	n := int(last.Sub(first)/d) + 1
	windows := make([]*Report, n)
	for i := range reqs {
		q := &reqs[i]
		if q.Sent.IsZero() {
			continue
		}
		k := int(q.Sent.Sub(first) / d)
		if windows[k] == nil {
			windows[k] = NewReport(WithSLO(slo))
		}
		windows[k].add(&q.Contribution, q.Sent, q.Scheduled, keptGaps(q.Gaps))
	}
	var out []Timeslice
	for k, w := range windows {
		if w == nil {
			continue
		}
		start, end := first.Add(time.Duration(k)*d), first.Add(time.Duration(k+1)*d)
		ts := Timeslice{Start: start, End: end, Complete: !end.After(last)}
		if !ts.Complete {
			ts.End = last
		}
		ts.Summary = w.Summary()
		ts.Summary.span(ts.Start, ts.End)
		out = append(out, ts)
	}
	return out
}

// keptGaps are a request's kept inter-chunk gaps (RequestRecord.Gaps, in
// ms) as durations.
func keptGaps(ms []float32) iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		for _, g := range ms {
			if !yield(time.Duration(float64(g) * float64(time.Millisecond))) {
				return
			}
		}
	}
}
