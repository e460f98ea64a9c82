package daemon

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// logLine is one record a logHandler kept: its level, message and
// attributes as key=value.
type logLine struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// logHandler keeps every record, at every level.
type logHandler struct {
	mu    sync.Mutex
	lines []logLine
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *logHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logHandler) WithGroup(string) slog.Handler            { return h }
func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	l := logLine{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		l.attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, l)
	return nil
}

// take returns the records kept since the last take.
func (h *logHandler) take() []logLine {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.lines
	h.lines = nil
	return out
}

func target(t *testing.T, name string, spec scenarios.Target) *prober.Target {
	t.Helper()
	spec.URL, spec.Model, spec.Endpoint = "http://127.0.0.1:9/v1", "m", prober.EndpointChat
	tg, err := prober.NewTarget(name, &spec)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestFailureLog walks a target through failures and recoveries: each
// target × reason logs its first failure and its recovery once, steady
// failure and steady success log nothing, a pair that flaps within the
// interval logs at debug level, and the last error of each is kept,
// redacted and clipped.
func TestFailureLog(t *testing.T) {
	h := &logHandler{}
	f := newFailures(slog.New(h))
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.now = func() time.Time { return now }
	const key = "sk-planted-secret-key"
	tA := target(t, "a", scenarios.Target{APIKey: key})
	tB := target(t, "b", scenarios.Target{})
	f.retain(map[string]*prober.Target{"a": tA, "b": tB})
	probe, burst := f.recorder(tA, "steady"), f.recorder(tA, "nightly")
	other := f.recorder(tB, "other")
	var seq uint64
	fail := func(r prober.Recorder, reason record.Reason, status int, msg string) {
		r.Observe(&record.Record{Seq: seq, ID: record.NewRequestID(1, 1, "p", seq), Outcome: record.OutcomeError, Reason: reason, Status: status, Err: msg})
		seq++
	}
	ok := func(r prober.Recorder) { r.Observe(&record.Record{Outcome: record.OutcomeOK}) }
	// want checks the lines logged since the last call: level, message
	// start and the attributes given.
	want := func(step string, lines ...logLine) {
		t.Helper()
		got := h.take()
		if len(got) != len(lines) {
			t.Fatalf("%s: %d lines logged, want %d: %+v", step, len(got), len(lines), got)
		}
		for i, w := range lines {
			g := got[i]
			if g.level != w.level || g.msg != w.msg {
				t.Errorf("%s: line %d is %v %q, want %v %q", step, i, g.level, g.msg, w.level, w.msg)
			}
			for k, v := range w.attrs {
				if g.attrs[k] != v {
					t.Errorf("%s: line %d has %s=%q, want %q (%v)", step, i, k, g.attrs[k], v, g.attrs)
				}
			}
		}
	}
	const failing, recovered = "requests to a target are failing", "requests to a target succeed again"

	for range 100 {
		fail(probe, record.ReasonHTTP5xx, 503, `HTTP 503: {"error":"overloaded, key `+key+` is fine"}`)
		now = now.Add(time.Second)
	}
	fail(burst, record.ReasonConnect, 0, "dial tcp 127.0.0.1:9: connect: connection refused")
	fail(other, record.ReasonHTTP429, 429, "HTTP 429: slow down")
	want("failures",
		logLine{slog.LevelWarn, failing, map[string]string{"target": "a", "reason": "http_5xx", "scenario": "steady", "status": "503",
			"err": `HTTP 503: {"error":"overloaded, key REDACTED is fine"}`, "request_id": record.NewRequestID(1, 1, "p", 0).String()}},
		logLine{slog.LevelWarn, failing, map[string]string{"target": "a", "reason": "connect", "scenario": "nightly"}},
		logLine{slog.LevelWarn, failing, map[string]string{"target": "b", "reason": "http_429"}})

	ok(probe)
	for range 100 {
		ok(probe)
		ok(burst)
	}
	want("recovery of a; b still fails",
		logLine{slog.LevelInfo, recovered, map[string]string{"target": "a", "reason": "connect", "failures": "1"}},
		logLine{slog.LevelInfo, recovered, map[string]string{"target": "a", "reason": "http_5xx", "failures": "100", "after": "1m40s"}})

	// Flapping within the interval: debug only, failure and recovery alike.
	now = now.Add(time.Minute)
	fail(probe, record.ReasonHTTP5xx, 500, "HTTP 500: again")
	ok(probe)
	want("a flap", logLine{slog.LevelDebug, failing, nil}, logLine{slog.LevelDebug, recovered, nil})
	// Past it, a warning again, saying it flapped in between.
	now = now.Add(failureLogInterval)
	fail(probe, record.ReasonHTTP5xx, 500, strings.Repeat("é", 400))
	want("after the interval", logLine{slog.LevelWarn, failing, map[string]string{"streaks_logged_at_debug": "1"}})

	// A removed target is forgotten, and its late records are ignored.
	f.retain(map[string]*prober.Target{"a": tA})
	fail(other, record.ReasonHTTP429, 429, "late")
	want("removed target")

	got := f.snapshot()
	if len(got) != 2 || got[0].Reason != record.ReasonConnect || got[1].Reason != record.ReasonHTTP5xx {
		t.Fatalf("snapshot %+v, want a's connect and http_5xx", got)
	}
	c, s := got[0], got[1]
	if c.Failing || c.Count != 1 || c.Scenario != "nightly" || c.RecoveredAt.IsZero() || c.LastError != "dial tcp 127.0.0.1:9: connect: connection refused" ||
		c.LastRequestID != record.NewRequestID(1, 1, "p", 100).String() {
		t.Errorf("connect: %+v", c)
	}
	if !s.Failing || s.Count != 102 || s.Status != 500 || !s.RecoveredAt.IsZero() || !s.Since.Equal(now) {
		t.Errorf("http_5xx: %+v", s)
	}
	if len(s.LastError) > maxErrorText+len("…") || !strings.HasSuffix(s.LastError, "é…") {
		t.Errorf("a long error is kept as %d bytes ending %q", len(s.LastError), s.LastError[len(s.LastError)-8:])
	}
}

// TestClientLossIsNotTheTargets: a request lost with its worker, or one
// timed across a pause of the client, says nothing of its target: no
// failure is logged or kept for it.
func TestClientLossIsNotTheTargets(t *testing.T) {
	h := &logHandler{}
	f := newFailures(slog.New(h))
	tA := target(t, "a", scenarios.Target{})
	f.retain(map[string]*prober.Target{"a": tA})
	r := f.recorder(tA, "steady")
	r.Observe(&record.Record{Outcome: record.OutcomeError, Reason: record.ReasonWorkerLost, Err: "worker exited"})
	r.Observe(&record.Record{Outcome: record.OutcomeError, Reason: record.ReasonTimeout, Err: "timed out", ClientPaused: 2 * time.Second})
	if got := f.snapshot(); len(got) != 0 {
		t.Errorf("the client's losses made target failures %+v", got)
	}
	if lines := h.take(); len(lines) != 0 {
		t.Errorf("the client's losses logged %+v", lines)
	}
}
