package main

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// The live view's latency buckets: 1 % wide from 1 µs up, so a quantile is
// read to within 0.5 % by walking a fixed array each tick, however long the
// run, instead of sorting every sample (the exact report does that once, at
// the end).
const (
	liveMin     = 1e-6 // seconds
	liveGrowth  = 1.01
	liveBuckets = 2400 // 1.01^2400 µs ≈ 23 000 s, past any request timeout
)

var logGrowth = math.Log(liveGrowth)

// liveHist counts durations in liveBuckets log-spaced buckets.
type liveHist struct {
	counts [liveBuckets]uint32
	n      uint64
}

func (h *liveHist) add(d time.Duration) {
	i := 0
	if s := d.Seconds(); s > liveMin {
		i = min(int(math.Log(s/liveMin)/logGrowth), liveBuckets-1)
	}
	h.counts[i]++
	h.n++
}

// quantile is the q-quantile (nearest rank), as the middle of its bucket.
func (h *liveHist) quantile(q float64) time.Duration {
	rank := uint64(math.Ceil(q * float64(h.n)))
	var seen uint64
	for i, c := range h.counts {
		if seen += uint64(c); seen >= max(rank, 1) {
			return time.Duration(liveMin * math.Pow(liveGrowth, float64(i)+0.5) * float64(time.Second))
		}
	}
	return 0
}

// liveStats keeps what the progress line shows of the measured requests so
// far: TTFT and ITL quantiles and the output tokens of the successes. It is
// a prober.Recorder fed every measured request.
type liveStats struct {
	mu           sync.Mutex
	ttft, itl    liveHist
	outputTokens int64
}

// Started is part of prober.Recorder.
func (l *liveStats) Started() {}

// Observe adds a finished request.
func (l *liveStats) Observe(rec *record.Record) {
	ttft, hasTTFT := rec.TTFT()
	itl, hasITL := rec.ITL()
	l.mu.Lock()
	defer l.mu.Unlock()
	if hasTTFT {
		l.ttft.add(ttft)
	}
	if rec.Outcome != record.OutcomeOK {
		return
	}
	if hasITL {
		l.itl.add(itl)
	}
	l.outputTokens += int64(rec.OutputTokens)
}

// line is ", TTFT p50 101ms p99 130ms, ITL p50 5.01ms p99 7.1ms, 812.3 output tok/s"
// for the requests so far, over elapsed; empty before the first sample.
func (l *liveStats) line(elapsed time.Duration) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s string
	for _, m := range []struct {
		name string
		h    *liveHist
	}{{"TTFT", &l.ttft}, {"ITL", &l.itl}} {
		if m.h.n > 0 {
			s += fmt.Sprintf(", %s p50 %v p99 %v", m.name, roundLive(m.h.quantile(0.5)), roundLive(m.h.quantile(0.99)))
		}
	}
	if l.outputTokens > 0 && elapsed > 0 {
		s += fmt.Sprintf(", %.1f output tok/s", float64(l.outputTokens)/elapsed.Seconds())
	}
	return s
}

// roundLive keeps three significant digits: the buckets hold no more.
func roundLive(d time.Duration) time.Duration {
	for unit := time.Nanosecond; unit < time.Hour; unit *= 10 {
		if d < 1000*unit {
			return d.Round(unit)
		}
	}
	return d.Round(time.Second)
}
