package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

// shardFileName is the record file a `bench --shard` run writes beside its
// artifacts, which `bench merge` reads.
const shardFileName = "inferprobe_shard.jsonl"

// shardFlags are --shard and --start-at: one machine's share of a run sent
// from several.
type shardFlags struct {
	shard   string
	startAt string
}

func (f *benchFlags) addShardFlags(flag func(name, help string) *kingpin.FlagClause) {
	flag("shard", "Send share i of n of the run, i/n (e.g. 0/3; in a Kubernetes Indexed Job $(JOB_COMPLETION_INDEX)/n): the same seed and timeline as the whole run, every nth request (a multi-turn session counts as one). Besides its share's usual artifacts it writes "+shardFileName+"; `inferprobe bench merge DIR...` combines the shards' directories into the report of the whole run.").StringVar(&f.shard)
	flag("start-at", "Wall-clock time (RFC 3339, e.g. 2026-12-02T05:00:00Z) the measured requests start at, the same on every --shard, so that the shards send on one timeline; a warmup runs before it. Without it each shard starts when it is ready and the shards' timelines are shifted by their start-up differences (seconds in a Job: scheduling, image pulls), so together they send a load less dense than one machine would at first, and a spread-out tail. A time already past is refused; clocks must agree (NTP).").StringVar(&f.startAt)
}

// shardSpec is the share and start the flags ask for: the whole run, when
// ready, without them. given says --shard was given, and a record file is due.
func (f *benchFlags) shardSpec() (shard record.Shard, startAt time.Time, given bool, err error) {
	shard = record.Shard{Count: 1}
	if f.shard != "" {
		if shard, err = record.ParseShard(f.shard); err != nil {
			return shard, startAt, false, fmt.Errorf("--shard: %w", err)
		}
	}
	if f.startAt != "" {
		if startAt, err = time.Parse(time.RFC3339, f.startAt); err != nil {
			return shard, startAt, false, fmt.Errorf("--start-at %q: want an RFC 3339 time, e.g. %s", f.startAt, time.Now().UTC().Add(time.Minute).Format(time.RFC3339))
		}
		if late := time.Since(startAt); late > 0 {
			return shard, startAt, false, fmt.Errorf("--start-at %s was %v ago: give a time far enough ahead for every shard to be ready", f.startAt, late.Round(time.Second))
		}
	}
	return shard, startAt, f.shard != "", nil
}

// defaultShardDir keeps the shards of a run apart when they share a
// working directory and no --artifact-dir was given.
func defaultShardDir(base string, shard record.Shard) string {
	return fmt.Sprintf("%s-shard%d", base, shard.Index)
}

// shardMeta is what a shard's record file carries for the merge to report
// the whole run as bench would have.
type shardMeta struct {
	Config export.Config `json:"config"`
	SLO    report.SLO    `json:"slo"`
	Seed   uint64        `json:"seed"`
}

// runIdentity identifies a run apart from its shard, start and artifact
// directory: the scenario the flags built and its limits. Shards whose
// identities differ are not one run.
func runIdentity(sc *benchScenario, plan *finite.Plan) (string, error) {
	y, err := scenarios.Marshal(sc.cfg, sc.written)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(y)
	fmt.Fprintf(h, "\n%+v %+v %d", plan.Limit, plan.WarmupLimit, plan.Grace)
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// shardSink writes a shard's records, their errors redacted, to its record
// file as they finish.
type shardSink struct {
	w      *report.ShardWriter
	redact *strings.Replacer
}

// openShardFile creates r's record file in its artifact directory; nil
// when r is not a shard.
func (b *bencher) openShardFile(r benchRun) (*shardSink, error) {
	if !r.sharded {
		return nil, nil
	}
	id, err := runIdentity(r.sc, r.plan)
	if err != nil {
		return nil, err
	}
	meta, err := json.Marshal(shardMeta{Config: r.config, SLO: r.plan.SLO, Seed: r.seed})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, err
	}
	w, err := report.CreateShardFile(filepath.Join(r.dir, shardFileName), report.ShardHeader{Shard: r.shard.String(), Run: id, Meta: meta})
	if err != nil {
		return nil, err
	}
	start := "when ready (no --start-at)"
	if b.f.startAt != "" {
		start = "at " + b.f.startAt
	}
	fmt.Fprintf(b.stderr, "inferprobe bench: shard %s: sending its share of the run %s; its report covers the share, `inferprobe bench merge` the shards' directories for the whole run\n", r.shard, start)
	return &shardSink{w: w, redact: scenarios.Redactor(b.f.secrets())}, nil
}

// Started is part of prober.Recorder.
func (*shardSink) Started() {}

// Observe writes rec; a server that echoes the key it refused must not put
// it in the file.
func (s *shardSink) Observe(rec *record.Record) {
	if rec.Err != "" {
		redacted := *rec
		redacted.Err = s.redact.Replace(rec.Err)
		rec = &redacted
	}
	s.w.Observe(rec)
}

// close ends the record file: finished unless the run was stopped.
func (s *shardSink) close(res finite.Result) error {
	if s == nil {
		return nil
	}
	return s.w.Close(report.ShardEnd{Finished: !res.Stopped, Digest: res.Digest.String(), Requests: res.Digest.Requests, ClientBound: res.ClientBound})
}
