package pool

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// countRecorder keeps the records a probe observes.
type countRecorder struct {
	mu      sync.Mutex
	records []*record.Record
}

func (r *countRecorder) Started() {}
func (r *countRecorder) Observe(rec *record.Record) {
	r.mu.Lock()
	r.records = append(r.records, rec)
	r.mu.Unlock()
}

// TestProbePrefillThroughWorkers: a probe under max_prefill_concurrency
// sends through worker processes, its slots freed by their first-token
// frames (run with -race: the slot is released by the pool's reader while
// its writer may still read the request).
func TestProbePrefillThroughWorkers(t *testing.T) {
	u := newUpstream(t)
	p, _ := newPool(t, 2)
	cfg, err := scenarios.Parse([]byte(fmt.Sprintf(`targets:
  t: {url: %s/v1, model: m}
probes:
  a: {target: t, arrival: {pattern: concurrency, concurrency: 3, max_prefill_concurrency: 1}, dataset: {synthetic: {input_tokens: {mean: 4}}}}
`, u.URL)), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := prober.NewTarget("t", cfg.Targets["t"])
	if err != nil {
		t.Fatal(err)
	}
	probe, err := prober.NewProbe("a", cfg.Probes["a"], tg, 1, record.Shard{})
	if err != nil {
		t.Fatal(err)
	}
	probe.SetLimit(prober.Limit{Requests: 12})
	rec := &countRecorder{}
	probe.Run(context.Background(), context.Background(), p, rec)
	if len(rec.records) != 12 {
		t.Fatalf("%d records, want 12", len(rec.records))
	}
	for _, r := range rec.records {
		if r.Outcome != record.OutcomeOK {
			t.Errorf("request %d: %v %s %s", r.Seq, r.Outcome, r.Reason, r.Err)
		}
	}
}
