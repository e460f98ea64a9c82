package pool

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/wire"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// tokenizerTarget is u's target counting tokens with the tokenizer file tok.
func tokenizerTarget(t *testing.T, u *upstream, tok string) *prober.Target {
	t.Helper()
	tg, err := prober.NewTarget("sim", &scenarios.Target{URL: u.URL + "/v1", Endpoint: "chat", Model: "m", Tokenizer: tok,
		Timeout: scenarios.Duration(30 * time.Second), StallTimeout: scenarios.Duration(30 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// definition returns the pool's definition of target name.
func definition(p *Pool, name string) *target {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.targets[name]
}

func holds(p *Pool, w *child, d *target) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return w.holds(d)
}

// TestPrepare: once Prepare returns, every worker has built the target, and
// a worker started later builds it before it takes requests, until the
// target is released.
func TestPrepare(t *testing.T) {
	u := newUpstream(t)
	p, _ := newPool(t, 2)
	tok, err := filepath.Abs(filepath.Join("..", "..", "tokenizer", "testdata", "tiny_tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	tg := tokenizerTarget(t, u, tok)
	release := p.Prepare(context.Background(), tg, 0)
	d := definition(p, "sim")
	for i := range 2 {
		if w := current(p, i); !holds(p, w, d) {
			t.Errorf("worker %d has not built the target when Prepare returns", i)
		}
	}

	victim := current(p, 0)
	if err := syscall.Kill(victim.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "worker 0 was not replaced", func() bool {
		w := current(p, 0)
		return w != nil && w != victim
	})
	if !holds(p, current(p, 0), d) {
		t.Error("the replacement took requests before it had built the target")
	}
	if r := p.Do(context.Background(), tg, request(t, tg, 1, "normal")); r.Outcome != record.OutcomeOK {
		t.Errorf("after Prepare: %+v", r)
	}

	// Released, the target is no longer built ahead by new workers; a
	// request to it still works.
	release()
	victim = current(p, 1)
	if err := syscall.Kill(victim.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "worker 1 was not replaced", func() bool {
		w := current(p, 1)
		return w != nil && w != victim
	})
	if holds(p, current(p, 1), d) {
		t.Error("a worker started after the release built the released target")
	}
	for i := range 4 {
		if r := p.Do(context.Background(), tg, request(t, tg, uint64(2+i), "normal")); r.Outcome != record.OutcomeOK {
			t.Errorf("after the release: %+v", r)
		}
	}
}

// TestPrepareBuildFails: a worker that cannot build a target the parent
// could (its tokenizer file went away) says so; Prepare returns, the failure
// is logged, and the target's requests come back as protocol errors.
func TestPrepareBuildFails(t *testing.T) {
	u := newUpstream(t)
	p, logs := newPool(t, 1)
	src, err := os.ReadFile(filepath.Join("..", "..", "tokenizer", "testdata", "tiny_tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(tok, src, 0o644); err != nil {
		t.Fatal(err)
	}
	tg := tokenizerTarget(t, u, tok)
	if err := os.Remove(tok); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Prepare(context.Background(), tg, 0)()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Prepare did not return for a target the worker cannot build")
	}
	if l := logs.String(); !strings.Contains(l, "a worker cannot build a target") || !strings.Contains(l, "no such file") {
		t.Errorf("the failed build is not logged with its cause:\n%s", l)
	}
	if r := p.Do(context.Background(), tg, request(t, tg, 1, "normal")); r.Reason != record.ReasonProtocol || !strings.Contains(r.Err, "tokenizer") {
		t.Errorf("a request to the target the worker could not build: %+v", r)
	}
}

// TestPreparedFirstRequest: with the GPT-2 tokenizer (1.5 MB, over 100 ms to
// load), the first request after Prepare is sent on time, because the
// worker loaded the tokenizer before it.
func TestPreparedFirstRequest(t *testing.T) {
	tok := sharedFile(t, "shared/data/tokenizers/gpt2/tokenizer.json")
	u := newUpstream(t)
	p, _ := newPool(t, 1)
	tg := tokenizerTarget(t, u, tok)
	defer p.Prepare(context.Background(), tg, 0)()
	req := request(t, tg, 1, "normal")
	req.Scheduled = time.Now().Add(5 * time.Millisecond) // handed over ahead, as the scheduler does
	r := p.Do(context.Background(), tg, req)
	if r.Outcome != record.OutcomeOK {
		t.Fatalf("%+v", r)
	}
	t.Logf("first request's schedule lag after Prepare: %s", r.Lag())
	if r.Lag() > 100*time.Millisecond {
		t.Errorf("first request sent %s late: the tokenizer was loaded on its time", r.Lag())
	}
}

// sharedFile finds rel above the package directory, or skips.
func sharedFile(t *testing.T, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skipf("%s not found above the package directory", rel)
		}
		dir = parent
	}
}

// TestBuildIsNotClientLoad: the heartbeat intervals in which a worker built
// a target (loading a tokenizer takes a core for a while) are start-up, not
// the client's load, and do not count towards the client-bound verdict.
func TestBuildIsNotClientLoad(t *testing.T) {
	p := &Pool{logger: slog.New(slog.DiscardHandler), slots: []*slot{{}}}
	w := &child{pool: p, enc: wire.NewEncoder(io.Discard), defined: map[string]uint64{}, ready: map[uint64]*readiness{}}
	p.slots[0].current = w
	t0 := time.Now()
	// beat takes a heartbeat; counted says whether its interval is the
	// client's load, of wantCPU cores.
	beat := func(at, cpu time.Duration, counted bool, wantCPU float64) {
		t.Helper()
		w.beat(wire.Heartbeat{CPU: cpu, SchedLatencyP99: 20 * time.Millisecond}, t0.Add(at))
		got, sched := p.Utilisation()
		if counted != (sched != 0) || math.Abs(got-wantCPU) > 1e-9 {
			t.Errorf("at %s: Utilisation = %v cores, %s; want %v cores, counted %v", at, got, sched, wantCPU, counted)
		}
	}
	beat(0, 0, true, 0)
	beat(500*time.Millisecond, 100*time.Millisecond, true, 0.2)
	if err := w.define(&wire.Target{ID: 1, Name: "t"}); err != nil {
		t.Fatal(err)
	}
	beat(time.Second, 600*time.Millisecond, false, 0) // building: a whole core
	w.readied(wire.Ready{Target: 1}, t0.Add(1200*time.Millisecond))
	beat(1500*time.Millisecond, 1000*time.Millisecond, false, 0) // built within the interval
	beat(2*time.Second, 1100*time.Millisecond, true, 0.2)
}

// TestPrepareOpensConnections: Prepare has the workers open the probe's
// connections, shared among them, before it returns, so that the first
// requests do not dial.
func TestPrepareOpensConnections(t *testing.T) {
	var accepted atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	tg, err := prober.NewTarget("sim", &scenarios.Target{URL: srv.URL + "/v1", Endpoint: "chat", Model: "m",
		Timeout: scenarios.Duration(30 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := newPool(t, 2)
	defer p.Prepare(context.Background(), tg, 4)()
	// Dialled is not yet accepted: the server's accept loop may lag.
	eventually(t, 5*time.Second, "the server did not accept 4 connections", func() bool { return accepted.Load() == 4 })
	r := p.Do(context.Background(), tg, request(t, tg, 1, "normal"))
	if r.Outcome != record.OutcomeOK {
		t.Fatalf("on a connection opened ahead: %+v", r)
	}
	// Counting the server's connections instead would race with the spares
	// the client then opens (topUp) to replace the one taken.
	if r.Phases.Conn != record.ConnOpenedAhead {
		t.Errorf("the first request's connection was %s, want one opened ahead", r.Phases.Conn)
	}
}
