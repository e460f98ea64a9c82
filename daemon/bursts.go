package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/collector/gpu"
	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// errShuttingDown refuses a trigger that comes while the daemon drains.
var errShuttingDown = errors.New("inferprobe is shutting down; no new burst runs start")

// cancelWait bounds how long CancelBurst waits for a cancelled run's
// requests to end, so that it can return the run's final report.
const cancelWait = 5 * time.Second

// WithHistory keeps the last size finished burst runs (--storage.history-size)
// and, when dir is not empty (--storage.path), one JSON file per run in dir,
// so that reports and last-run gauges survive a restart.
func WithHistory(dir string, size int) Option {
	return func(d *Daemon) { d.bursts.history.dir, d.bursts.history.size = dir, max(size, 1) }
}

// WithGPUWindow adds what the GPUs did during each burst run to its report.
func WithGPUWindow(w *gpu.Window) Option { return func(d *Daemon) { d.bursts.gpu = w } }

// burstManager runs the configured bursts, on their schedules and on demand,
// one at a time per target.
type burstManager struct {
	d       *Daemon
	clock   clock
	gpu     *gpu.Window
	metrics *collector.Bursts
	history *history
	earlier *earlierRuns  // the samples each run is judged against
	wake    chan struct{} // schedules changed; buffered, so a send never blocks
	cluster *clusterState // nil: this replica runs its bursts alone

	mu     sync.Mutex
	bursts map[string]*burstEntry
	active []*burstRun          // queued and running, oldest first
	busy   map[string]*burstRun // by target: the run that holds it
	closed bool                 // draining: nothing new starts
	wg     sync.WaitGroup       // the schedule loop and every run
}

// burstEntry is one configured burst.
type burstEntry struct {
	name    string
	spec    burstSpec
	target  *prober.Target // spec's target, built by the last reload
	sched   *schedule      // nil: on demand only
	next    time.Time      // next scheduled start
	running *burstRun
	pending *burstRun // the run queued by overlap: queue
}

// burstSpec is everything a run is planned from; a reload that changes it
// applies to the next run.
type burstSpec struct {
	seed   uint64
	burst  scenarios.Burst
	target scenarios.Target
}

func (s *burstSpec) labels(name string) collector.Labels {
	return collector.Labels{Target: s.burst.Target, Model: s.target.Model, Scenario: name, Phase: "burst"}
}

// burstRun is one run, from queued or started to its end.
type burstRun struct {
	entry    *burstEntry // at the time it was created
	spec     burstSpec   // the entry's when the run started, which it is planned from
	target   *prober.Target
	labels   collector.Labels
	stop     context.CancelFunc // stops sending
	cancelRq context.CancelFunc // cuts the requests in flight
	done     chan struct{}      // closed once the run is in the history

	mu        sync.Mutex
	info      RunInfo
	cancelled bool
	ended     bool        // finish has taken its result
	run       *finite.Run // nil until it runs
	// A share of a cluster run (info.Cluster set) keeps its records for the
	// gatherer; the gatherer also knows its peers and what went wrong so far.
	records      *shareRecords
	peers        []clusterPeer
	problems     []ShardProblem
	peersStarted chan struct{} // closed once the gatherer knows which peers started
	// A peer's share of a cluster search takes the steps its coordinator
	// sends; nil for any other run. Set before the run is started.
	searchShare *searchShare
	// Its report and artifacts, rendered when it finished, kept by end.
	artifacts map[string]func(io.Writer) error
}

func newBurstManager(d *Daemon) *burstManager {
	metrics := collector.NewBursts(d.registry)
	return &burstManager{
		d:       d,
		clock:   realClock{},
		metrics: metrics,
		history: newHistory(d.logger, "", defaultHistorySize, metrics.StorageWriteErrors),
		earlier: newEarlierRuns(),
		wake:    make(chan struct{}, 1),
		bursts:  map[string]*burstEntry{},
		busy:    map[string]*burstRun{},
	}
}

// startSchedules runs the schedules until ctx ends.
func (m *burstManager) startSchedules(ctx context.Context) {
	m.wg.Go(func() { m.runSchedules(ctx) })
}

