package simulator

import (
	"container/heap"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/stats"
)

// TestTTFTQuantileMatchesQueue holds the capacity model's formula to an
// event-by-event run of the queue it describes: C closed-loop clients, S
// FIFO slots each held d, the first token t0 after admission, a client's
// next request arriving just after its last ends (after the requests
// already waiting, as the limiter hands a freed slot to the longest
// waiter). The quantiles of the TTFTs it gives are the formula's.
func TestTTFTQuantileMatchesQueue(t *testing.T) {
	const prompt, output = 4, 9
	cfg := Config{Profile: Profile{TTFT: 20 * time.Millisecond, PrefillPerToken: time.Millisecond, ITL: 5 * time.Millisecond}}
	t0 := cfg.Profile.TTFT + prompt*cfg.Profile.PrefillPerToken
	d := t0 + (output-1)*cfg.Profile.ITL
	for _, s := range []int{1, 3, 8} {
		cfg.MaxConcurrency = s
		for c := 1; c <= 3*s+2; c++ {
			ttfts := simulateQueue(c, s, t0, d, 400*s)
			for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
				// At a share of exactly 1 − q the sample's quantile
				// falls between the two waits.
				if k := (c+s-1)/s - 1; c > s && math.Abs(float64(c-k*s)/float64(s)-(1-q)) < 0.01 {
					continue
				}
				// Rounded: a client that comes back 1ns late waits 1ns less.
				got := time.Duration(stats.Percentile(ttfts, q)).Round(time.Microsecond)
				if want := cfg.TTFTQuantile(c, prompt, output, q); got != want {
					t.Errorf("S=%d C=%d q=%v: the queue gives %v, the formula %v", s, c, q, got, want)
				}
			}
		}
	}
}

// simulateQueue returns the sorted TTFTs of n requests of a closed loop of
// c clients on s FIFO slots, after the first waves' start-up.
func simulateQueue(c, s int, t0, d time.Duration, n int) []float64 {
	free := make([]time.Duration, s) // when each slot is next free
	arrivals := &arrivalQueue{}
	for i := range c {
		heap.Push(arrivals, arrival{at: 0, order: i})
	}
	var ttfts []float64
	for served := 0; served < n+4*c; served++ {
		a := heap.Pop(arrivals).(arrival)
		slot := slices.Index(free, slices.Min(free))
		start := max(a.at, free[slot])
		free[slot] = start + d
		if served >= 4*c {
			ttfts = append(ttfts, float64(start-a.at+t0))
		}
		// The client comes back a nanosecond after its request ended.
		heap.Push(arrivals, arrival{at: start + d + 1, order: a.order})
	}
	slices.Sort(ttfts)
	return ttfts
}

type arrival struct {
	at    time.Duration
	order int
}

// arrivalQueue is a min-heap of arrivals by time, then client.
type arrivalQueue []arrival

func (h arrivalQueue) Len() int { return len(h) }
func (h arrivalQueue) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].order < h[j].order
}
func (h arrivalQueue) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *arrivalQueue) Push(x any)   { *h = append(*h, x.(arrival)) }
func (h *arrivalQueue) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// TestCapacity: the capacity is the slots while the SLO lies within one
// wave of the unqueued TTFT, a multiple of them further out, 0 below the
// unqueued TTFT and unbounded without a slot limit.
func TestCapacity(t *testing.T) {
	cfg := Config{MaxConcurrency: 8, Profile: Profile{TTFT: 20 * time.Millisecond, ITL: 5 * time.Millisecond}}
	const prompt, output = 16, 13 // d = 20ms + 12 × 5ms = 80ms
	for _, tc := range []struct {
		slo  time.Duration
		q    float64
		want int
	}{
		{20 * time.Millisecond, 0.95, 0},   // not even alone
		{21 * time.Millisecond, 0.95, 8},   // any queueing breaks it
		{99 * time.Millisecond, 0.95, 8},   // one wave is 100ms
		{101 * time.Millisecond, 0.95, 16}, // one wave is fine, two are not
		{99 * time.Millisecond, 0.6, 11},   // at 12, half the requests wait
	} {
		if got := cfg.Capacity(tc.slo, tc.q, prompt, output); got != tc.want {
			t.Errorf("SLO %v at q=%v: capacity %d, want %d", tc.slo, tc.q, got, tc.want)
		}
	}
	cfg.MaxConcurrency = 0
	if got := cfg.Capacity(time.Second, 0.95, prompt, output); got != -1 {
		t.Errorf("no slot limit: capacity %d, want -1", got)
	}
}
