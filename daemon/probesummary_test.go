package daemon

import (
	"math"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

func TestProbeSummaryWindow(t *testing.T) {
	var s probeSummary
	t0 := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	s.observe(t0, record.OutcomeError, 0, 0)
	s.observe(t0.Add(time.Second), record.OutcomeOK, 0, 0)
	s.observe(t0.Add(2*time.Second), record.OutcomeCancelled, 0, 0) // neither an error nor a request
	s.observe(t0.Add(3*time.Minute), record.OutcomeError, 0, 0)
	for _, c := range []struct {
		at               time.Time
		requests, errors int
		wantLastOK       time.Time
	}{
		{t0.Add(4 * time.Minute), 3, 2, t0.Add(time.Second)},
		// Five minutes on, the first slot has left the window; the last success stays.
		{t0.Add(5*time.Minute + 10*time.Second), 1, 1, t0.Add(time.Second)},
		{t0.Add(9 * time.Minute), 0, 0, t0.Add(time.Second)},
	} {
		v := s.snapshot(c.at)
		if v.Requests != c.requests || v.Errors != c.errors || !v.LastOK.Equal(c.wantLastOK) {
			t.Errorf("at %s: %d requests, %d errors, last success %s; want %d, %d, %s", c.at.Sub(t0), v.Requests, v.Errors, v.LastOK, c.requests, c.errors, c.wantLastOK)
		}
	}
	// A slot reused after the ring wraps starts from zero.
	s.observe(t0.Add(10*time.Minute), record.OutcomeOK, 0, 0)
	if v := s.snapshot(t0.Add(10 * time.Minute)); v.Requests != 1 || v.Errors != 0 {
		t.Errorf("after the ring wrapped: %d requests, %d errors; want 1, 0", v.Requests, v.Errors)
	}
}

// TestProbeSummaryLeavesOutTheClients: a request lost with its worker, or
// timed across a pause of the client, is neither a request nor an error of
// the target on the landing page.
func TestProbeSummaryLeavesOutTheClients(t *testing.T) {
	var s probeSummary
	s.Observe(&record.Record{Outcome: record.OutcomeError, Reason: record.ReasonWorkerLost})
	s.Observe(&record.Record{Outcome: record.OutcomeError, Reason: record.ReasonTimeout, ClientPaused: time.Second})
	if v := s.snapshot(time.Now()); v.Requests != 0 || v.Errors != 0 {
		t.Errorf("the client's losses counted as %d requests, %d errors; want none", v.Requests, v.Errors)
	}
}

// TestProbeSummaryLatencies: the TTFT and ITL percentiles are those of the successes within
// the window and among the last recentLatencies; failures and requests without the timing
// add nothing to them.
func TestProbeSummaryLatencies(t *testing.T) {
	var s probeSummary
	t0 := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	// An old success, out of the window by the time of the snapshot.
	s.observe(t0, record.OutcomeOK, 10*time.Second, time.Second)
	at := t0.Add(summaryWindow)
	for i := 1; i <= 100; i++ { // TTFT 1..100 ms, ITL 10 ms
		s.observe(at, record.OutcomeOK, time.Duration(i)*ms, 10*ms)
	}
	s.observe(at, record.OutcomeError, time.Hour, time.Hour) // a failure's timings count in neither
	s.observe(at, record.OutcomeOK, 0, 0)                    // no stream: no TTFT, no ITL
	s.observe(at, record.OutcomeOK, 50*ms, 0)                // one chunk: a TTFT, no ITL
	v := s.snapshot(at.Add(time.Second))
	if v.TTFT.Count != 101 || v.ITL.Count != 100 {
		t.Fatalf("%d TTFTs and %d ITLs; want 101 and 100", v.TTFT.Count, v.ITL.Count)
	}
	if got := v.TTFT.P50; math.Abs(got-.050) > 1e-6 {
		t.Errorf("TTFT p50 = %v, want 50 ms", got)
	}
	if got := v.TTFT.P99; got < .0989 || got > .1001 { // float32 storage
		t.Errorf("TTFT p99 = %v, want 99-100 ms", got)
	}
	if got := v.ITL.P50; math.Abs(got-.010) > 1e-6 {
		t.Errorf("ITL p50 = %v, want 10 ms", got)
	}
	// Past the ring's size, only the newest count.
	for range recentLatencies {
		s.observe(at.Add(time.Second), record.OutcomeOK, 200*ms, 20*ms)
	}
	if v := s.snapshot(at.Add(2 * time.Second)); v.TTFT.Count != recentLatencies || math.Abs(v.TTFT.P50-.2) > 1e-6 || math.Abs(v.ITL.P99-.02) > 1e-6 {
		t.Errorf("after %d more: %d TTFTs, p50 %v, ITL p99 %v; want %d at 200 ms and 20 ms", recentLatencies, v.TTFT.Count, v.TTFT.P50, v.ITL.P99, recentLatencies)
	}
}
