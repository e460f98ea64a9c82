// Package daemon runs inferprobe serve: it keeps the configured probes running,
// reloads the scenario file safely, and serves the HTTP surface.
package daemon

import (
	"context"
	"log/slog"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Daemon owns the running probes and the configuration they come from.
type Daemon struct {
	logger   *slog.Logger
	load     func() (*scenarios.Config, error)
	exec     prober.Executor
	shard    record.Shard
	registry *prometheus.Registry
	requests *collector.Requests
	self     *collector.Self

	reloads chan chan error

	// reqCtx bounds every request; it ends only at shutdown, so a probe stopped
	// by a reload lets its in-flight requests finish.
	reqCtx         context.Context
	cancelRequests context.CancelFunc
	grace          time.Duration
	clientLoad     collector.ClientLoad
	saturation     *collector.Saturation
	bursts         *burstManager
	failures       *failures

	mu      sync.Mutex
	config  *scenarios.Config
	probes  map[string]*running
	lastErr error
	loaded  time.Time
	runs    sync.WaitGroup
}

// running is one probe's goroutine and what it was started from.
type running struct {
	probe  *prober.Probe
	spec   probeSpec
	labels collector.Labels
	stop   context.CancelFunc
	done   chan struct{} // closed when the probe and its requests have ended
	// summary is the landing page's view of the probe's recent requests.
	summary *probeSummary
}

// probeSpec is everything that, when changed, makes a probe restart.
type probeSpec struct {
	seed   uint64
	probe  scenarios.Probe
	target scenarios.Target
}

// Option changes how New sets up a daemon.
type Option func(*Daemon)

// WithShard makes every probe send only shard's share of its request sequence
// (--shard=i/n; in a StatefulSet, pod ordinal i of n replicas), so that n
// replicas together send what one would. See record.Shard.
func WithShard(shard record.Shard) Option { return func(d *Daemon) { d.shard = shard } }

// WithClientLoad tells the daemon how loaded its worker processes are, one of
// the signals of inferprobe_client_saturated.
func WithClientLoad(load collector.ClientLoad) Option {
	return func(d *Daemon) { d.clientLoad = load }
}

// WithGracePeriod sets how long shutdown waits for requests in flight before
// cancelling them. Without it they are cancelled at once.
func WithGracePeriod(grace time.Duration) Option { return func(d *Daemon) { d.grace = grace } }

// New returns a daemon that reads its configuration with load and sends
// requests with exec. It registers its metrics with reg and serves reg's
// metrics, the caller's too, on /metrics.
func New(logger *slog.Logger, reg *prometheus.Registry, load func() (*scenarios.Config, error), exec prober.Executor, opts ...Option) *Daemon {
	reqCtx, cancelRequests := context.WithCancel(context.Background())
	d := &Daemon{
		reqCtx:         reqCtx,
		cancelRequests: cancelRequests,
		logger:         logger,
		load:           load,
		exec:           exec,
		registry:       reg,
		requests:       collector.NewRequests(reg),
		self:           collector.NewSelf(reg),
		probes:         map[string]*running{},
		reloads:        make(chan chan error),
		failures:       newFailures(logger),
	}
	d.bursts = newBurstManager(d) // before the options, which set it up
	for _, o := range opts {
		o(d)
	}
	d.saturation = collector.NewSaturation(reg, logger, d.clientLoad)
	d.requests.FeedSaturation(d.saturation)
	return d
}

// Run loads the configuration and starts the probes, then serves reload
// requests until ctx ends; it returns after every probe and request has ended.
// A bad initial configuration is returned as an error; a bad reload is logged
// and keeps the running configuration.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.cancelRequests()
	d.bursts.history.load() // before the first load, which restores last-run gauges from it
	if err := d.Reload(); err != nil {
		return err
	}
	d.bursts.startSchedules(ctx)
	check := time.NewTicker(time.Second)
	defer check.Stop()
	for {
		select {
		case now := <-check.C:
			d.saturation.Check(now)
		case <-ctx.Done():
			d.drain()
			return nil
		case reply := <-d.reloads:
			reply <- d.Reload()
		}
	}
}

// drain stops issuing requests, lets those in flight finish for up to the
// grace period, then cuts the rest, which are counted as cancelled.
func (d *Daemon) drain() {
	d.stopAll()
	d.bursts.shutdown()
	done := make(chan struct{})
	go func() {
		d.runs.Wait()
		d.bursts.wg.Wait()
		close(done)
	}()
	grace := time.NewTimer(d.grace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C:
		d.logger.Warn("grace period over; cancelling requests still in flight", "grace", d.grace)
	}
	d.cancelRequests()
	<-done
}

// RequestReload asks Run to reload the configuration (SIGHUP, /-/reload) and
// returns the outcome.
func (d *Daemon) RequestReload(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case d.reloads <- reply:
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-reply
}

