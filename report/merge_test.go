package report

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// timedExec answers each request with timings drawn from its sequence
// number, so every shard measures what the unsharded run measures.
type timedExec struct{}

func (timedExec) Do(_ context.Context, _ *prober.Target, req *prober.Request) *record.Record {
	ms := time.Duration(1+req.Seq*7%23) * time.Millisecond
	return &record.Record{
		Seq: req.Seq, ID: req.ID, Scheduled: req.Scheduled, Sent: req.Scheduled,
		Chunks: []time.Duration{ms, 2 * ms, 4 * ms}, FirstOutput: 0, Duration: 5 * ms,
		InputTokens: req.InputTokens, OutputTokens: 3, Outcome: record.OutcomeOK, Status: 200,
	}
}

// keep is a Recorder that keeps the records.
type keep struct {
	mu   sync.Mutex
	recs []*record.Record
}

func (*keep) Started() {}
func (k *keep) Observe(r *record.Record) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.recs = append(k.recs, r)
}

// runShard runs 30 requests of a seeded open loop as shard of the run and
// returns its records and digest.
func runShard(t *testing.T, shard record.Shard) ([]*record.Record, record.Digest) {
	t.Helper()
	cfg, err := scenarios.Parse([]byte(`targets:
  t: {url: http://127.0.0.1:9/v1, model: m}
probes:
  a: {target: t, arrival: {rate: 5000}, dataset: {synthetic: {input_tokens: {mean: 8, stddev: 3}, output_tokens: {mean: 4, stddev: 2}}}}
`), filepath.Join(t.TempDir(), "s.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tg, err := prober.NewTarget("t", cfg.Targets["t"])
	if err != nil {
		t.Fatal(err)
	}
	p, err := prober.NewProbe("a", cfg.Probes["a"], tg, 11, shard)
	if err != nil {
		t.Fatal(err)
	}
	p.SetLimit(prober.Limit{Requests: 30})
	k := &keep{}
	p.Run(context.Background(), context.Background(), timedExec{}, k)
	return k.recs, p.Digest()
}

// TestMergeEqualsUnsharded: three shards' records, through their record
// files, merge into the unsharded run's digest, request count and exact
// percentiles.
func TestMergeEqualsUnsharded(t *testing.T) {
	whole, digest := runShard(t, record.Shard{})
	single := NewReport()
	for _, r := range whole {
		single.Observe(r)
	}
	dir := t.TempDir()
	var shards []ShardRecords
	for i := range 3 {
		sh := record.Shard{Index: i, Count: 3}
		recs, d := runShard(t, sh)
		path := filepath.Join(dir, sh.String()[:1]+".jsonl")
		w, err := CreateShardFile(path, ShardHeader{Shard: sh.String(), Run: "r", Meta: []byte(`{"k":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			w.Observe(r)
		}
		if err := w.Close(ShardEnd{Finished: true, Digest: d.String(), Requests: d.Requests, ClientBound: "cpu"}); err != nil {
			t.Fatal(err)
		}
		sf, err := OpenShardFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if sf.Shard != sh || sf.Header.Run != "r" || string(sf.Header.Meta) != `{"k":1}` || sf.End == nil || !sf.End.Finished || sf.End.Requests != d.Requests || sf.End.ClientBound != "cpu" {
			t.Fatalf("shard file %s read back as %+v, end %+v", path, sf, sf.End)
		}
		shards = append(shards, sf.ShardRecords())
	}
	m, err := Merge(3, shards)
	if err != nil {
		t.Fatal(err)
	}
	if m.Partial() || m.Digest != digest {
		t.Fatalf("merged: partial %v, digest %v over %d; unsharded %v over %d", m.Partial(), m.Digest, m.Digest.Requests, digest, digest.Requests)
	}
	got, want := m.Report.Summary(), single.Summary()
	for name, pair := range map[string][2]Stats{
		"ttft": {got.TTFT, want.TTFT}, "itl": {got.ITL, want.ITL}, "latency": {got.Latency, want.Latency},
		"inter-chunk": {got.InterChunk, want.InterChunk}, "input": {got.InputTokens, want.InputTokens},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s: merged %+v, unsharded %+v", name, pair[0], pair[1])
		}
	}
	if got.OK != want.OK || got.OK != 30 {
		t.Errorf("merged %d ok, unsharded %d, want 30", got.OK, want.OK)
	}
	if g, w := len(m.Report.Requests()), len(single.Requests()); g != w {
		t.Errorf("merged %d request records, unsharded %d", g, w)
	}
}

func TestMergeMissingAndIncomplete(t *testing.T) {
	recs, _ := runShard(t, record.Shard{Index: 0, Count: 3})
	recs2, _ := runShard(t, record.Shard{Index: 2, Count: 3})
	m, err := Merge(3, []ShardRecords{
		{Shard: record.Shard{Index: 0, Count: 3}, Finished: true, Records: RecordsOf(recs)},
		{Shard: record.Shard{Index: 2, Count: 3}, Records: RecordsOf(recs2)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Partial() || !slices.Equal(m.Missing, []int{1}) || !slices.Equal(m.Incomplete, []int{2}) {
		t.Errorf("missing %v, incomplete %v; want [1] and [2]", m.Missing, m.Incomplete)
	}
	if ok, _, _ := m.Report.Counts(); ok != len(recs)+len(recs2) {
		t.Errorf("%d ok, want the %d the two shards sent", ok, len(recs)+len(recs2))
	}
}

func TestMergeRefuses(t *testing.T) {
	var all [3][]*record.Record
	for i := range 3 {
		all[i], _ = runShard(t, record.Shard{Index: i, Count: 3})
	}
	shard := func(i, n int, recs []*record.Record) ShardRecords {
		return ShardRecords{Shard: record.Shard{Index: i, Count: n}, Finished: true, Records: RecordsOf(recs)}
	}
	gap := slices.DeleteFunc(slices.Clone(all[1]), func(r *record.Record) bool { return r.Seq == 4 })
	for _, tc := range []struct {
		name   string
		shards []ShardRecords
		err    string
	}{
		{"a shard twice", []ShardRecords{shard(0, 3, all[0]), shard(0, 3, all[0])}, "shard 0/3 is given twice"},
		{"another count", []ShardRecords{shard(0, 3, all[0]), shard(1, 2, all[1])}, "shard 1/2 is not one of 3 shards"},
		{"records of one shard under two", []ShardRecords{shard(0, 3, all[0]), shard(1, 3, all[0])}, "was recorded twice"},
		{"a request missing", []ShardRecords{shard(0, 3, all[0]), shard(1, 3, gap), shard(2, 3, all[2])}, "request 4 is in no shard"},
	} {
		if _, err := Merge(3, tc.shards); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.err)
		}
	}
}

// TestShardFileDied: a shard that died leaves no end line, and maybe a torn
// last record: its file reads as unfinished, with the records it wrote.
func TestShardFileDied(t *testing.T) {
	recs, _ := runShard(t, record.Shard{Index: 1, Count: 2})
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := CreateShardFile(path, ShardHeader{Shard: "1/2", Run: "r"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		w.Observe(r)
	}
	w.mu.Lock()
	w.w.WriteString(`{"seq": 99, "id": "ab`) // killed mid-line
	w.w.Flush()
	w.mu.Unlock()
	sf, err := OpenShardFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sf.End != nil || sf.ShardRecords().Finished {
		t.Fatalf("a file without its end line reads as ended: %+v", sf.End)
	}
	n := 0
	for _, err := range sf.Records() {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != len(recs) {
		t.Errorf("%d records read back, want %d", n, len(recs))
	}
	if _, err := OpenShardFile(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing file opened")
	}
}