// Bursts lists the configured bursts, by name.
func (d *Daemon) Bursts() []BurstInfo {
	m := d.bursts
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]BurstInfo, 0, len(m.bursts))
	for _, name := range sortedKeys(m.bursts) {
		e := m.bursts[name]
		bi := BurstInfo{Name: name, Target: e.spec.burst.Target, Schedule: describe(&e.spec.burst), OnDemand: e.spec.burst.OnDemand}
		if e.sched != nil {
			bi.Next = e.next
		}
		if e.running != nil {
			bi.Running = e.running.info.ID
		}
		out = append(out, bi)
	}
	return out
}

// TriggerBurst starts burst name now with overrides o, clamped to the
// burst's maxima. It fails with ErrUnknownBurst, ErrNotOnDemand or a
// *BusyError when the target runs a burst. A run whose overrides cannot be
// applied is returned, and kept, as failed.
func (d *Daemon) TriggerBurst(name string, o BurstOverrides) (RunInfo, error) {
	m := d.bursts
	if m.cluster != nil {
		return m.triggerCluster(name, TriggerAPI, o)
	}
	m.mu.Lock()
	e, err := m.triggerable(name, TriggerAPI)
	if err != nil {
		m.mu.Unlock()
		return RunInfo{}, err
	}
	r := m.newRun(e, TriggerAPI, o)
	m.start(r)
	m.mu.Unlock()
	m.launchOne(r) // at once: the caller learns whether the run could start
	return r.snapshot(), nil
}

// triggerable is burst name if a run of it can start now by trigger; m.mu
// is held.
func (m *burstManager) triggerable(name, trigger string) (*burstEntry, error) {
	e := m.bursts[name]
	switch {
	case m.closed:
		return nil, errShuttingDown
	case e == nil:
		return nil, ErrUnknownBurst
	case trigger == TriggerAPI && !e.spec.burst.OnDemand:
		return nil, ErrNotOnDemand
	}
	if r := m.busy[e.spec.burst.Target]; r != nil {
		return nil, &BusyError{Target: e.spec.burst.Target, RunID: r.info.ID}
	}
	return e, nil
}

// BurstRun returns the run with id, running, queued or kept in the history.
func (d *Daemon) BurstRun(id string) (RunInfo, bool) {
	m := d.bursts
	m.mu.Lock()
	i := slices.IndexFunc(m.active, func(r *burstRun) bool { return r.id() == id })
	var r *burstRun
	if i >= 0 {
		r = m.active[i]
	}
	m.mu.Unlock()
	if r != nil {
		return r.snapshot(), true
	}
	return m.history.get(id)
}

// CancelBurst cancels a queued or running run: it stops sending and cuts its
// requests in flight, and returns the run once it has ended (or, should its
// requests not end within a few seconds, as it stands).
func (d *Daemon) CancelBurst(id string) (RunInfo, error) {
	m := d.bursts
	m.mu.Lock()
	i := slices.IndexFunc(m.active, func(r *burstRun) bool { return r.id() == id })
	if i < 0 {
		m.mu.Unlock()
		if _, ok := m.history.get(id); ok {
			return RunInfo{}, ErrRunFinished
		}
		return RunInfo{}, ErrUnknownRun
	}
	r := m.active[i]
	dequeued, ended := m.cancel(r, true)
	m.mu.Unlock()
	if m.cluster != nil && r.snapshot().Cluster != nil {
		m.cancelPeers(id)
	}
	if ended { // it ran to its end just before: there is nothing to cancel
		return RunInfo{}, ErrRunFinished
	}
	if dequeued {
		m.recordUnrun(r)
	}
	select {
	case <-r.done:
	case <-time.After(cancelWait):
	}
	return r.snapshot(), nil
}

// BurstRuns lists the runs queued, running and kept in the history, newest
// first.
func (d *Daemon) BurstRuns() []RunInfo {
	m := d.bursts
	m.mu.Lock()
	active := slices.Clone(m.active)
	m.mu.Unlock()
	var out []RunInfo
	seen := map[string]bool{}
	for _, r := range slices.Backward(active) {
		out = append(out, r.snapshot())
		seen[r.id()] = true
	}
	for _, r := range m.history.newestFirst() {
		if !seen[r.ID] { // a run that ends now is in both for a moment
			out = append(out, r)
		}
	}
	return out
}

