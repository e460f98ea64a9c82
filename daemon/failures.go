package daemon

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

const (
	// failureLogInterval spaces one target × reason's warnings: after one,
	// the pair's next failures and recoveries within the interval log at
	// debug level, so a flapping target cannot flood the log.
	failureLogInterval = 10 * time.Minute
	// maxErrorText clips an error text (a server's message is most of it)
	// in the log and on the status page.
	maxErrorText = 256
)

// failures tells a person what fails (docs/faults.md, Failures a person
// can see): it logs the first failure of each target × reason and its
// recovery, and keeps the last error of each for /api/v1/status and the
// landing page. A target that keeps failing, or keeps succeeding, logs
// nothing more.
type failures struct {
	logger *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	targets map[string]bool // configured: records of others are late ones of a removed target
	pairs   map[failureKey]*failurePair
	failing map[string]int // by target: its pairs failing now
}

type failureKey struct {
	target string
	reason record.Reason
}

// failurePair is one target × reason.
type failurePair struct {
	TargetError
	streak    int       // failures since it began failing
	warned    time.Time // when a failure of the pair last logged a warning
	quiet     bool      // this streak's failure logged at debug level, so does its recovery
	debugOnly int       // streaks logged at debug level since that warning
}

// TargetError is the last failure of one target × reason, as
// /api/v1/status shows it.
type TargetError struct {
	Target string        `json:"target"`
	Reason record.Reason `json:"reason"`
	// Failing is true until a request to the target succeeds.
	Failing bool `json:"failing"`
	// Since is when the current streak of failures began (the last one,
	// when the pair has recovered); RecoveredAt when it ended.
	Since       time.Time `json:"since"`
	RecoveredAt time.Time `json:"recovered_at,omitzero"`
	// Count is the pair's failures since the daemon started.
	Count uint64 `json:"count"`
	// The last failure: when, in which probe or burst, its HTTP status (0
	// without a response) and its error, clipped, with the target's
	// credentials redacted.
	LastAt    time.Time `json:"last_at"`
	Scenario  string    `json:"scenario"`
	Status    int       `json:"status,omitempty"`
	LastError string    `json:"last_error"`
	// LastRequestID is its request ID (X-Request-ID), to find it in the
	// server's logs.
	LastRequestID string `json:"last_request_id"`
}

func newFailures(logger *slog.Logger) *failures {
	return &failures{logger: logger, now: time.Now, targets: map[string]bool{},
		pairs: map[failureKey]*failurePair{}, failing: map[string]int{}}
}

// retain makes targets the configured ones, forgetting what others did.
func (f *failures) retain(targets map[string]*prober.Target) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.targets = map[string]bool{}
	for name := range targets {
		f.targets[name] = true
	}
	for k, p := range f.pairs {
		if !f.targets[k.target] {
			delete(f.pairs, k)
			if p.Failing {
				f.failing[k.target]--
			}
		}
	}
	maps.DeleteFunc(f.failing, func(_ string, n int) bool { return n == 0 })
}

// recorder passes the records of one probe's or burst's requests to t to f.
func (f *failures) recorder(t *prober.Target, scenario string) prober.Recorder {
	r := &failureRecorder{f: f, target: t.Name, scenario: scenario}
	if secrets := t.Spec.Secrets(); len(secrets) > 0 {
		r.redact = scenarios.Redactor(secrets)
	}
	return r
}

type failureRecorder struct {
	f                *failures
	target, scenario string
	redact           *strings.Replacer // the target's credentials; nil without any
}

func (*failureRecorder) Started() {}

func (r *failureRecorder) Observe(rec *record.Record) {
	if rec.Reason.ClientLoss() || rec.ClientPaused > 0 {
		// What the client lost or could not time says nothing of the
		// target; the pool logs its lost workers.
		return
	}
	switch rec.Outcome {
	case record.OutcomeOK:
		r.f.succeeded(r.target)
	case record.OutcomeError:
		// Redacted before clipping, so that no part of a secret is left.
		msg := rec.Err
		if r.redact != nil {
			msg = r.redact.Replace(msg)
		}
		r.f.failed(r.target, r.scenario, rec, clipText(msg))
	}
}

