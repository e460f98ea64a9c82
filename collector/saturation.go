package collector

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/report"
)

// The thresholds are report's (report.SaturationReason); these bound how
// they are applied live.
const (
	lagWindow = time.Minute
	// A client hovering at a threshold flips every few seconds; after one
	// warning the flips go to debug for this long (the gauge still follows).
	saturationQuiet = 10 * time.Minute
	// lagCapacity bounds the window's memory at high request rates; at
	// 1,000 requests/s it holds the last 8 s.
	lagCapacity = 8192
)

// ClientLoad reports the busiest load worker's CPU use in cores and the
// highest Go scheduling-latency p99 among the workers.
type ClientLoad func() (cpuCores float64, schedLatencyP99 time.Duration)

// Saturation decides whether the client is the bottleneck, from the recent
// schedule lag of every request and the load of the worker processes.
type Saturation struct {
	gauge  prometheus.Gauge
	load   ClientLoad
	logger *slog.Logger

	mu        sync.Mutex
	lags      []lagSample // ring
	next      int
	paused    []time.Time // when requests that overlapped a client pause ended, within lagWindow
	saturated bool
	why       string    // the reason of the last Check's verdict; "" when not saturated
	warned    time.Time // last warning; zero before the first
	loud      bool      // the current or last episode was warned of
}

type lagSample struct {
	at  time.Time
	lag time.Duration
}

// NewSaturation registers inferprobe_client_saturated with reg. load may be
// nil when requests run in process.
func NewSaturation(reg prometheus.Registerer, logger *slog.Logger, load ClientLoad) *Saturation {
	s := &Saturation{
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "client_saturated",
			Help: "1 when inferprobe itself may be limiting the measurements: a request over the last minute overlapped a pause of the client (client_paused_requests_total), schedule lag p99 over the last minute >= 10ms, a worker using >= 0.9 CPU cores, or Go scheduling latency p99 >= 10ms.",
		}),
		load:   load,
		logger: logger,
		lags:   make([]lagSample, 0, lagCapacity),
	}
	reg.MustRegister(s.gauge)
	return s
}

func (s *Saturation) observeLag(at time.Time, lag time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lags) < cap(s.lags) {
		s.lags = append(s.lags, lagSample{at, lag})
		return
	}
	s.lags[s.next] = lagSample{at, lag}
	s.next = (s.next + 1) % len(s.lags)
}

// observePaused notes a request that overlapped a pause of the client.
func (s *Saturation) observePaused(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = slices.DeleteFunc(s.paused, func(t time.Time) bool { return at.Sub(t) > lagWindow })
	if len(s.paused) < lagCapacity {
		s.paused = append(s.paused, at)
	}
}

// Check re-evaluates the gauge as of now, logging a warning when the client
// becomes saturated and an info line when it recovers.
func (s *Saturation) Check(now time.Time) {
	why := s.reason(now)
	s.mu.Lock()
	was := s.saturated
	s.saturated, s.why = why != "", why
	if why != "" && !was {
		s.loud = s.warned.IsZero() || now.Sub(s.warned) >= saturationQuiet
		if s.loud {
			s.warned = now
		}
	}
	loud := s.loud
	s.mu.Unlock()
	level := func(l slog.Level) slog.Level {
		if loud {
			return l
		}
		return slog.LevelDebug
	}
	switch {
	case why != "" && !was:
		s.gauge.Set(1)
		s.logger.Log(context.Background(), level(slog.LevelWarn), "the client is saturated: latency figures may describe inferprobe rather than the server; add --workers, lower the rate or give inferprobe more CPU", "why", why)
	case why == "" && was:
		s.gauge.Set(0)
		s.logger.Log(context.Background(), level(slog.LevelInfo), "the client is no longer saturated")
	}
}

// reason says why the client counts as saturated, or "" if it does not.
func (s *Saturation) reason(now time.Time) string {
	s.mu.Lock()
	paused := 0
	for _, t := range s.paused {
		if now.Sub(t) <= lagWindow {
			paused++
		}
	}
	s.mu.Unlock()
	if why := report.PausedReason(paused); why != "" {
		return why
	}
	p99, n := s.lagP99(now)
	var cpu float64
	var sched time.Duration
	if s.load != nil {
		cpu, sched = s.load()
	}
	return report.SaturationReason(p99, n, cpu, sched)
}

// lagP99 is the nearest-rank p99 of the lags sent within lagWindow of now.
func (s *Saturation) lagP99(now time.Time) (time.Duration, int) {
	s.mu.Lock()
	recent := make([]time.Duration, 0, len(s.lags))
	for _, l := range s.lags {
		if now.Sub(l.at) <= lagWindow {
			recent = append(recent, l.lag)
		}
	}
	s.mu.Unlock()
	if len(recent) == 0 {
		return 0, 0
	}
	slices.Sort(recent)
	return recent[(len(recent)*99+99)/100-1], len(recent)
}

// Verdict says why the last Check found the client saturated, or "" when it did not.
func (s *Saturation) Verdict() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why
}
