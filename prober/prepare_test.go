package prober

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// preparingExec is a collectExec that needs time to prepare, as worker
// processes do to load a tokenizer.
type preparingExec struct {
	collectExec
	mu       sync.Mutex
	prepared []*Target
	released int
	readyAt  time.Time
	early    int // requests handed over before Prepare returned
}

func (e *preparingExec) Prepare(_ context.Context, t *Target, _ int) func() {
	time.Sleep(100 * time.Millisecond)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.prepared = append(e.prepared, t)
	e.readyAt = time.Now()
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.released++
	}
}

func (e *preparingExec) Do(ctx context.Context, t *Target, req *Request) *record.Record {
	e.mu.Lock()
	if e.readyAt.IsZero() {
		e.early++
	}
	e.mu.Unlock()
	return e.collectExec.Do(ctx, t, req)
}

// TestRunPreparesFirst: the executor is prepared for the target before the
// timeline starts, so that its start-up is not billed to the first requests
// as schedule lag, and released when Run returns.
func TestRunPreparesFirst(t *testing.T) {
	for _, arrival := range []string{"{pattern: constant, rate: 1000}", "{pattern: concurrency, concurrency: 4}"} {
		t.Run(arrival, func(t *testing.T) {
			p := newProbe(t, probeYAML(1, arrival, ""), record.Shard{Count: 1})
			ctx, stop := context.WithTimeout(context.Background(), patience)
			defer stop()
			exec := &preparingExec{collectExec: collectExec{n: 20, stop: stop}}
			p.Run(ctx, context.Background(), exec, &recorder{})
			if len(exec.prepared) != 1 || exec.prepared[0] != p.Target || exec.early > 0 {
				t.Fatalf("prepared %v, want the probe's target once, before any request (%d came first)", exec.prepared, exec.early)
			}
			if exec.released != 1 {
				t.Errorf("released %d times, want once", exec.released)
			}
			for _, req := range exec.reqs {
				if req.Scheduled.Before(exec.readyAt) {
					t.Fatalf("seq %d scheduled %s before the executor was ready: the timeline started during its start-up",
						req.Seq, exec.readyAt.Sub(req.Scheduled))
				}
			}
		})
	}
}
