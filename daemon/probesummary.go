package daemon

import (
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// The landing page's error ratio is over summaryWindow, counted in slots of summarySlot so
// that a probe's summary is a fixed few hundred bytes at any request rate.
const (
	summaryWindow = 5 * time.Minute
	summarySlot   = 10 * time.Second
	summarySlots  = int(summaryWindow / summarySlot)
)

// probeSummary is what the landing page says of one probe: when a request last succeeded,
// and how many ended, and in error, over the last five minutes. Cancelled requests (a
// reload, a shutdown, a cancellation the scenario asks for) count in neither.
type probeSummary struct {
	mu     sync.Mutex
	lastOK time.Time
	slots  [summarySlots]summaryCount
}

type summaryCount struct {
	slot             int64 // Unix time / summarySlot; the counts are of that slot only
	requests, errors int
}

func (*probeSummary) Started() {}

func (s *probeSummary) Observe(rec *record.Record) {
	if rec.Reason.ClientLoss() || rec.ClientPaused > 0 {
		return // the client's loss or pause: neither a request nor an error of the target
	}
	s.observe(time.Now(), rec.Outcome)
}

func (s *probeSummary) observe(now time.Time, outcome record.Outcome) {
	if outcome == record.OutcomeCancelled {
		return
	}
	slot := now.UnixNano() / int64(summarySlot)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &s.slots[slot%int64(summarySlots)]
	if c.slot != slot {
		*c = summaryCount{slot: slot}
	}
	c.requests++
	if outcome == record.OutcomeError {
		c.errors++
	} else {
		s.lastOK = now
	}
}

// snapshot returns the last success (zero if none) and the requests and errors of the
// slots that lie within summaryWindow of now.
func (s *probeSummary) snapshot(now time.Time) (lastOK time.Time, requests, errors int) {
	oldest := now.Add(-summaryWindow).UnixNano()/int64(summarySlot) + 1
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.slots {
		if c.slot >= oldest {
			requests += c.requests
			errors += c.errors
		}
	}
	return s.lastOK, requests, errors
}
