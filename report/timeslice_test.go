package report

import (
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// TestTimeslices: a request falls in the window its send falls in, the
// windows start at the first send and end at the last request's end, an
// empty window is left out, and the last, cut by the run's end, is not
// complete; each window's throughput is over its own length.
func TestTimeslices(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewReport()
	for i, sent := range []time.Duration{0, 500 * time.Millisecond, time.Second, 3200 * time.Millisecond} {
		r.Observe(&record.Record{Seq: uint64(i), Scheduled: at.Add(sent), Sent: at.Add(sent), Duration: 300 * time.Millisecond,
			Chunks: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, OutputTokens: 2, Status: 200})
	}
	slices := Timeslices(r.Requests(), time.Second, SLO{})
	want := []struct {
		start, end time.Duration
		complete   bool
		ok         int
		throughput float64
	}{
		{0, time.Second, true, 2, 2},
		{time.Second, 2 * time.Second, true, 1, 1},
		{3 * time.Second, 3500 * time.Millisecond, false, 1, 2},
	}
	if len(slices) != len(want) {
		t.Fatalf("%d slices, want %d: %+v", len(slices), len(want), slices)
	}
	for i, w := range want {
		s := slices[i]
		if !s.Start.Equal(at.Add(w.start)) || !s.End.Equal(at.Add(w.end)) || s.Complete != w.complete || s.Summary.OK != w.ok || s.Summary.RequestThroughput != w.throughput {
			t.Errorf("slice %d: %s..%s complete %v, %d ok, %.2f req/s; want %s..%s %v, %d, %.2f", i,
				s.Start.Sub(at), s.End.Sub(at), s.Complete, s.Summary.OK, s.Summary.RequestThroughput, w.start, w.end, w.complete, w.ok, w.throughput)
		}
		if s.Summary.TTFT.Count != w.ok || s.Summary.InterChunk.Count != w.ok {
			t.Errorf("slice %d: %d TTFTs and %d inter-chunk gaps, want one each a request", i, s.Summary.TTFT.Count, s.Summary.InterChunk.Count)
		}
	}
	if Timeslices(nil, time.Second, SLO{}) != nil {
		t.Error("slices of no requests")
	}
}
