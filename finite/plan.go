// Package finite is the engine of a finite run — a bench or a burst: an
// optional warmup, then the measured requests up to a limit, a grace period
// for the requests still in flight, and an exact report with the GPUs'
// share of the run and a verdict on whether the client kept up.
//
// `inferprobe bench` and the daemon's bursts both plan and run through it;
// they differ only in where a plan comes from (flags, a scenario's burst and
// its API overrides) and where the result goes (console and artifacts, the
// history and the last-run gauges).
package finite

import (
	"fmt"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/scenarios"
)

// defaultRequests is the length of a run that sets no limit and whose
// dataset has no natural end, as AIPerf's default request count.
const defaultRequests = 10

// NoGrace waits for every request in flight after the last send, however
// long: each is bounded by its target's timeout.
const NoGrace time.Duration = -1

// Spec is what a plan is made from.
type Spec struct {
	// Name names the measured requests' seeded streams, so that runs of the
	// same spec send the same sequence; WarmupName the warmup's, which must
	// differ so that warming up does not change the measured sequence.
	Name, WarmupName string
	Probe            *scenarios.Probe
	Target           *prober.Target
	Seed             uint64
	Shard            record.Shard
	// StartAt is when the measured requests' timeline starts (the warmup,
	// if any, runs before it); zero: when they are ready.
	StartAt time.Time
	// Limit ends the measured requests. Zero sends one pass through a
	// replayed file of known length, else defaultRequests.
	Limit prober.Limit
	// Warmup is sent first, with the same dataset but no request
	// cancellation; zero: none.
	Warmup prober.Limit
	// WarmupArrival is the warmup's own load (AIPerf's --warmup-request-rate,
	// --warmup-concurrency…); nil: the probe's.
	WarmupArrival *scenarios.Arrival
	// WarmupGrace is how long the warmup requests still in flight when its
	// last is sent may take before they are cut; nil waits for them all, as
	// AIPerf without --warmup-grace-period.
	WarmupGrace *time.Duration
	// Grace is how long the requests still in flight after the last send
	// of a duration run may take before they are cut; NoGrace waits for
	// them. A request-count run always waits for them (GraceFor).
	Grace time.Duration
}

// Plan is a finite run, ready to send.
type Plan struct {
	// Probe is the probe the plan sends, as its artifacts describe it.
	Probe              *scenarios.Probe
	Main, Warmup       *prober.Probe // Warmup is nil without one
	Limit, WarmupLimit prober.Limit
	Grace              time.Duration  // GraceFor the limit
	WarmupGrace        *time.Duration // Spec.WarmupGrace

	SLO report.SLO
}

// NewPlan builds the probes of one run: its own sequences, so every run
// with the same seed and spec sends the same requests.
func NewPlan(s Spec) (*Plan, error) {
	p := &Plan{Probe: s.Probe, Limit: s.Limit, WarmupLimit: s.Warmup, Grace: s.Grace, WarmupGrace: s.WarmupGrace, SLO: report.NewSLO(s.Probe.SLO)}
	var err error
	if p.Main, err = prober.NewProbe(s.Name, s.Probe, s.Target, s.Seed, s.Shard); err != nil {
		return nil, err
	}
	if p.Limit == (prober.Limit{}) {
		p.Limit.Requests = defaultRequests
		// A replayed file is sent once, at its timestamps; any other
		// workload sends AIPerf's 10, cycling through a file's entries.
		if n, ok := p.Main.PassRequests(); ok && n > 0 && s.Probe.Dataset.File != nil && s.Probe.Dataset.File.Timing == scenarios.TimingReplay {
			p.Limit.Requests = n
		}
	}
	p.Grace = GraceFor(p.Limit, s.Grace)
	p.Main.SetLimit(p.Limit)
	p.Main.SetStartAt(s.StartAt)
	if s.Warmup != (prober.Limit{}) {
		if s.WarmupName == s.Name {
			return nil, fmt.Errorf("warmup of %s must have a name of its own, or it would send the measured sequence", s.Name)
		}
		// Request cancellation is for the measured requests only, as in
		// AIPerf: a warmup warms the server up with whole requests.
		warmup := *s.Probe
		warmup.Dataset.Cancel = nil
		if s.WarmupArrival != nil {
			warmup.Arrival = *s.WarmupArrival
		}
		if p.Warmup, err = prober.NewProbe(s.WarmupName, &warmup, s.Target, s.Seed, s.Shard); err != nil {
			return nil, err
		}
		p.Warmup.SetLimit(s.Warmup)
	}
	return p, nil
}
