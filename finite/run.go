package finite

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferprobe/inferprobe/collector/gpu"
	"github.com/inferprobe/inferprobe/gputelemetry"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/servermetrics"
)

// Phase is the part of a run that is sending.
type Phase string

// Phases, in order.
const (
	PhaseWarmup    Phase = "warmup"
	PhaseProfiling Phase = "profiling"
)

// utilisationEvery is how often a run samples its executor's CPU use and
// scheduling latency for the client-bound verdict.
const utilisationEvery = time.Second

// Utiliser is an executor that can tell how loaded it is (the worker pool).
type Utiliser interface {
	Utilisation() (cpu float64, schedLatencyP99 time.Duration)
}

// Run is one finite run of a plan.
type Run struct {
	plan   *Plan
	exec   prober.Executor
	sink   prober.Recorder // nil, or also fed every measured request
	gpu    *gpu.Window
	server *servermetrics.Options // nil: the server's metrics are not read
	dcgm   *gputelemetry.Options  // nil: no DCGM exporter endpoint is scraped
	logger *slog.Logger
	report *report.Report

	mu       sync.Mutex
	progress Progress
}

// Option configures a Run.
type Option func(*Run)

// WithRecorder also feeds every measured request to rec (the daemon's
// Prometheus series), beside the run's report.
func WithRecorder(rec prober.Recorder) Option { return func(r *Run) { r.sink = rec } }

// WithGPUWindow adds what the GPUs did during the measured requests to the result.
func WithGPUWindow(w *gpu.Window) Option { return func(r *Run) { r.gpu = w } }

// WithServerMetrics scrapes the server's own metrics during the run (from
// before the warmup to after the last response) into the result.
func WithServerMetrics(o servermetrics.Options) Option { return func(r *Run) { r.server = &o } }

// WithGPUTelemetry scrapes DCGM exporter endpoints during the run (from
// before the warmup to after the last response) into the result, as
// AIPerf's --gpu-telemetry URL.
func WithGPUTelemetry(o gputelemetry.Options) Option { return func(r *Run) { r.dcgm = &o } }

// WithLogger logs the run's events (a grace period running out) to l.
func WithLogger(l *slog.Logger) Option { return func(r *Run) { r.logger = l } }

// New prepares a run of p on exec.
func New(p *Plan, exec prober.Executor, opts ...Option) *Run {
	r := &Run{plan: p, exec: exec, logger: slog.New(slog.DiscardHandler), report: report.NewReport(report.WithSLO(p.SLO))}
	for _, o := range opts {
		o(r)
	}
	r.progress = Progress{Phase: PhaseProfiling, Report: r.report, Limit: p.Limit}
	if p.Warmup != nil {
		r.progress = Progress{Phase: PhaseWarmup, Report: report.NewReport(), Limit: p.WarmupLimit}
	}
	return r
}

// RunID is the run ID the measured requests' IDs fold in.
func (r *Run) RunID() record.RunID { return r.plan.Main.RunID() }

// Report is the report of the measured requests, filled as they finish.
func (r *Run) Report() *report.Report { return r.report }

// Plan is the plan r runs.
func (r *Run) Plan() *Plan { return r.plan }

// Digest identifies the measured sequence sent so far.
func (r *Run) Digest() record.Digest { return r.plan.Main.Digest() }

// Progress is the phase sending now.
type Progress struct {
	Phase   Phase
	Report  *report.Report // the phase's requests so far
	Limit   prober.Limit
	Started time.Time // zero until Execute starts the phase
}

// Progress returns the phase sending now.
func (r *Run) Progress() Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.progress
}

// startPhase shows phase as sending from now.
func (r *Run) startPhase(p Progress) {
	p.Started = time.Now()
	r.mu.Lock()
	r.progress = p
	r.mu.Unlock()
}

