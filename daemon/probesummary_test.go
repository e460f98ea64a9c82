package daemon

import (
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

func TestProbeSummaryWindow(t *testing.T) {
	var s probeSummary
	t0 := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	s.observe(t0, record.OutcomeError)
	s.observe(t0.Add(time.Second), record.OutcomeOK)
	s.observe(t0.Add(2*time.Second), record.OutcomeCancelled) // neither an error nor a request
	s.observe(t0.Add(3*time.Minute), record.OutcomeError)
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
		lastOK, requests, errors := s.snapshot(c.at)
		if requests != c.requests || errors != c.errors || !lastOK.Equal(c.wantLastOK) {
			t.Errorf("at %s: %d requests, %d errors, last success %s; want %d, %d, %s", c.at.Sub(t0), requests, errors, lastOK, c.requests, c.errors, c.wantLastOK)
		}
	}
	// A slot reused after the ring wraps starts from zero.
	s.observe(t0.Add(10*time.Minute), record.OutcomeOK)
	if _, requests, errors := s.snapshot(t0.Add(10 * time.Minute)); requests != 1 || errors != 0 {
		t.Errorf("after the ring wrapped: %d requests, %d errors; want 1, 0", requests, errors)
	}
}

// TestProbeSummaryLeavesOutTheClients: a request lost with its worker, or
// timed across a pause of the client, is neither a request nor an error of
// the target on the landing page.
func TestProbeSummaryLeavesOutTheClients(t *testing.T) {
	var s probeSummary
	s.Observe(&record.Record{Outcome: record.OutcomeError, Reason: record.ReasonWorkerLost})
	s.Observe(&record.Record{Outcome: record.OutcomeError, Reason: record.ReasonTimeout, ClientPaused: time.Second})
	if _, requests, errors := s.snapshot(time.Now()); requests != 0 || errors != 0 {
		t.Errorf("the client's losses counted as %d requests, %d errors; want none", requests, errors)
	}
}