// activeRuns lists the queued and running runs, oldest first, for the status.
func (m *burstManager) activeRuns() []RunInfo {
	m.mu.Lock()
	active := slices.Clone(m.active)
	m.mu.Unlock()
	out := make([]RunInfo, 0, len(active))
	for _, r := range active {
		out = append(out, r.snapshot())
	}
	return out
}

// apply makes the bursts match cfg, whose targets are built. Runs in
// progress keep the settings they started with; a removed burst's runs are
// cancelled.
func (m *burstManager) apply(cfg *scenarios.Config, targets map[string]*prober.Target) {
	var ended []*burstRun
	var gone []collector.Labels
	m.mu.Lock()
	now := m.clock.Now()
	for _, name := range sortedKeys(cfg.Bursts) {
		b := cfg.Bursts[name]
		spec := burstSpec{seed: cfg.Global.Seed, burst: *b, target: *cfg.Targets[b.Target]}
		e := m.bursts[name]
		added := e == nil
		if added {
			e = &burstEntry{name: name}
			m.bursts[name] = e
		}
		e.target = targets[b.Target]
		if !added && reflect.DeepEqual(e.spec, spec) {
			continue
		}
		oldLabels, oldSchedule := e.spec.labels(name), describe(&e.spec.burst)
		e.spec = spec
		if describe(b) != oldSchedule {
			e.sched = newSchedule(b)
			if e.sched != nil {
				e.next = e.sched.next(now)
			}
		}
		// A run in progress keeps its labels; its series go when it ends.
		if !added && oldLabels != spec.labels(name) && (e.running == nil || e.running.labels != oldLabels) {
			m.forget(oldLabels, b.Target)
		}
		if e.pending != nil && oldLabels.Target != b.Target {
			// The queued run will run on the new target; counted on the old
			// one, its end would bring back the series forgotten above.
			e.pending.mu.Lock()
			e.pending.info.Target = b.Target
			e.pending.mu.Unlock()
		}
		if added || oldLabels.Target != b.Target {
			m.metrics.Declare(name, b.Target)
			m.restoreLast(name, b.Target)
		}
	}
	for _, name := range sortedKeys(m.bursts) {
		e := m.bursts[name]
		if cfg.Bursts[name] != nil {
			continue
		}
		delete(m.bursts, name)
		if e.pending != nil {
			if dequeued, _ := m.cancel(e.pending, false); dequeued {
				ended = append(ended, e.pending)
			}
		}
		if e.running != nil {
			m.cancel(e.running, true)
		} else {
			gone = append(gone, e.spec.labels(name))
		}
	}
	started := m.startQueued()
	m.mu.Unlock()
	for _, r := range ended {
		m.recordUnrun(r)
	}
	for _, l := range gone { // after recording, which would bring back their counters
		m.forget(l, "")
	}
	m.launch(started...)
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// forget drops the request series of labels a burst no longer has, and its
// burst series unless they are still those of its target (current).
func (m *burstManager) forget(l collector.Labels, current string) {
	m.d.requests.Forget(l)
	if l.Target != current {
		m.metrics.Forget(l.Scenario, l.Target)
		m.earlier.forget(l.Scenario, l.Target)
	}
}

// restoreLast shows the newest completed run in the history on the last-run
// gauges, so that they survive a restart.
func (m *burstManager) restoreLast(name, target string) {
	if r, ok := m.history.lastSucceeded(name, m.onGauges); ok && r.Target == target {
		m.metrics.SetLast(name, target, collector.BurstResult{Summary: r.Report.Summary, End: unixSeconds(r.Ended)})
		if r.Search != nil {
			m.metrics.SetCapacity(name, target, r.Search.gauges(unixSeconds(r.Ended)))
		}
	}
}

// startDue starts the bursts whose scheduled time has come, and returns the
// next scheduled start (zero when there is none).
func (m *burstManager) startDue(now time.Time) time.Time {
	var started []*burstRun
	var clustered []string
	var next time.Time
	m.mu.Lock()
	for _, name := range sortedKeys(m.bursts) {
		e := m.bursts[name]
		if e.sched == nil {
			continue
		}
		if !e.next.After(now) && !m.closed {
			if m.cluster != nil {
				clustered = append(clustered, name)
			} else if r := m.scheduled(e, now); r != nil {
				started = append(started, r)
			}
			e.next = e.sched.after(e.next, now)
		}
		if next.IsZero() || e.next.Before(next) {
			next = e.next
		}
	}
	m.mu.Unlock()
	m.launch(started...)
	for _, name := range clustered {
		m.wg.Go(func() { m.scheduleCluster(name) })
	}
	return next
}

// scheduled handles a scheduled start of e: it starts, or, while the target
// is busy, is skipped or queued; m.mu is held. It returns the run started,
// for launch.
func (m *burstManager) scheduled(e *burstEntry, now time.Time) *burstRun {
	b := &e.spec.burst
	if holder := m.busy[b.Target]; holder != nil {
		if b.Overlap == scenarios.OverlapQueue && e.pending == nil {
			r := m.newRun(e, TriggerSchedule, BurstOverrides{})
			r.info.State, r.info.Queued = RunQueued, now
			e.pending = r
			m.active = append(m.active, r)
			m.metrics.Queued(e.name, b.Target)
			m.d.logger.Info("burst queued: its target is busy", "burst", e.name, "run", r.info.ID, "busy_with", holder.info.ID)
			return nil
		}
		m.metrics.Skipped(e.name, b.Target)
		m.d.logger.Warn("scheduled burst skipped: its target is busy", "burst", e.name, "busy_with", holder.info.ID, "overlap", b.Overlap)
		return nil
	}
	r := m.newRun(e, TriggerSchedule, BurstOverrides{})
	m.start(r)
	return r
}

// startQueued starts the queued runs, oldest first, whose targets are free,
// and returns them, for launch; m.mu is held.
func (m *burstManager) startQueued() []*burstRun {
	var started []*burstRun
	for _, r := range slices.Clone(m.active) {
		e := m.bursts[r.info.Burst]
		if r.info.State != RunQueued || m.closed || e == nil || m.busy[e.spec.burst.Target] != nil {
			continue
		}
		e.pending = nil
		m.active = slices.DeleteFunc(m.active, func(a *burstRun) bool { return a == r })
		r.entry = e
		r.mu.Lock()
		r.info.Target = e.spec.burst.Target // a reload may have moved the burst
		r.mu.Unlock()
		m.start(r)
		started = append(started, r)
	}
	return started
}

// newRun creates a run of e; m.mu is held.
func (m *burstManager) newRun(e *burstEntry, trigger string, o BurstOverrides) *burstRun {
	var b [4]byte
	_, _ = rand.Read(b[:])
	now := m.clock.Now()
	return &burstRun{
		entry: e,
		done:  make(chan struct{}),
		info: RunInfo{
			ID:    now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:]),
			Burst: e.name, Target: e.spec.burst.Target, Trigger: trigger, Overrides: o,
		},
	}
}