// Result is what a run measured.
type Result struct {
	Summary report.Summary
	Report  *report.Report // the raw samples behind Summary
	Digest  record.Digest
	// RunID is the run ID the measured requests' IDs fold in.
	RunID record.RunID
	// Stopped says ctx ended the run before its limit; Measured is false when
	// that happened during the warmup, so nothing was measured.
	Stopped, Measured bool
	// GraceExpired says the grace period ended with requests still in
	// flight; Cut is how many there were, and were cut. Bench prints it and
	// a burst's report shows it.
	GraceExpired bool
	Cut          int
	// ClientBound names why the client may have been the bottleneck; empty
	// when it kept up.
	ClientBound string
	// GPU is what the GPUs did over the measured requests; nil without a
	// window or without a measured span.
	GPU *gpu.WindowStats
	// ServerMetrics is what the server's own metrics said over the run; nil
	// without WithServerMetrics or when nothing was measured.
	ServerMetrics *servermetrics.Collection
	// GPUEndpoints is what the DCGM exporter endpoints said over the run;
	// nil without WithGPUTelemetry or when nothing was measured.
	GPUEndpoints *gputelemetry.Collection
}

// Execute sends the warmup, then the measured requests, and returns once the
// last of them has ended. Ending ctx stops sending and lets the requests in
// flight finish; ending reqCtx cuts them.
func (r *Run) Execute(ctx, reqCtx context.Context) Result {
	peak := r.sampleUtilisation()
	defer peak()
	var server *servermetrics.Collector
	var warmupStart time.Time
	if r.server != nil {
		o := *r.server
		if o.Logger == nil {
			o.Logger = r.logger
		}
		server, warmupStart = servermetrics.Start(o), time.Now()
	}
	var dcgm *gputelemetry.Collector
	if r.dcgm != nil {
		o := *r.dcgm
		if o.Logger == nil {
			o.Logger = r.logger
		}
		dcgm = gputelemetry.Start(o)
	}

	if p := r.plan.Warmup; p != nil {
		warmup := r.Progress()
		r.startPhase(warmup)
		r.runWarmup(ctx, reqCtx, p, warmup.Report)
		// AIPerf's one round robin over several URLs serves both phases.
		r.plan.Main.SetURLStart(p.Started())
		if ctx.Err() != nil {
			if server != nil {
				server.Stop(time.Now())
			}
			if dcgm != nil {
				dcgm.Stop(time.Now())
			}
			return Result{Summary: r.report.Summary(), Report: r.report, Digest: r.Digest(), RunID: r.RunID(), Stopped: true}
		}
	}
	var profilingStart time.Time
	if server != nil {
		profilingStart = server.Mark() // the reading the run's increases count from
	}
	var dcgmStart time.Time
	if dcgm != nil {
		dcgmStart = dcgm.Mark() // the baseline of the GPUs' counters
	}
	r.startPhase(Progress{Phase: PhaseProfiling, Report: r.report, Limit: r.plan.Limit})

	flying := &inFlight{}
	var rec prober.Recorder = prober.Tee(flying, r.report)
	if r.sink != nil {
		rec = prober.Tee(flying, r.sink, r.report)
	}
	cutCtx, cut := context.WithCancel(reqCtx)
	defer cut()
	finished := make(chan struct{})
	graceEnd := make(chan graceEnded, 1)
	go func() { graceEnd <- r.endInFlight(ctx, cut, finished, flying) }()
	r.plan.Main.Run(ctx, cutCtx, r.exec, rec)
	close(finished)
	ended := <-graceEnd

	res := Result{
		Summary:      r.report.Summary(),
		Report:       r.report,
		Digest:       r.Digest(),
		RunID:        r.RunID(),
		Stopped:      ctx.Err() != nil,
		Measured:     true,
		GraceExpired: ended.expired,
		Cut:          ended.cut,
	}
	if server != nil {
		res.ServerMetrics = server.Stop(profilingStart)
		if r.plan.Warmup != nil {
			res.ServerMetrics.WarmupStart = warmupStart
		}
	}
	if dcgm != nil {
		res.GPUEndpoints = dcgm.Stop(dcgmStart)
	}
	s := res.Summary
	peakCPU, peakSched := peak()
	res.ClientBound = report.PausedReason(s.ClientPaused)
	if res.ClientBound == "" {
		res.ClientBound = report.SaturationReason(time.Duration(s.ScheduleLag.P99*float64(time.Second)), s.ScheduleLag.Count, peakCPU, peakSched)
	}
	if res.ClientBound == "" {
		res.ClientBound = report.ShortRunLagReason(time.Duration(s.ScheduleLag.P50*float64(time.Second)), s.ScheduleLag.Count)
	}
	if r.gpu != nil && s.End.After(s.Start) {
		st := r.gpu.Stats(s.Start, s.End, int64(s.OutputTokensTotal))
		res.GPU = &st
	}
	return res
}

