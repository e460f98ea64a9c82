package finite

import (
	"crypto/tls"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/servermetrics"
)

// The run policy of bench and bursts alike: how a run's requests in flight
// end, when failures end a run and what its end says, and where the
// server's own metrics are read. Callers only supply the settings.

// GraceFor is the grace period of a run whose measured requests end at
// limit, given the grace period configured for a duration run: a run that
// ends by its duration gets grace (NoGrace: it waits for its requests); a
// run that ends by request count waits for every request it sent, each up
// to its request timeout (NoGrace), as AIPerf does.
func GraceFor(limit prober.Limit, grace time.Duration) time.Duration {
	if limit.Duration > 0 {
		return grace
	}
	return NoGrace
}

// InFlightBound is the longest the requests still in flight after p's last
// send may take: its grace period or, when it waits for them, timeout (the
// request timeout that bounds each).
func (p *Plan) InFlightBound(timeout time.Duration) time.Duration {
	if p.Grace == NoGrace {
		return timeout
	}
	return p.Grace
}

// ThresholdFloor is AIPerf's floor for the failed-request threshold: the
// check is armed once max(concurrency, 10) requests have finished, so one
// early failure cannot end the run.
func ThresholdFloor(concurrency int) int { return max(concurrency, 10) }

// PassesThreshold is AIPerf's rule: armed from floor finished requests on,
// it passes when failed/total exceeds threshold.
func PassesThreshold(failed, total int, threshold float64, floor int) bool {
	return total > 0 && total >= floor && float64(failed)/float64(total) > threshold
}

// FailureGuard ends a run early, as AIPerf's --failed-request-threshold
// does, once more than its threshold of the finished measured requests have
// failed. It is a prober.Recorder fed every measured request.
type FailureGuard struct {
	threshold float64
	floor     int
	flag      string // the setting named in the reason

	mu            sync.Mutex
	total, failed int
	tripped       chan struct{} // closed when the threshold is passed
	why           string
}

// NewFailureGuard guards a run with threshold (a fraction from 0 to 1),
// armed from floor finished requests; setting names the threshold's setting
// in the reason it gives.
func NewFailureGuard(threshold float64, floor int, setting string) *FailureGuard {
	return &FailureGuard{threshold: threshold, floor: floor, flag: setting, tripped: make(chan struct{})}
}

// Started is part of prober.Recorder.
func (g *FailureGuard) Started() {}

// Observe counts a finished request.
func (g *FailureGuard) Observe(rec *record.Record) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total++
	if rec.Outcome == record.OutcomeError {
		g.failed++
	}
	if g.why == "" && PassesThreshold(g.failed, g.total, g.threshold, g.floor) {
		g.why = fmt.Sprintf("%d of %d requests failed (%.3f > %s %g)", g.failed, g.total, float64(g.failed)/float64(g.total), g.flag, g.threshold)
		close(g.tripped)
	}
}

// Tripped is closed once the threshold is passed; nil for no guard.
func (g *FailureGuard) Tripped() <-chan struct{} {
	if g == nil {
		return nil
	}
	return g.tripped
}

// Reason says why the guard ended the run, or "".
func (g *FailureGuard) Reason() string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.why
}

// Outcome is how a finished run ended, as far as its requests go.
type Outcome int

// Outcomes; a caller maps them to its exit status or state.
const (
	OutcomeOK        Outcome = iota
	OutcomeAllFailed         // requests were sent and not one succeeded
	OutcomeThreshold         // failures passed the guard's threshold
)

// Verdict is the outcome of a finished run and, when it is not OK, why,
// briefly. Every request failing says more than the threshold passing (the
// target is wrong, not slow), so it wins. guard may be nil.
func Verdict(s report.Summary, guard *FailureGuard) (Outcome, string) {
	switch {
	case s.OK == 0 && s.Failed > 0:
		return OutcomeAllFailed, fmt.Sprintf("all %d requests failed", s.Failed)
	case s.OK == 0 && s.Lost > 0:
		// Nothing was measured: the client lost every request it sent.
		return OutcomeAllFailed, fmt.Sprintf("all %d requests were lost by inferprobe (its workers died)", s.Lost)
	case guard.Reason() != "":
		// The guard sees every measured request, so it has judged the end too.
		return OutcomeThreshold, guard.Reason()
	}
	return OutcomeOK, ""
}

// ServerMetricsSource is where a run reads its target's own metrics.
type ServerMetricsSource struct {
	// APIBase is the target's URL; its origin + /metrics is read unless
	// URL is set.
	APIBase string
	// URL, when set, is read instead of the discovered one, as given.
	URL string
	// Extra are read beside it (host:port or a URL; /metrics is added).
	Extra []string
	TLS   *tls.Config
}

// ServerMetricsOptions are the options of a run that reads s.
func ServerMetricsOptions(s ServerMetricsSource) (servermetrics.Options, error) {
	u := s.URL
	if u == "" {
		var err error
		if u, err = servermetrics.DiscoveredURL(s.APIBase); err != nil {
			return servermetrics.Options{}, err
		}
	}
	o := servermetrics.Options{URLs: []string{u}, TLS: s.TLS}
	for _, e := range s.Extra {
		if e := servermetrics.MetricsURL(e); !slices.Contains(o.URLs, e) {
			o.URLs = append(o.URLs, e) // once, as AIPerf scrapes each
		}
	}
	return o, nil
}