// start gives r its target; m.mu is held, and the manager is not closed.
// launch, called once m.mu is released, then plans the run and sets it
// going: planning reads the burst's dataset file, which can take seconds
// that the API, the status page and reloads must not wait for. Meanwhile
// the run shows as running without a report, and holds its target.
func (m *burstManager) start(r *burstRun) {
	e := r.entry
	r.mu.Lock()
	r.info.State, r.info.Started = RunRunning, m.clock.Now()
	r.spec, r.target, r.labels = e.spec, e.target, e.spec.labels(e.name)
	r.mu.Unlock()
	e.running = r
	m.busy[e.spec.burst.Target] = r
	m.active = append(m.active, r)
	m.wg.Add(1) // done by launch, so a drain waits for the planning too
}

// launch launches each run that start gave a target, each in the
// background: its caller may hold the daemon's lock (a reload), or be
// due to start other targets' runs (the schedule loop).
func (m *burstManager) launch(runs ...*burstRun) {
	for _, r := range runs {
		go m.launchOne(r)
	}
}

// launchOne plans r and sets it going, or ends it: failed when it cannot be
// planned, cancelled when it was cancelled while it was being planned. m.mu
// is not held.
func (m *burstManager) launchOne(r *burstRun) {
	defer m.wg.Done()
	e := r.entry
	r.mu.Lock()
	spec, target, o := r.spec, r.target, r.info.Overrides
	var startAt time.Time // every share of a cluster run starts at the instant agreed
	if r.info.Cluster != nil {
		startAt = r.info.Cluster.StartAt
	}
	r.mu.Unlock()
	planned := spec
	if spec.burst.Search != nil {
		// Each step sets its own concurrency: this plan checks the rest, at
		// a concurrency of which every shard has a share.
		planned.burst.Arrival.Concurrency = max(planned.burst.Arrival.Concurrency, m.shardOf().Count)
	}
	plan, adjusted, err := planRun(e.name, &planned, target, o, m.d.shard, startAt)

	m.mu.Lock()
	r.mu.Lock()
	r.info.Adjusted = adjusted
	if err != nil || r.cancelled {
		final := r.info
		final.State, final.Ended = RunCancelled, m.clock.Now()
		if !r.cancelled {
			final.State, final.Error = RunFailed, err.Error()
			m.d.logger.Error("burst run failed to start", "burst", e.name, "run", final.ID, "err", err)
		}
		r.ended = true
		r.mu.Unlock()
		m.mu.Unlock()
		m.end(r, final)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	reqCtx, cancelRq := context.WithCancel(m.d.reqCtx)
	r.stop, r.cancelRq = stop, cancelRq
	sink := prober.Tee(m.d.requests.Series(r.labels, plan.SLO), m.d.failures.recorder(target, e.name))
	if r.info.Cluster != nil {
		r.records = &shareRecords{}
		sink = prober.Tee(sink, r.records)
	}
	newRun := func(plan *finite.Plan) *finite.Run {
		return finite.New(plan, m.d.exec,
			finite.WithRecorder(sink),
			finite.WithGPUWindow(m.gpu),
			finite.WithLogger(m.d.logger.With("burst", e.name, "run", r.info.ID)),
			withServerMetrics(target))
	}
	if spec.burst.Search == nil {
		r.run = newRun(plan)
	}
	r.mu.Unlock()
	m.metrics.Running(e.name, r.info.Target, true)
	m.d.logger.Info("burst run started", "burst", e.name, "run", r.info.ID, "trigger", r.info.Trigger, "target", r.info.Target)
	m.wg.Go(func() {
		defer stop()
		defer cancelRq()
		switch {
		case r.searchShare != nil:
			m.runSearchShare(r, &spec, target, newRun, ctx, reqCtx)
			return
		case spec.burst.Search != nil:
			m.search(r, &spec, target, newRun, ctx, reqCtx)
			return
		}
		m.finish(r, r.run.Execute(ctx, reqCtx), nil)
	})
	m.mu.Unlock()
}

// cancel marks r cancelled; m.mu is held. A running run stops sending and,
// with cut, cuts its requests in flight (a draining daemon lets them finish
// within its grace period instead). A queued run is dequeued at once: it
// reports dequeued, and the caller records it once m.mu is released. A run
// whose result finish has already taken is left as it is: it reports ended.
func (m *burstManager) cancel(r *burstRun, cut bool) (dequeued, ended bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return false, true
	}
	r.cancelled = true
	if r.info.State == RunQueued {
		if r.entry.pending == r {
			r.entry.pending = nil
		}
		m.active = slices.DeleteFunc(m.active, func(a *burstRun) bool { return a == r })
		r.info.State, r.info.Ended = RunCancelled, m.clock.Now()
		return true, false
	}
	if r.stop == nil { // being planned: launch ends it
		return false, false
	}
	r.stop()
	if cut {
		r.cancelRq()
	}
	return false, false
}

