package prober

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// prefillExec answers each request's first token after ttft, as a server
// that prefills, and ends it decode later; it counts the requests waiting
// for their first token and those in flight.
type prefillExec struct {
	ttft, decode time.Duration
	noFirst      bool // the requests end without a first token, as failures do

	mu                      sync.Mutex
	waiting, inFlight       int
	peakWaiting, peakFlight int
}

func (e *prefillExec) Do(ctx context.Context, _ *Target, req *Request) *record.Record {
	time.Sleep(time.Until(req.Scheduled))
	e.mu.Lock()
	e.waiting++
	e.inFlight++
	e.peakWaiting, e.peakFlight = max(e.peakWaiting, e.waiting), max(e.peakFlight, e.inFlight)
	e.mu.Unlock()
	rec := &record.Record{Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(), FirstOutput: -1}
	time.Sleep(e.ttft)
	e.mu.Lock()
	e.waiting-- // before the slot is freed, so that the next request counts after
	e.mu.Unlock()
	if !e.noFirst {
		req.FirstToken()
	}
	time.Sleep(e.decode)
	e.mu.Lock()
	e.inFlight--
	e.mu.Unlock()
	return rec
}

// TestPrefillConcurrency: max_prefill_concurrency lets no more than that
// many requests wait for their first token at once, open loop, closed loop
// and a session's later turns alike, while more are in flight; a request
// that ends without a first token frees its slot as it ends.
func TestPrefillConcurrency(t *testing.T) {
	const limit = 2
	for _, tc := range []struct {
		name, arrival, dataset string
		noFirst                bool
	}{
		{"open loop", "{pattern: constant, rate: 1000, max_prefill_concurrency: 2}", "{synthetic: {input_tokens: {mean: 4}}}", false},
		{"closed loop", "{pattern: concurrency, concurrency: 6, max_prefill_concurrency: 2}", "{synthetic: {input_tokens: {mean: 4}}}", false},
		{"sessions", "{pattern: constant, rate: 1000, max_prefill_concurrency: 2}", "{synthetic: {input_tokens: {mean: 4}, conversation: {turns: {mean: 3}}}}", false},
		{"no first token", "{pattern: constant, rate: 1000, max_prefill_concurrency: 2}", "{synthetic: {input_tokens: {mean: 4}}}", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := datasetProbe(t, "http://127.0.0.1:9/v1", tc.arrival, tc.dataset)
			p.SetLimit(Limit{Requests: 12})
			exec := &prefillExec{ttft: 30 * time.Millisecond, decode: 120 * time.Millisecond, noFirst: tc.noFirst}
			rec := &recorder{}
			ctx, stop := context.WithTimeout(context.Background(), patience)
			defer stop()
			p.Run(ctx, context.Background(), exec, rec)
			if len(rec.records) != 12 {
				t.Fatalf("%d requests recorded, want 12", len(rec.records))
			}
			if exec.peakWaiting != limit {
				t.Errorf("%d requests waited for their first token at once, want at most (and at some point) %d", exec.peakWaiting, limit)
			}
			switch {
			case tc.noFirst && exec.peakFlight != limit:
				t.Errorf("%d in flight at once; without first tokens the slots free only as requests end, so %d", exec.peakFlight, limit)
			case !tc.noFirst && exec.peakFlight <= limit:
				t.Errorf("%d in flight at once; requests past their first token must not hold a slot", exec.peakFlight)
			}
			held := 0
			for _, r := range rec.records {
				if r.CapWait > 0 {
					held++
				}
			}
			if tc.name == "open loop" && held == 0 {
				t.Error("no request's wait for a prefill slot was counted as cap wait")
			}
		})
	}
}

// TestPrefillSlotAllocatesNothing: taking a prefill slot and freeing it,
// at the first token and again at the end, allocates nothing per request.
func TestPrefillSlotAllocatesNothing(t *testing.T) {
	r := &run{ctx: context.Background(), prefill: make(chan struct{}, 1)}
	req := &Request{}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, ok := r.acquirePrefill(req); !ok {
			t.Fatal("no slot")
		}
		req.FirstToken()
		req.FirstToken()
	})
	if allocs != 0 || len(r.prefill) != 0 {
		t.Errorf("%v allocations a request, %d slots held after; want 0 and 0", allocs, len(r.prefill))
	}
}
