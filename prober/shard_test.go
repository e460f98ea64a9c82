package prober

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// shardedDatasetProbe builds probe "a", seed 7, with the given arrival and
// dataset, as shard of its sequence.
func shardedDatasetProbe(t *testing.T, arrival, dataset string, shard record.Shard) *Probe {
	t.Helper()
	y := "targets:\n  t: {url: http://127.0.0.1:9/v1, model: m}\nprobes:\n  a:\n    target: t\n"
	if arrival != "" {
		y += "    arrival: " + arrival + "\n"
	}
	y += "    dataset: " + dataset + "\n"
	cfg, err := scenarios.Parse([]byte(y), filepath.Join(t.TempDir(), "s.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget("t", cfg.Targets["t"])
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProbe("a", cfg.Probes["a"], tg, 7, shard)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestShardSessions: sessions of three turns start at every third sequence
// number, so owning sessions by the sequence number of their first turn gave
// all of them to shard 0 of 3 and left shards 1 and 2 drawing forever. Each
// shard owns every nth session instead.
func TestShardSessions(t *testing.T) {
	conv := filepath.Join(t.TempDir(), "conv.jsonl")
	var sessions []string
	for s := range 9 {
		sessions = append(sessions, fmt.Sprintf(`{"session_id": "s%d", "turns": [{"text": "q1"}, {"text": "q2", "delay": 1}, {"text": "q3", "delay": 1}]}`, s))
	}
	if err := os.WriteFile(conv, []byte(strings.Join(sessions, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]int{}
	for i := range 3 {
		p := shardedDatasetProbe(t, "{pattern: constant, rate: 10}", "{file: {path: "+conv+", format: multi_turn}}", record.Shard{Index: i, Count: 3})
		got := make(chan []planned, 1)
		go func() { got <- plans(p, 27) }()
		select {
		case pls := <-got:
			if len(pls) != 3 {
				t.Errorf("shard %d/3 drew %d of 9 sessions, want 3", i, len(pls))
			}
			for _, pl := range pls {
				seen[pl.seq] = i
			}
		case <-time.After(patience):
			t.Fatalf("shard %d/3 drew no session of the 9 within %v", i, patience)
		}
	}
	if len(seen) != 9 {
		t.Errorf("the shards drew %d distinct sessions of 9", len(seen))
	}
}

// TestStartAt: the timeline of a probe given an agreed start begins there,
// not when the probe was ready: every request is scheduled at that instant
// plus its unsharded offset.
func TestStartAt(t *testing.T) {
	const arrival = "{rate: 2000}"
	whole := plans(newProbe(t, probeYAML(5, arrival, ""), record.Shard{}), 30)
	p := newProbe(t, probeYAML(5, arrival, ""), record.Shard{Index: 1, Count: 3})
	p.SetLimit(Limit{Requests: 30})
	start := time.Now().Add(300 * time.Millisecond).Round(time.Millisecond)
	p.SetStartAt(start)
	rec := &recorder{}
	p.Run(context.Background(), context.Background(), instantExec{}, rec)
	if len(rec.records) != 10 {
		t.Fatalf("%d requests, want shard 1/3's 10", len(rec.records))
	}
	for _, r := range rec.records {
		if want := start.Add(whole[r.Seq].offset); !r.Scheduled.Equal(want) {
			t.Errorf("seq %d scheduled at %v, want the agreed start + its offset, %v", r.Seq, r.Scheduled, want)
		}
	}
}

// TestClosedLoopTooSmallToShard: a closed loop of 2 across 3 shards leaves
// shard 2 no slot, ever: it sent nothing and, with a request limit, never
// ended. Like a max_concurrency too small to split, it is refused, with what
// to raise; a ramp that reaches a slot for every shard is not.
func TestClosedLoopTooSmallToShard(t *testing.T) {
	cfg, err := scenarios.Parse([]byte(probeYAML(1, "{pattern: concurrency, concurrency: 2}", "")), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget("t", cfg.Targets["t"])
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewProbe("a", cfg.Probes["a"], tg, 1, record.Shard{Index: 2, Count: 3})
	if want := "concurrency 2 cannot be split across 3 shards; raise it to at least 3"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("NewProbe = %v, want an error with %q", err, want)
	}
	newProbe(t, probeYAML(1, "{pattern: concurrency, concurrency: 1, ramp_to: 3, ramp_over: 1s}", ""), record.Shard{Index: 2, Count: 3})
}