// Reload reads the configuration again and applies it. On error nothing
// changes and the error says why.
func (d *Daemon) Reload() error {
	cfg, err := d.load()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		err = d.apply(cfg)
	}
	if err != nil {
		d.lastErr = err
		d.self.ReloadSuccessful.Set(0)
		if d.config == nil {
			d.logger.Error("configuration not loaded", "err", err)
		} else {
			d.logger.Error("configuration not reloaded; keeping the previous one", "err", err)
		}
		return err
	}
	d.config, d.lastErr, d.loaded = cfg, nil, time.Now()
	d.self.ReloadSuccessful.Set(1)
	d.self.ReloadTimestamp.Set(float64(d.loaded.Unix()))
	d.self.Probes.Set(float64(len(d.probes)))
	d.logger.Info("configuration loaded", "probes", len(d.probes), "targets", len(cfg.Targets))
	for _, w := range cfg.AlertRateWarnings() {
		d.logger.Warn("probe rate too low for the shipped alerts", "warning", w)
	}
	return nil
}

// apply makes the running probes match cfg. Unchanged probes keep running, so
// a reload does not reset their schedules. Everything that can fail is checked
// before anything is stopped.
func (d *Daemon) apply(cfg *scenarios.Config) error {
	targets, err := prober.Build(cfg)
	if err != nil {
		return err
	}
	next := map[string]*running{}
	for _, name := range sortedKeys(cfg.Probes) {
		p := cfg.Probes[name]
		t := cfg.Targets[p.Target]
		spec := probeSpec{seed: cfg.Global.Seed, probe: *p, target: *t}
		// A probe that stopped by itself (its dataset failed) restarts, so
		// a reload after fixing the file brings it back.
		if old, ok := d.probes[name]; ok && reflect.DeepEqual(old.spec, spec) && !old.ended() {
			next[name] = old
			continue
		}
		probe, err := prober.NewProbe(name, p, targets[p.Target], cfg.Global.Seed, d.shard)
		if err != nil {
			return err
		}
		next[name] = &running{
			probe:   probe,
			spec:    spec,
			labels:  collector.Labels{Target: p.Target, Model: t.Model, Scenario: name, Phase: "probe"},
			summary: &probeSummary{},
		}
	}
	d.failures.retain(targets)
	for name, old := range d.probes {
		if next[name] == old {
			continue
		}
		old.stop()
		if n, ok := next[name]; !ok || n.labels != old.labels {
			d.forgetWhenDone(old)
		}
	}
	for name, r := range next {
		if r.stop == nil {
			d.start(r)
			d.logger.Info("probe started", "probe", name, "target", r.labels.Target, "run_id", r.probe.RunID().String())
		}
	}
	d.probes = next
	d.bursts.apply(cfg, targets)
	return nil
}

func (d *Daemon) start(r *running) {
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	rec := prober.Tee(d.requests.Series(r.labels, report.NewSLO(r.spec.probe.SLO)), d.failures.recorder(r.probe.Target, r.labels.Scenario), r.summary)
	r.done = make(chan struct{})
	d.runs.Go(func() {
		defer close(r.done)
		r.probe.Run(ctx, d.reqCtx, d.exec, rec)
	})
}

// ended reports whether r's probe and its requests have ended on their own.
func (r *running) ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// forgetWhenDone drops a removed probe's series once its last request has
// ended, so its metrics disappear instead of going flat.
func (d *Daemon) forgetWhenDone(r *running) {
	go func() {
		<-r.done
		d.mu.Lock()
		defer d.mu.Unlock()
		// A later reload may have brought the probe back; its series are live again.
		for _, p := range d.probes {
			if p.labels == r.labels {
				return
			}
		}
		d.requests.Forget(r.labels)
	}()
}

func (d *Daemon) stopAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.probes {
		r.stop()
	}
}

// Status is a snapshot for /api/v1/status.
type Status struct {
	ReloadSuccessful bool        `json:"reload_successful"`
	LastError        string      `json:"last_error,omitempty"`
	LoadedAt         time.Time   `json:"loaded_at"`
	Probes           []string    `json:"probes"`
	Bursts           []BurstInfo `json:"bursts"`
	// Runs are the burst runs queued or running, oldest first.
	Runs []RunInfo `json:"runs"`
	// TargetErrors holds the last failure of each target × reason that has
	// failed, by target and reason, and whether it still fails.
	TargetErrors []TargetError `json:"target_errors"`
	// Cluster is the replica's view of its peers; nil without --cluster.peers.
	Cluster *ClusterStatus `json:"cluster,omitempty"`
}

func (d *Daemon) status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := Status{ReloadSuccessful: d.lastErr == nil, LoadedAt: d.loaded, Probes: sortedKeys(d.probes)}
	if d.lastErr != nil {
		s.LastError = d.lastErr.Error()
	}
	s.Bursts, s.Runs, s.TargetErrors = d.Bursts(), d.bursts.activeRuns(), d.failures.snapshot()
	s.Cluster = d.bursts.clusterStatus()
	return s
}

func (d *Daemon) ready() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.config != nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