// shutdown stops every run for the drain: queued runs are cancelled,
// running ones stop sending and their requests in flight may finish.
func (m *burstManager) shutdown() {
	var dequeued []*burstRun
	m.mu.Lock()
	m.closed = true
	for _, r := range slices.Clone(m.active) {
		if dq, _ := m.cancel(r, false); dq {
			dequeued = append(dequeued, r)
		}
	}
	m.mu.Unlock()
	for _, r := range dequeued {
		m.recordUnrun(r)
	}
}

// planRun applies o to the settings of burst name, each lowered to its
// maximum (adjusted says which), and plans one run of it, whose measured
// requests start at startAt (zero: when ready).
func planRun(name string, spec *burstSpec, target *prober.Target, o BurstOverrides, shard record.Shard, startAt time.Time) (plan *finite.Plan, adjusted []Adjustment, err error) {
	b := spec.burst
	if o.Duration < 0 || o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) || o.Concurrency < 0 {
		return nil, nil, fmt.Errorf("overrides must be >= 0 (0 keeps the configured value), got %+v", o)
	}
	limit := prober.Limit{Duration: time.Duration(b.Duration), Requests: b.Requests}
	if o.Duration > 0 {
		limit.Duration = lowerTo("duration", o.Duration, time.Duration(b.Max.Duration), &adjusted)
	}
	if o.Requests > 0 {
		limit.Requests = lowerTo("requests", o.Requests, b.Max.Requests, &adjusted)
	}
	if o.Rate > 0 {
		switch {
		case b.Arrival.Pattern == scenarios.ArrivalConcurrency || len(b.Arrival.Series) > 0:
			return nil, nil, fmt.Errorf("burst %s has no arrival rate to override (pattern %s%s); override concurrency, duration or requests instead",
				name, b.Arrival.Pattern, map[bool]string{true: " with a series"}[len(b.Arrival.Series) > 0])
		case b.Dataset.Replays(): // the rate would be silently ignored
			return nil, nil, fmt.Errorf("burst %s has no arrival rate to override: it sends at its dataset's timestamps (timing: replay); override concurrency, duration or requests instead", name)
		}
		// A ramp may start from rate 0, which makes the default max.rate 0:
		// lowerTo would read that as "no limit" and let the override raise it.
		if !(b.Max.Rate > 0) {
			return nil, nil, fmt.Errorf("burst %s ramps its rate up from 0, so a rate override has no configured rate to stay under; set max.rate in the scenario file, or override duration or requests instead", name)
		}
		b.Arrival.Rate = lowerTo("rate", o.Rate, b.Max.Rate, &adjusted)
	}
	if o.Concurrency > 0 {
		closed := b.Arrival.Pattern == scenarios.ArrivalConcurrency
		if closed && b.Max.Concurrency <= 0 { // a closed loop ramping up from 0, as above
			return nil, nil, fmt.Errorf("burst %s ramps its concurrency up from 0, so a concurrency override has no configured concurrency to stay under; set max.concurrency in the scenario file, or override duration or requests instead", name)
		}
		c := lowerTo("concurrency", o.Concurrency, b.Max.Concurrency, &adjusted)
		if closed {
			b.Arrival.Concurrency = c
		} else {
			b.Arrival.MaxConcurrency = c
		}
	}
	// Names outside the probe namespace ('/' is not allowed in a probe
	// name), so a burst never draws a probe's seeded streams.
	plan, err = finite.NewPlan(finite.Spec{
		Name: "burst/" + name, WarmupName: "burst/" + name + "/warmup",
		Probe: b.Probe(), Target: target, Seed: spec.seed, Shard: shard, StartAt: startAt,
		Limit:  limit,
		Warmup: prober.Limit{Requests: b.Warmup.Requests, Duration: time.Duration(b.Warmup.Duration)},
		Grace:  time.Duration(b.GracePeriod),
	})
	return plan, adjusted, err
}