// runWarmup sends the warmup and waits for its requests; with a warmup
// grace period, those still in flight that long after its last send are cut.
func (r *Run) runWarmup(ctx, reqCtx context.Context, p *prober.Probe, rec prober.Recorder) {
	if r.plan.WarmupGrace == nil {
		p.Run(ctx, reqCtx, r.exec, rec)
		return
	}
	cutCtx, cut := context.WithCancel(reqCtx)
	defer cut()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-p.SendingEnded():
		case <-done:
			return
		}
		t := time.NewTimer(*r.plan.WarmupGrace)
		defer t.Stop()
		select {
		case <-t.C:
			cut()
		case <-done:
		}
	}()
	p.Run(ctx, cutCtx, r.exec, rec)
}

// sampleUtilisation samples the executor's load, when it can tell it, until
// the returned function is called; that returns the peaks (and may be called
// again).
func (r *Run) sampleUtilisation() (peaks func() (float64, time.Duration)) {
	u, ok := r.exec.(Utiliser)
	if !ok {
		return func() (float64, time.Duration) { return 0, 0 }
	}
	var cpu float64
	var sched time.Duration
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(utilisationEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				c, s := u.Utilisation()
				cpu, sched = max(cpu, c), max(sched, s)
			}
		}
	}()
	var once sync.Once
	return func() (float64, time.Duration) {
		once.Do(func() { close(stop); <-sampled })
		return cpu, sched
	}
}

// endInFlight waits for the run to send its last request — the prober ends
// it by its own limit, on its own timeline, so runs with the same seed send
// the same requests — then cuts what is still in flight after the grace
// period (Plan.Grace, GraceFor its limit), and reports whether it had to
// and how many it cut.
func (r *Run) endInFlight(ctx context.Context, cut context.CancelFunc, finished <-chan struct{}, flying *inFlight) graceEnded {
	select {
	case <-r.plan.Main.SendingEnded():
	case <-ctx.Done(): // stopped: whoever stopped it decides about the requests
		return graceEnded{}
	case <-finished:
		return graceEnded{}
	}
	if r.plan.Grace < 0 {
		return graceEnded{}
	}
	grace := time.NewTimer(r.plan.Grace)
	defer grace.Stop()
	select {
	case <-grace.C:
		n := int(flying.n.Load())
		r.logger.Warn("grace period over; cancelling the requests still in flight", "grace", r.plan.Grace, "in_flight", n)
		cut()
		return graceEnded{expired: true, cut: n}
	case <-finished:
		return graceEnded{}
	}
}

// graceEnded is how a run's grace period ended.
type graceEnded struct {
	expired bool
	cut     int // requests in flight when it ended
}

// inFlight counts the measured requests started and not yet recorded.
type inFlight struct{ n atomic.Int64 }

func (f *inFlight) Started()               { f.n.Add(1) }
func (f *inFlight) Observe(*record.Record) { f.n.Add(-1) }
