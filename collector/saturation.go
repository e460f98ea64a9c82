package collector

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Thresholds past which the client, not the server, may be what the numbers
// describe. They are documented in docs/metrics.md (Client saturation).
const (
	// A p99 schedule lag of 10 ms is 1 % of a 1 s TTFT and well above what
	// an unloaded scheduler shows (a few hundred µs).
	saturatedLagP99 = 10 * time.Millisecond
	// Below this many sends in the window a p99 is one unlucky request.
	saturatedLagMinSamples = 50
	// A run too short for the p99 is judged by its median lag, from this many
	// requests: a client that keeps up sends at most 1 % of requests
	// saturatedLagP99 late, so half of 3 or more being that late by chance
	// has a probability below 3e-4, falling fast with more requests.
	shortRunLagMinSamples = 3
	// A worker using 90 % of a core has no slack to stamp chunks on time.
	saturatedWorkerCPU = 0.9
	// Goroutines waiting this long to run take their timestamps late.
	saturatedSchedLatencyP99 = 10 * time.Millisecond

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
			Help: "1 when inferprobe itself may be limiting the measurements: schedule lag p99 over the last minute >= 10ms, a worker using >= 0.9 CPU cores, or Go scheduling latency p99 >= 10ms.",
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
	p99, n := s.lagP99(now)
	var cpu float64
	var sched time.Duration
	if s.load != nil {
		cpu, sched = s.load()
	}
	return SaturationReason(p99, n, cpu, sched)
}

// SaturationReason applies the documented thresholds to a schedule-lag p99
// over n requests and to the busiest worker's CPU use and scheduling-latency
// p99. It says why the client was the bottleneck, or "" if it was not.
func SaturationReason(lagP99 time.Duration, n int, workerCPU float64, schedP99 time.Duration) string {
	switch {
	case n >= saturatedLagMinSamples && lagP99 >= saturatedLagP99:
		return fmt.Sprintf("schedule lag p99 %v over %d requests >= %v", lagP99, n, saturatedLagP99)
	case workerCPU >= saturatedWorkerCPU:
		return fmt.Sprintf("a worker process used %.2f CPU cores >= %.1f", workerCPU, saturatedWorkerCPU)
	case schedP99 >= saturatedSchedLatencyP99:
		return fmt.Sprintf("Go scheduling latency p99 %v in a worker >= %v", schedP99, saturatedSchedLatencyP99)
	}
	return ""
}

// ShortRunLagReason judges a finite run with fewer than 50 lag samples, too
// few for SaturationReason's p99: the client was the bottleneck when the
// median lag reached saturatedLagP99. It says why, or "" if it was not.
func ShortRunLagReason(lagP50 time.Duration, n int) string {
	if n >= shortRunLagMinSamples && n < saturatedLagMinSamples && lagP50 >= saturatedLagP99 {
		return fmt.Sprintf("schedule lag p50 %v over a short run of %d requests >= %v", lagP50, n, saturatedLagP99)
	}
	return ""
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
