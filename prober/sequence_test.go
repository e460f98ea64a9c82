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
)

// instantExec answers every request at once.
type instantExec struct{}

func (instantExec) Do(_ context.Context, _ *Target, req *Request) *record.Record {
	return &record.Record{Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(), FirstOutput: -1}
}

// TestFoldDigestEqualsUnsharded runs each kind of schedule unsharded and as
// three shards: the entries on the records fold into the digest the probe
// folded as it sent, for the unsharded run and for the shards together.
// That holds because every scheduler folds in sequence order; a scheduler
// that folded in another order (a session's turns as they are sent) would
// fail here.
func TestFoldDigestEqualsUnsharded(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	var lines []string
	for i := range 12 {
		lines = append(lines, fmt.Sprintf(`{"timestamp": %d, "input_length": %d, "output_length": 3, "hash_ids": [1]}`, 3*i, 10+i))
	}
	conv := filepath.Join(dir, "conv.jsonl")
	var sessions []string
	for s := range 8 {
		sessions = append(sessions, fmt.Sprintf(`{"session_id": "s%d", "turns": [{"text": "q1 of %d"}, {"role": "assistant", "text": "a1"}, {"text": "q2", "delay": 1}, {"text": "q3 of %d", "delay": 1}]}`, s, s, s))
	}
	for path, text := range map[string][]string{trace: lines, conv: sessions} {
		if err := os.WriteFile(path, []byte(strings.Join(text, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const synthetic = "{synthetic: {input_tokens: {mean: 8, stddev: 3}, output_tokens: {mean: 4, stddev: 2}}}"
	for _, tc := range []struct{ name, arrival, dataset string }{
		{"open loop", "{rate: 5000}", synthetic},
		{"open loop capped", "{rate: 5000, max_concurrency: 3}", synthetic},
		{"closed loop", "{pattern: concurrency, concurrency: 4}", synthetic},
		{"sessions open loop", "{pattern: constant, rate: 5000}", "{file: {path: " + conv + ", format: multi_turn}}"},
		{"sessions closed loop", "{pattern: concurrency, concurrency: 3}", "{file: {path: " + conv + ", format: multi_turn}}"},
		{"replay", "", "{file: {path: " + trace + ", format: mooncake, timing: replay, speedup: 100, block_size: 8}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(shard record.Shard) (record.Digest, []record.DigestEntry) {
				p := shardedDatasetProbe(t, tc.arrival, tc.dataset, shard)
				p.SetLimit(Limit{Requests: 20})
				rec := &recorder{}
				p.Run(context.Background(), context.Background(), instantExec{}, rec)
				var entries []record.DigestEntry
				for _, r := range rec.records {
					entries = append(entries, r.Digest)
				}
				return p.Digest(), entries
			}
			whole, entries := run(record.Shard{})
			if whole.Requests == 0 {
				t.Fatal("nothing sent")
			}
			if got, err := record.FoldDigest(entries); err != nil || got != whole {
				t.Fatalf("unsharded: folded %v over %d (%v), the probe folded %v over %d", got, got.Requests, err, whole, whole.Requests)
			}
			var all []record.DigestEntry
			for i := range 3 {
				_, e := run(record.Shard{Index: i, Count: 3})
				all = append(all, e...)
			}
			if got, err := record.FoldDigest(all); err != nil || got != whole {
				t.Fatalf("3 shards: folded %v over %d (%v), unsharded %v over %d", got, got.Requests, err, whole, whole.Requests)
			}
			if _, err := record.FoldDigest(append(all, all[0])); err == nil {
				t.Error("an entry given twice folded without an error")
			}
		})
	}
}
