package main

import (
	"fmt"
	"io"
	"time"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

// benchRun is one planned run: the only one, or a point of a sweep.
type benchRun struct {
	point  sweepPoint
	index  int // the run's point's index (from 0) among a sweep's
	trial  int // the run's index (from 0) among a multi-run's at its point
	sc     *benchScenario
	plan   *finite.Plan
	config export.Config
	seed   uint64
	dir    string
	floor  int // --failed-request-threshold's grace floor
	shard  record.Shard
	// sharded says --shard was given: the run writes a record file.
	sharded bool
}

// planRun plans the run the flags describe now; notes are printed for the
// first run only. Its errors have been printed.
func (f *benchFlags) planRun(stderr io.Writer, notes bool) (benchRun, error) {
	sc, err := f.scenario()
	if err == nil {
		err = scenarios.Check(sc.cfg, "bench", sc.written)
	}
	if err != nil {
		sc.usage(stderr, err)
		return benchRun{}, err
	}
	if notes {
		for _, n := range sc.notes {
			fmt.Fprintf(stderr, "inferprobe bench: note: %s\n", n)
		}
	}
	targets, err := prober.Build(sc.cfg)
	if err != nil {
		sc.usage(stderr, err)
		return benchRun{}, err
	}
	limit, warmup, grace, err := f.load.limits(f)
	if err != nil {
		sc.usage(stderr, err)
		return benchRun{}, err
	}
	warmupArrival, err := f.load.warmup.arrival(f)
	var warmupGrace *time.Duration
	if err == nil {
		warmupGrace, err = f.load.warmup.graceFor(warmup.Duration > 0)
	}
	if err != nil {
		sc.usage(stderr, err)
		return benchRun{}, err
	}
	if f.multi.skipWarmup {
		warmup = prober.Limit{}
	}
	if f.stepWarmup > 0 { // a search step's: at the step's load, for its time
		warmup, warmupArrival, warmupGrace = prober.Limit{Duration: f.stepWarmup}, nil, nil
	}
	shard, startAt, sharded, err := f.shardSpec()
	if err != nil {
		fmt.Fprintf(stderr, "inferprobe bench: %v\n", err)
		return benchRun{}, err
	}
	plan, err := finite.NewPlan(finite.Spec{
		Name: "bench", WarmupName: benchWarmup, Probe: sc.cfg.Probes["bench"], Target: targets["bench"],
		Seed: sc.cfg.Global.Seed, Shard: shard, StartAt: startAt,
		Limit: limit, Warmup: warmup, Grace: grace, WarmupArrival: warmupArrival, WarmupGrace: warmupGrace,
	})
	if err != nil {
		fmt.Fprintf(stderr, "inferprobe bench: %v\n", err)
		return benchRun{}, err
	}
	a := sc.cfg.Probes["bench"].Arrival
	return benchRun{sc: sc, plan: plan, config: f.exportConfig(plan.Limit, warmup, sc.cfg), seed: f.seed,
		floor: finite.ThresholdFloor(max(a.Concurrency, a.MaxConcurrency)), shard: shard, sharded: sharded}, nil
}