// lowerTo is the override v of field, lowered to the burst's max.field when
// it has one (> 0) and v is above it; adjusted says so.
func lowerTo[T time.Duration | uint64 | float64 | int](field string, v, limit T, adjusted *[]Adjustment) T {
	if limit <= 0 || v <= limit {
		return v
	}
	*adjusted = append(*adjusted, Adjustment{Field: field, Asked: fmt.Sprint(v), Used: fmt.Sprint(limit),
		Why: fmt.Sprintf("above the burst's max.%s in the scenario file", field)})
	return limit
}

// finish records r's result and frees its target; search is set when r
// was a capacity search, and res is then its step at the answer.
func (m *burstManager) finish(r *burstRun, res finite.Result, search *SearchReport) {
	now := m.clock.Now()
	r.mu.Lock()
	r.ended = true // a cancel from now on comes too late
	result := RunSucceeded
	if r.cancelled {
		result = RunCancelled
	}
	r.mu.Unlock()
	report := newBurstReport(res.Report, res.Digest.String(), res.RunID.String(), res.GPU)
	r.mu.Lock()
	final := r.info
	r.mu.Unlock()
	gatherer := final.Cluster != nil && m.onGauges(final)
	switch {
	case gatherer && search != nil: // res is already the step's across the replicas
		final.Cluster = m.searchCluster(r)
	case gatherer:
		report, final.Cluster = m.gather(r, result, report)
	}
	// This replica's run policy verdicts, which the gathered report keeps.
	report.ClientBound, report.GraceExpired, report.GraceCut = res.ClientBound, res.GraceExpired, res.Cut
	// After the gather, so that the engine's TTFT stands beside the whole run's.
	if res.ServerMetrics != nil && len(res.ServerMetrics.Successful()) > 0 {
		report.ServerMetrics = res.ServerMetrics.Report(report.Summary.TTFT)
	}
	if result == RunSucceeded && m.onGauges(final) {
		// A search's step at its answer is at another load each time:
		// earlier runs are no baseline for it.
		if search == nil {
			report.Regression = m.earlier.judge(r.info.Burst, r.info.Target, report.samples)
		}
		m.metrics.SetLast(r.info.Burst, r.info.Target, collector.BurstResult{Summary: report.Summary, End: unixSeconds(now), Regressions: report.Regression.gauges()})
		if search != nil {
			m.metrics.SetCapacity(r.info.Burst, r.info.Target, search.gauges(unixSeconds(now)))
		}
	}
	// A search's report is one step's, and a share's is part of a run: neither is a run
	// of its own to describe; nor is a run cancelled in its warmup, which measured nothing.
	if search == nil && r.run != nil && res.Measured && m.onGauges(final) {
		r.artifacts = m.artifactFiles(r, result == RunCancelled, report, res)
	}
	report.dropSamples() // the history keeps the report, and need not keep them
	m.metrics.Running(r.info.Burst, r.info.Target, false)
	final.State, final.Ended, final.Report, final.Search = result, now, report, search
	if final.Cluster != nil && !gatherer {
		m.cluster.keep(r)
	}
	m.end(r, final)
	if gatherer {
		m.handOut(r, final)
	}
}