// failed notes rec, a failed request to target, whose error is msg.
func (f *failures) failed(target, scenario string, rec *record.Record, msg string) {
	reason, status, id := rec.Reason, rec.Status, rec.ID.String()
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.targets[target] {
		return
	}
	k := failureKey{target, reason}
	p := f.pairs[k]
	if p == nil {
		p = &failurePair{TargetError: TargetError{Target: target, Reason: reason}}
		f.pairs[k] = p
	}
	p.Count++
	p.LastAt, p.Scenario, p.Status, p.LastError, p.LastRequestID = now, scenario, status, msg, id
	if p.Failing {
		p.streak++
		return
	}
	p.Failing, p.Since, p.RecoveredAt, p.streak = true, now, time.Time{}, 1
	f.failing[target]++
	p.quiet = !p.warned.IsZero() && now.Sub(p.warned) < failureLogInterval
	level := slog.LevelWarn
	attrs := []slog.Attr{slog.String("target", target), slog.String("reason", string(reason)), slog.String("scenario", scenario)}
	if status != 0 {
		attrs = append(attrs, slog.Int("status", status))
	}
	attrs = append(attrs, slog.String("err", msg), slog.String("request_id", id), slog.String("hint", failureHints[reason]))
	if p.quiet {
		level = slog.LevelDebug
		p.debugOnly++
	} else {
		if p.debugOnly > 0 {
			attrs = append(attrs, slog.Int("streaks_logged_at_debug", p.debugOnly))
			p.debugOnly = 0
		}
		p.warned = now
	}
	f.logger.LogAttrs(context.Background(), level, "requests to a target are failing", attrs...)
}

func (f *failures) succeeded(target string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing[target] == 0 {
		return // the steady state: nothing to recover
	}
	now := f.now()
	for _, k := range slices.SortedFunc(maps.Keys(f.pairs), compareKeys) {
		p := f.pairs[k]
		if k.target != target || !p.Failing {
			continue
		}
		p.Failing, p.RecoveredAt = false, now
		level := slog.LevelInfo
		if p.quiet {
			level = slog.LevelDebug
		}
		f.logger.LogAttrs(context.Background(), level, "requests to a target succeed again",
			slog.String("target", target), slog.String("reason", string(k.reason)),
			slog.Int("failures", p.streak), slog.Duration("after", now.Sub(p.Since)))
	}
	delete(f.failing, target)
}

// snapshot returns every target × reason that has failed, by target and
// reason.
func (f *failures) snapshot() []TargetError {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]TargetError, 0, len(f.pairs))
	for _, k := range slices.SortedFunc(maps.Keys(f.pairs), compareKeys) {
		out = append(out, f.pairs[k].TargetError)
	}
	return out
}

func compareKeys(a, b failureKey) int {
	if c := strings.Compare(a.target, b.target); c != 0 {
		return c
	}
	return strings.Compare(string(a.reason), string(b.reason))
}

// clipText cuts s to maxErrorText bytes, at a character boundary.
func clipText(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	cut := maxErrorText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// failureHints say what to look at first, per reason (docs/faults.md).
var failureHints = map[record.Reason]string{
	record.ReasonConnect:          "no response at all: check that the server is up at the target's url and reachable (DNS, TLS certificate)",
	record.ReasonTimeout:          "the target's timeout expired: check the server's load, or raise timeout",
	record.ReasonStall:            "the stream went silent for stall_timeout: check the server, or raise stall_timeout",
	record.ReasonHTTP4xx:          "the server refused the request: check the target's model, API key and params against its error",
	record.ReasonHTTP429:          "the server rate-limits: lower the probe's rate or raise the server's limit",
	record.ReasonHTTP5xx:          "the server failed: see its error and its logs",
	record.ReasonProtocol:         "the reply could not be read: check the target's url and endpoint type (docs/faults.md lists what gives protocol)",
	record.ReasonTruncated:        "the stream ended early: see the server's logs, or a proxy's time-outs",
	record.ReasonServerErrorEvent: "the server reported an error inside a 200 reply: see its message",
	record.ReasonDataset:          "the dataset file could not produce the next request: fix it and reload",
}
