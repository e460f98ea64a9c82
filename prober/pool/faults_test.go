package pool

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// stop sends SIGSTOP to pid and waits until the process is stopped, so that
// it reads nothing more from its pipe.
func stop(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	eventually(t, 5*time.Second, fmt.Sprintf("worker %d did not stop", pid), func() bool {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		_, after, _ := strings.Cut(string(stat), ") ")
		return err == nil && strings.HasPrefix(after, "T")
	})
}

// logCount returns the integer attribute name of the first log line that
// says msg about the worker with pid, and fails the test without one.
func logCount(t *testing.T, logs, msg string, pid int, name string) int {
	t.Helper()
	for line := range strings.Lines(logs) {
		if !strings.Contains(line, msg) || !strings.Contains(line, fmt.Sprintf(" pid=%d ", pid)) {
			continue
		}
		m := regexp.MustCompile(` ` + name + `=(\d+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("log line %q has no %s", line, name)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	t.Fatalf("no log line says %q of pid %d", msg, pid)
	return 0
}

// TestKilledWorker kills a worker with requests in flight: they come back
// once each as worker_lost, without a send time; the requests given to it
// that it never read (it was stopped first) go to the other worker and
// succeed, sent once; the other worker's requests are unaffected; and the
// worker is replaced.
func TestKilledWorker(t *testing.T) {
	u := newUpstream(t)
	p, logs := newPool(t, 2)
	tg := u.target(t, nil)
	const n, more = 10, 6
	reqs := make([]*prober.Request, n)
	for i := range reqs {
		reqs[i] = request(t, tg, uint64(i), "hold")
	}
	records := doAll(context.Background(), p, tg, reqs)
	u.waitArrivals(t, n)

	victim := current(p, 0)
	held := victim.load()
	if held == 0 || held == n {
		t.Fatalf("worker 0 holds %d of %d requests; least-loaded dispatch should have spread them", held, n)
	}
	// Stopped, the victim reads nothing more: what it is given now stays
	// in its pipe, never read.
	stop(t, victim.pid)
	for i := range more {
		req := request(t, tg, uint64(n+i), "hold")
		go func() { records <- p.Do(context.Background(), tg, req) }()
	}
	other := current(p, 1)
	eventually(t, time.Second, "the requests were not all given to a worker", func() bool {
		return victim.load()+other.load() == n+more
	})
	unread := victim.load() - held
	u.waitArrivals(t, more-unread)
	if unread == 0 {
		t.Fatalf("none of %d more requests went to the stopped worker", more)
	}
	killed := time.Now()
	if err := syscall.Kill(victim.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	lost := map[uint64]bool{}
	for range held {
		r := <-records
		if r.Outcome != record.OutcomeError || r.Reason != record.ReasonWorkerLost || !r.Sent.IsZero() ||
			r.Seq >= n || !r.Scheduled.Equal(reqs[r.Seq].Scheduled) || !strings.Contains(r.Err, "signal: killed") {
			t.Fatalf("record of a request on the killed worker: %+v", r)
		}
		lost[r.Seq] = true
	}
	// The unread ones reach the server from the other worker, once each.
	u.waitArrivals(t, unread)
	u.releaseAll()
	rest := collect(t, records, n+more-held)
	for seq, r := range rest {
		if lost[seq] || r.Outcome != record.OutcomeOK || r.Sent.Before(r.Scheduled) {
			t.Errorf("request %d: %+v (lost before: %v)", seq, r, lost[seq])
		}
	}
	if len(u.arrived) != 0 {
		t.Errorf("%d more requests reached the server than were made: some were sent twice", len(u.arrived))
	}

	eventually(t, 5*time.Second, "worker 0 was not replaced", func() bool {
		w := current(p, 0)
		return w != nil && w != victim
	})
	t.Logf("killed worker replaced in %s; %d requests it never read went to the other worker", time.Since(killed).Round(time.Millisecond), unread)
	if !processGone(victim.pid) {
		t.Errorf("killed worker %d is still there", victim.pid)
	}
	l := logs.String()
	if got := logCount(t, l, "worker lost", victim.pid, "lost_requests"); got != held {
		t.Errorf("logged lost_requests=%d, want %d", got, held)
	}
	if got := logCount(t, l, "worker lost", victim.pid, "given_back"); got != unread {
		t.Errorf("logged given_back=%d, want %d", got, unread)
	}

	after := make([]*prober.Request, n)
	for i := range after {
		after[i] = request(t, tg, uint64(n+more+i), "normal")
	}
	for _, r := range collect(t, doAll(context.Background(), p, tg, after), n) {
		if r.Outcome != record.OutcomeOK {
			t.Errorf("after the restart: %+v", r)
		}
	}
	if got := p.restarts.Load(); got != 1 {
		t.Errorf("restarts = %d, want 1", got)
	}
}

// TestStuckWorker stops a worker (SIGSTOP) while requests keep coming. As
// soon as its heartbeat is late it gets no more, and the ones it was given
// and never read go to the other worker; silent for stuckAfter, it is killed
// and replaced, and the requests it was running come back once as
// worker_lost. Every other request succeeds, and the server receives each
// request once.
func TestStuckWorker(t *testing.T) {
	u := newUpstream(t)
	p, logs := newPool(t, 2)
	tg := u.target(t, nil)
	const held = 4
	reqs := make([]*prober.Request, held)
	for i := range reqs {
		reqs[i] = request(t, tg, uint64(i), "hold")
	}
	records := make(chan *record.Record, 10000)
	for _, req := range reqs {
		go func() { records <- p.Do(context.Background(), tg, req) }()
	}
	u.waitArrivals(t, held)
	victim := current(p, 0)
	running := victim.load()
	stop(t, victim.pid)
	stopped := time.Now()

	sent := 0
	for current(p, 0) == victim && time.Since(stopped) < 10*time.Second {
		req := request(t, tg, uint64(held+sent), "normal")
		go func() { records <- p.Do(context.Background(), tg, req) }()
		sent++
		time.Sleep(10 * time.Millisecond)
	}
	u.releaseAll()
	got := collect(t, records, held+sent)
	lost := 0
	for _, r := range got {
		switch {
		case r.Outcome == record.OutcomeOK && !r.Sent.Before(r.Scheduled):
		case r.Reason == record.ReasonWorkerLost && r.Seq < held && r.Sent.IsZero() && strings.Contains(r.Err, "stopped answering"):
			lost++
		default:
			t.Errorf("record: %+v", r)
		}
	}
	if lost != running {
		t.Errorf("%d requests lost, want the %d the stopped worker was running", lost, running)
	}
	u.waitArrivals(t, sent)
	if len(u.arrived) != 0 {
		t.Errorf("%d more requests reached the server than were made: some were sent twice", len(u.arrived))
	}

	// No request was given to it once it was late: what it held then is
	// what it lost or gave back when it was killed.
	l := logs.String()
	kept := logCount(t, l, "heartbeat is late", victim.pid, "kept")
	lostLogged, back := logCount(t, l, "worker lost", victim.pid, "lost_requests"), logCount(t, l, "worker lost", victim.pid, "given_back")
	if lostLogged+back != kept {
		t.Errorf("late, the worker kept %d requests; killed, it lost %d and gave back %d: it was given requests while late", kept, lostLogged, back)
	}
	t.Logf("%d requests sent; the stopped worker was running %d, and was given %d more before it was late", sent, running, kept-running)
	// Silence is counted from the last heartbeat, which came up to one
	// interval before the stop.
	if d := time.Since(stopped); d < stuckAfter-heartbeatEvery {
		t.Errorf("declared stuck %s after the stop, before the %s timeout less one %s heartbeat interval", d, stuckAfter, heartbeatEvery)
	}
	eventually(t, 5*time.Second, "the stuck worker was not replaced", func() bool {
		w := current(p, 0)
		return w != nil && w != victim
	})
	if !processGone(victim.pid) {
		t.Errorf("the stuck worker %d was not killed", victim.pid)
	}
}

// TestStuckOnlyWorker stops the only worker under a flood of requests, more
// than its pipe holds: once it is late they wait for a worker instead of
// filling its queue, and the replacement sends every one it never started.
func TestStuckOnlyWorker(t *testing.T) {
	u := newUpstream(t)
	p, _ := newPool(t, 1)
	tg := u.target(t, nil)
	const held, more = 3, 900 // the upstream's channels hold 1000
	records := make(chan *record.Record, held+more)
	for i := range held {
		req := request(t, tg, uint64(i), "hold")
		go func() { records <- p.Do(context.Background(), tg, req) }()
	}
	u.waitArrivals(t, held)
	victim := current(p, 0)
	stop(t, victim.pid)
	for i := range more {
		req := request(t, tg, uint64(held+i), "normal")
		go func() { records <- p.Do(context.Background(), tg, req) }()
	}
	eventually(t, stuckAfter, "the stopped worker is not late", victim.late.Load)
	victim.mu.Lock()
	unwritten := 0
	for _, c := range victim.calls {
		if !c.written {
			unwritten++
		}
	}
	kept := len(victim.calls)
	victim.mu.Unlock()
	if unwritten > 0 || kept == held+more {
		t.Errorf("late, the stopped worker holds %d requests, %d of them never written to it: they were not given back", kept, unwritten)
	}
	for _, r := range collect(t, records, held+more) {
		if r.Seq < held && r.Reason != record.ReasonWorkerLost || r.Seq >= held && r.Outcome != record.OutcomeOK {
			t.Errorf("record: %+v", r)
		}
	}
	u.waitArrivals(t, more)
	if len(u.arrived) != 0 {
		t.Errorf("%d more requests reached the server than were made", len(u.arrived))
	}
}

// TestStoppedWorkerPaused stops a worker (SIGSTOP) for 2 s while it holds
// requests whose responses arrive meanwhile, then lets it go on: its
// watchdog marks those requests client-paused, with about the stop, so a
// report leaves them out of every statistic and counts them apart; a
// request before the stop is not marked.
func TestStoppedWorkerPaused(t *testing.T) {
	u := newUpstream(t)
	p, _ := newPool(t, 1)
	tg := u.target(t, nil)
	before := p.Do(context.Background(), tg, request(t, tg, 0, "normal"))
	<-u.arrived
	if before.Outcome != record.OutcomeOK || before.ClientPaused != 0 {
		t.Fatalf("a request before the stop: %+v, want ok and not paused", before)
	}

	const held = 3
	records := make(chan *record.Record, held)
	for i := range held {
		req := request(t, tg, uint64(1+i), "hold")
		go func() { records <- p.Do(context.Background(), tg, req) }()
	}
	u.waitArrivals(t, held)
	victim := current(p, 0)
	stop(t, victim.pid)
	const stopped = 2 * time.Second
	u.releaseAll() // the responses end while the worker cannot read them
	time.Sleep(stopped)
	if err := syscall.Kill(victim.pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}

	r := report.NewReport()
	r.Observe(before)
	for _, rec := range collect(t, records, held) {
		if rec.Outcome != record.OutcomeOK || rec.ClientPaused < stopped/2 {
			t.Errorf("a request held through the stop: outcome %s, client paused %v; want ok and paused about %v", rec.Outcome, rec.ClientPaused, stopped)
		}
		r.Observe(rec)
	}
	s := r.Summary()
	if s.ClientPaused != held || s.OK != 1 || s.Latency.Count != 1 || s.TTFT.Count != 1 || s.ScheduleLag.Count != 1 {
		t.Errorf("report: %d client-paused, %d ok, latency over %d, TTFT over %d, lag over %d; want the %d held apart and only the first measured",
			s.ClientPaused, s.OK, s.Latency.Count, s.TTFT.Count, s.ScheduleLag.Count, held)
	}
	if why := report.PausedReason(s.ClientPaused); why == "" {
		t.Error("the client-paused requests give no client-bound verdict")
	}
}