// end records a started run as final, frees its target and starts the
// queued runs that waited for it.
func (m *burstManager) end(r *burstRun, final RunInfo) {
	m.record(final)
	// After the run's own record: on a disk with room for only one of them, the result is
	// what must survive. Before the run shows as ended, so that whoever sees it ended can
	// fetch its report. A run that cannot keep them loses them, never its result.
	if r.artifacts != nil {
		if err := m.history.keepArtifacts(final.ID, r.artifacts); err != nil {
			m.d.logger.Error("cannot keep the burst run's report and artifacts; its result is kept", "run", final.ID, "err", err)
		}
		r.artifacts = nil
	}

	// The run shows as ended only now, with its target free: whoever sees it
	// ended can start the next one.
	m.mu.Lock()
	r.mu.Lock()
	r.info = final
	r.mu.Unlock()
	m.active = slices.DeleteFunc(m.active, func(a *burstRun) bool { return a == r })
	if m.busy[r.info.Target] == r {
		delete(m.busy, r.info.Target)
	}
	if r.entry.running == r {
		r.entry.running = nil
	}
	// A burst removed, or moved to other labels, while it ran: its old series go now.
	if e := m.bursts[r.info.Burst]; e == nil {
		m.forget(r.labels, "")
	} else if l := e.spec.labels(e.name); l != r.labels {
		m.forget(r.labels, l.Target)
	}
	started := m.startQueued()
	m.mu.Unlock()
	close(r.done)
	m.launch(started...)
}

// record keeps an ended run in the history and counts it.
func (m *burstManager) record(info RunInfo) {
	m.metrics.Ended(info.Burst, info.Target, info.State)
	m.history.add(info)
	m.d.logger.Info("burst run ended", "burst", info.Burst, "run", info.ID, "state", info.State)
}

// recordUnrun records a run cancelled while queued, which has nothing else
// to close done.
func (m *burstManager) recordUnrun(r *burstRun) {
	m.record(r.snapshot())
	close(r.done)
}

func (r *burstRun) id() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.info.ID
}

// snapshot is r as the API shows it; a running run's report is its progress.
func (r *burstRun) snapshot() RunInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	info := r.info
	if info.State == RunRunning && r.run != nil {
		info.Report = &BurstReport{Summary: r.run.Report().Summary(), Digest: r.run.Digest().String(), RunID: r.run.RunID().String()}
	}
	return info
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
