package daemon

import (
	"slices"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/stats"
)

// The landing page's error ratio is over summaryWindow, counted in slots of summarySlot so
// that a probe's counts are a fixed few hundred bytes at any request rate. Its latencies are
// those of the last recentLatencies successful requests within the window: a fixed 32 KiB
// per probe, enough for a p99 (about 20 values above it), and the window then reaches back
// 40 s at 50 requests/s.
const (
	summaryWindow   = 5 * time.Minute
	summarySlot     = 10 * time.Second
	summarySlots    = int(summaryWindow / summarySlot)
	recentLatencies = 2048
)

// probeSummary is what the landing page says of one probe: when a request last succeeded,
// how many ended, and in error, over the last five minutes, and the TTFT and ITL of its
// recent successes. Cancelled requests (a reload, a shutdown, a cancellation the scenario
// asks for) count in none of them.
type probeSummary struct {
	mu     sync.Mutex
	lastOK time.Time
	slots  [summarySlots]summaryCount
	recent [recentLatencies]latencySample // a ring; next is where the next one goes
	next   int
}

type summaryCount struct {
	slot             int64 // Unix time / summarySlot; the counts are of that slot only
	requests, errors int
}

// latencySample is one successful request's timings, in seconds; each is 0 when the
// request had none (no stream: no TTFT; a single chunk, or every token in one read: no ITL).
type latencySample struct {
	at        int64 // Unix nanoseconds; 0: never filled
	ttft, itl float32
}

// summaryView is a probe's summary at one moment.
type summaryView struct {
	LastOK           time.Time // zero if none
	Requests, Errors int       // over summaryWindow
	// TTFT and ITL are the p50 and p99 of the recent successes within the window;
	// Count 0 when there is none.
	TTFT, ITL stats.Stats
}

func (*probeSummary) Started() {}

func (s *probeSummary) Observe(rec *record.Record) {
	if rec.Reason.ClientLoss() || rec.ClientPaused > 0 {
		return // the client's loss or pause: neither a request nor an error of the target
	}
	c := report.Contribute(rec, report.SLO{})
	if !c.HasTTFT {
		c.TTFT = 0
	}
	s.observe(time.Now(), c.Outcome, c.TTFT, c.ITL)
}

// observe counts a request that ended at now; ttft and itl, 0 when it had none, are read
// of successes only.
func (s *probeSummary) observe(now time.Time, outcome record.Outcome, ttft, itl time.Duration) {
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
		return
	}
	s.lastOK = now
	if ttft <= 0 && itl <= 0 {
		return
	}
	s.recent[s.next] = latencySample{at: now.UnixNano(), ttft: float32(ttft.Seconds()), itl: float32(itl.Seconds())}
	s.next = (s.next + 1) % recentLatencies
}

// snapshot returns the summary of the slots, and of the recent successes, that lie within
// summaryWindow of now.
func (s *probeSummary) snapshot(now time.Time) summaryView {
	oldest := now.Add(-summaryWindow).UnixNano()/int64(summarySlot) + 1
	since := now.Add(-summaryWindow).UnixNano()
	var ttft, itl []float64
	s.mu.Lock()
	v := summaryView{LastOK: s.lastOK}
	for _, c := range s.slots {
		if c.slot >= oldest {
			v.Requests += c.requests
			v.Errors += c.errors
		}
	}
	for _, l := range s.recent {
		if l.at > since {
			if l.ttft > 0 {
				ttft = append(ttft, float64(l.ttft))
			}
			if l.itl > 0 {
				itl = append(itl, float64(l.itl))
			}
		}
	}
	s.mu.Unlock()
	v.TTFT, v.ITL = percentiles(ttft), percentiles(itl)
	return v
}

// percentiles are the count, p50 and p99 of vs, which it sorts.
func percentiles(vs []float64) stats.Stats {
	slices.Sort(vs)
	if len(vs) == 0 {
		return stats.Stats{}
	}
	return stats.Stats{Count: len(vs), P50: stats.Percentile(vs, .5), P99: stats.Percentile(vs, .99)}
}
