package daemon_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/simulator"
)

// fakeClock is a clock the test sets by hand; the daemon's schedules wait on it.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(now time.Time) *fakeClock { return &fakeClock{now: now} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{t, ch})
	return ch
}

// set moves the clock to now and wakes whoever waits for an instant up to it.
func (c *fakeClock) set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
	c.waiters = slices.DeleteFunc(c.waiters, func(w fakeWaiter) bool {
		if w.at.After(now) {
			return false
		}
		w.ch <- now
		return true
	})
}

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// burstYAML is a scenario with a probe on target tp and the given bursts,
// which may use targets tb and tc; every target answers through the fake
// executor.
func burstYAML(bursts ...string) string {
	var b strings.Builder
	b.WriteString("targets:\n")
	for _, t := range []string{"tp", "tb", "tc"} {
		b.WriteString("  " + t + ": {url: " + fakeURL + ", model: m, timeout: 5s}\n")
	}
	b.WriteString("probes:\n  p: {target: tp, arrival: {pattern: constant, rate: 20}, dataset: {synthetic: {input_tokens: {mean: 4}, output_tokens: {mean: 2}}}}\n")
	if len(bursts) > 0 {
		b.WriteString("bursts:\n")
		for _, l := range bursts {
			b.WriteString("  " + l + "\n")
		}
	}
	return b.String()
}

// fast is an arrival that sends a burst's few requests at once.
const fast = "arrival: {pattern: constant, rate: 1000}, dataset: {synthetic: {input_tokens: {mean: 4}, output_tokens: {mean: 2}}}"

// startBursts runs a daemon on yml until the test ends.
func startBursts(t *testing.T, yml string, exec prober.Executor, opts ...daemon.Option) (*daemon.Daemon, *loader, func() error) {
	t.Helper()
	ld := &loader{}
	ld.set(yml, nil)
	d := daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, exec, opts...)
	stop := start(t, d)
	waitFor(t, "the configuration to load", func() bool { return len(d.Bursts()) > 0 || !strings.Contains(yml, "bursts:") })
	return d, ld, stop
}

// waitRun waits for run id to reach one of the ended states, or state.
func waitRun(t *testing.T, d *daemon.Daemon, id, state string) daemon.RunInfo {
	t.Helper()
	var ri daemon.RunInfo
	waitFor(t, "run "+id+" to be "+state, func() bool {
		var ok bool
		ri, ok = d.BurstRun(id)
		return ok && ri.State == state
	})
	return ri
}

func trigger(t *testing.T, d *daemon.Daemon, name string, o daemon.BurstOverrides) daemon.RunInfo {
	t.Helper()
	ri, err := d.TriggerBurst(name, o)
	if err != nil {
		t.Fatalf("TriggerBurst(%s): %v", name, err)
	}
	return ri
}

// metric is the value of the gauge or counter name with every label in
// labels, and whether it is exported.
func metric(t *testing.T, d *daemon.Daemon, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue(), true
			}
			return m.GetCounter().GetValue(), true
		}
	}
	return 0, false
}

func runsOf(d *daemon.Daemon, burst string) []daemon.RunInfo {
	return slices.DeleteFunc(d.BurstRuns(), func(r daemon.RunInfo) bool { return r.Burst != burst })
}

func TestBurstSchedules(t *testing.T) {
	for _, tc := range []struct {
		name, start          string
		first, second, after time.Time // after: the start that follows a long stall past second
	}{
		{"cron", `schedule: "CRON_TZ=UTC 30 3 * * *"`, t0.Add(3*time.Hour + 30*time.Minute), t0.Add(27*time.Hour + 30*time.Minute), t0.Add(99*time.Hour + 30*time.Minute)},
		{"every", "every: 90m", t0.Add(90 * time.Minute), t0.Add(180 * time.Minute), t0.Add(180*time.Minute + 49*90*time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock(t0)
			d, _, _ := startBursts(t, burstYAML("s: {target: tb, "+tc.start+", requests: 2, "+fast+"}"), newFakeExec(), daemon.WithClock(clk))
			next := func() time.Time { return d.Bursts()[0].Next }
			if !next().Equal(tc.first) {
				t.Fatalf("next start %v, want %v", next(), tc.first)
			}
			clk.set(tc.first.Add(-time.Second))
			clk.set(tc.first)
			waitFor(t, "the first scheduled run", func() bool { return len(runsOf(d, "s")) == 1 })
			ri := waitRun(t, d, runsOf(d, "s")[0].ID, daemon.RunSucceeded)
			if ri.Trigger != daemon.TriggerSchedule || ri.Report.Summary.OK != 2 || !ri.Started.Equal(tc.first) {
				t.Errorf("run %+v, want a scheduled run of 2 requests started at %v", ri, tc.first)
			}
			waitFor(t, "the next start to be planned", func() bool { return next().Equal(tc.second) })

			// A stall over many starts runs one, not all it missed.
			clk.set(tc.after.Add(-time.Minute))
			waitFor(t, "the run after the stall", func() bool { return len(runsOf(d, "s")) == 2 })
			waitRun(t, d, runsOf(d, "s")[0].ID, daemon.RunSucceeded)
			waitFor(t, "the start after the stall", func() bool { return next().Equal(tc.after) })
			if n := len(runsOf(d, "s")); n != 2 {
				t.Errorf("%d runs, want 2", n)
			}
			if v, _ := metric(t, d, "inferprobe_burst_runs_total", map[string]string{"burst": "s", "result": "succeeded"}); v != 2 {
				t.Errorf("runs_total{succeeded} = %v, want 2", v)
			}
		})
	}
}

func TestBurstOverlap(t *testing.T) {
	for _, overlap := range []string{"skip", "queue"} {
		t.Run(overlap, func(t *testing.T) {
			clk := newFakeClock(t0)
			exec := newFakeExec()
			open := exec.gate("tb")
			d, _, _ := startBursts(t, burstYAML(
				"long: {target: tb, on_demand: true, requests: 1, "+fast+"}",
				"sched: {target: tb, every: 1m, overlap: "+overlap+", requests: 1, "+fast+"}",
			), exec, daemon.WithClock(clk))
			long := trigger(t, d, "long", daemon.BurstOverrides{})
			waitFor(t, "long's request", func() bool { return len(exec.sent("tb")) == 1 })
			labels := map[string]string{"burst": "sched", "target": "tb"}
			counter := func(name string) float64 { v, _ := metric(t, d, name, labels); return v }

			counted := func(skipped, queued float64) func() bool {
				return func() bool {
					return counter("inferprobe_burst_skipped_total") == skipped && counter("inferprobe_burst_queued_total") == queued
				}
			}
			wantQueued := 0.0
			if overlap == "queue" {
				wantQueued = 1
			}
			clk.set(t0.Add(time.Minute))
			waitFor(t, "the first start to be counted", counted(1-wantQueued, wantQueued))
			clk.set(t0.Add(2 * time.Minute)) // skipped either way: queue keeps one run waiting
			waitFor(t, "the second start to be counted", counted(2-wantQueued, wantQueued))
			queued := runsOf(d, "sched")
			if overlap == "skip" && len(queued) != 0 || overlap == "queue" && (len(queued) != 1 || queued[0].State != daemon.RunQueued) {
				t.Fatalf("runs of sched while long runs: %+v", queued)
			}
			open()
			waitRun(t, d, long.ID, daemon.RunSucceeded)
			if overlap == "queue" {
				ri := waitRun(t, d, queued[0].ID, daemon.RunSucceeded)
				if ri.Queued.IsZero() || ri.Report.Summary.OK != 1 {
					t.Errorf("queued run: %+v", ri)
				}
			}
			if n := len(runsOf(d, "sched")); n != int(wantQueued) {
				t.Errorf("%d runs of sched, want %v", n, wantQueued)
			}
		})
	}
}

// TestConcurrentTriggers: of many simultaneous triggers on one target,
// exactly one runs; the others are told which run is in the way.
func TestConcurrentTriggers(t *testing.T) {
	exec := newFakeExec()
	openB, openC := exec.gate("tb"), exec.gate("tc")
	d, _, _ := startBursts(t, burstYAML(
		"a: {target: tb, on_demand: true, requests: 1, "+fast+"}",
		"b: {target: tb, on_demand: true, requests: 1, "+fast+"}",
		"c: {target: tc, on_demand: true, requests: 1, "+fast+"}",
	), exec)
	names := []string{"a", "b", "c"}
	type result struct {
		ri  daemon.RunInfo
		err error
	}
	results := make([]result, 48)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			ri, err := d.TriggerBurst(names[i%3], daemon.BurstOverrides{})
			results[i] = result{ri, err}
		})
	}
	wg.Wait()
	winners := map[string]string{} // target → run id
	for _, r := range results {
		if r.err == nil {
			if w, ok := winners[r.ri.Target]; ok {
				t.Fatalf("two runs on target %s: %s and %s", r.ri.Target, w, r.ri.ID)
			}
			winners[r.ri.Target] = r.ri.ID
		}
	}
	if len(winners) != 2 {
		t.Fatalf("winners %v, want one on tb and one on tc", winners)
	}
	for _, r := range results {
		var busy *daemon.BusyError
		if r.err != nil && (!errors.As(r.err, &busy) || busy.RunID != winners[busy.Target]) {
			t.Errorf("loser got %v, want a BusyError naming the winner", r.err)
		}
	}
	openB()
	openC()
	for _, id := range winners {
		waitRun(t, d, id, daemon.RunSucceeded)
	}
}

func TestCancelBurst(t *testing.T) {
	exec := newFakeExec()
	exec.gate("tb")
	d, _, _ := startBursts(t, burstYAML(
		"b: {target: tb, on_demand: true, duration: 1h, arrival: {pattern: concurrency, concurrency: 3}}",
		"nightly: {target: tc, schedule: '@daily', requests: 1, arrival: {rate: 1}}",
	), exec)
	for _, tc := range []struct {
		name string
		want error
	}{{"nope", daemon.ErrUnknownBurst}, {"nightly", daemon.ErrNotOnDemand}} {
		if _, err := d.TriggerBurst(tc.name, daemon.BurstOverrides{}); !errors.Is(err, tc.want) {
			t.Errorf("TriggerBurst(%s) = %v, want %v", tc.name, err, tc.want)
		}
	}
	ri := trigger(t, d, "b", daemon.BurstOverrides{})
	waitFor(t, "the held requests", func() bool { return exec.running() == 3 })
	h, err := d.Handler(false, daemon.BurstAPIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	if s := status(t, srv.URL); len(s.Bursts) != 2 || s.Bursts[0].Name != "b" || s.Bursts[0].Running != ri.ID ||
		len(s.Runs) != 1 || s.Runs[0].ID != ri.ID || s.Runs[0].State != daemon.RunRunning {
		t.Errorf("status: bursts %+v, runs %+v; want b running %s", s.Bursts, s.Runs, ri.ID)
	}
	if _, err := d.CancelBurst("nope"); !errors.Is(err, daemon.ErrUnknownRun) {
		t.Errorf("CancelBurst(nope) = %v, want ErrUnknownRun", err)
	}
	got, err := d.CancelBurst(ri.ID)
	if err != nil || got.State != daemon.RunCancelled || got.Report == nil || got.Report.Summary.Cancelled != 3 {
		t.Fatalf("CancelBurst = %+v, %v; want the run cancelled with its 3 requests", got, err)
	}
	if _, err := d.CancelBurst(ri.ID); !errors.Is(err, daemon.ErrRunFinished) {
		t.Errorf("second CancelBurst = %v, want ErrRunFinished", err)
	}
	if v, _ := metric(t, d, "inferprobe_burst_runs_total", map[string]string{"burst": "b", "result": "cancelled"}); v != 1 {
		t.Errorf("runs_total{cancelled} = %v, want 1", v)
	}
	if v, ok := metric(t, d, "inferprobe_burst_running", map[string]string{"burst": "b"}); !ok || v != 0 {
		t.Errorf("burst_running = %v (exported %v), want 0", v, ok)
	}
	// The target is free again.
	exec.gate("tb")()
	waitRun(t, d, trigger(t, d, "b", daemon.BurstOverrides{Duration: 10 * time.Millisecond}).ID, daemon.RunSucceeded)
}

// TestBurstWarmup: warmup requests are sent first and counted nowhere.
func TestBurstWarmup(t *testing.T) {
	exec := newFakeExec()
	d, _, _ := startBursts(t, burstYAML("w: {target: tb, on_demand: true, requests: 5, warmup: {requests: 3}, "+fast+"}"), exec)
	ri := waitRun(t, d, trigger(t, d, "w", daemon.BurstOverrides{}).ID, daemon.RunSucceeded)
	if n := len(exec.sent("tb")); n != 8 {
		t.Errorf("target got %d requests, want 3 warmup + 5", n)
	}
	if s := ri.Report.Summary; s.OK != 5 || s.Latency.Count != 5 || ri.Report.Digest == "" {
		t.Errorf("report: %d ok, %d latencies, digest %q; want the 5 measured requests", s.OK, s.Latency.Count, ri.Report.Digest)
	}
	if v, _ := metric(t, d, "inferprobe_requests_total", map[string]string{"scenario": "w", "phase": "burst", "outcome": "ok"}); v != 5 {
		t.Errorf("requests_total{phase=burst} = %v, want 5", v)
	}
}

// TestBurstOverrides: overrides are lowered to the maxima, and the run says
// which (asked, used, why); a run whose overrides make no sense fails and
// says why.
func TestBurstOverrides(t *testing.T) {
	exec := newFakeExec()
	d, _, _ := startBursts(t, burstYAML("o: {target: tb, on_demand: true, requests: 5, max: {requests: 8}, arrival: {pattern: concurrency, concurrency: 2}}"), exec)
	for _, tc := range []struct {
		name  string
		o     daemon.BurstOverrides
		sent  int
		state string
		err   string
	}{
		{"none", daemon.BurstOverrides{}, 5, daemon.RunSucceeded, ""},
		{"lower", daemon.BurstOverrides{Requests: 2}, 2, daemon.RunSucceeded, ""},
		{"above the maximum", daemon.BurstOverrides{Requests: 100}, 8, daemon.RunSucceeded, ""},
		{"rate of a closed loop", daemon.BurstOverrides{Rate: 5}, 0, daemon.RunFailed, "burst o has no arrival rate to override (pattern concurrency)"},
		{"negative", daemon.BurstOverrides{Duration: -time.Second}, 0, daemon.RunFailed, "overrides must be >= 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(exec.sent("tb"))
			started := trigger(t, d, "o", tc.o)
			ri := waitRun(t, d, started.ID, tc.state)
			if n := len(exec.sent("tb")) - before; n != tc.sent || !strings.Contains(ri.Error, tc.err) {
				t.Errorf("%d requests, error %q; want %d, %q", n, ri.Error, tc.sent, tc.err)
			}
			var want []daemon.Adjustment
			if tc.o.Requests > 8 {
				want = []daemon.Adjustment{{Field: "requests", Asked: "100", Used: "8", Why: "above the burst's max.requests in the scenario file"}}
			}
			if !slices.Equal(ri.Adjusted, want) || !slices.Equal(started.Adjusted, want) {
				t.Errorf("adjusted %+v in the run, %+v in the trigger's answer; want %+v", ri.Adjusted, started.Adjusted, want)
			}
		})
	}
	if v, _ := metric(t, d, "inferprobe_burst_runs_total", map[string]string{"burst": "o", "result": "failed"}); v != 2 {
		t.Errorf("runs_total{failed} = %v, want 2", v)
	}
}

// TestBurstShard: a replica sends its share of a burst's requests.
func TestBurstShard(t *testing.T) {
	exec := newFakeExec()
	d, _, _ := startBursts(t, burstYAML("s: {target: tb, on_demand: true, requests: 10, "+fast+"}"), exec, daemon.WithShard(record.Shard{Index: 1, Count: 3}))
	ri := waitRun(t, d, trigger(t, d, "s", daemon.BurstOverrides{}).ID, daemon.RunSucceeded)
	seqs := exec.sent("tb")
	slices.Sort(seqs)
	if !slices.Equal(seqs, []uint64{1, 4, 7}) || ri.Report.Summary.OK != 3 {
		t.Errorf("shard 1/3 sent %v (%d ok), want 1, 4, 7", seqs, ri.Report.Summary.OK)
	}
}

// TestBurstHistory: finished runs survive a restart in --storage.path, up
// to the bound; a corrupt file is skipped; the last-run gauges come back.
func TestBurstHistory(t *testing.T) {
	dir := t.TempDir()
	yml := burstYAML("h: {target: tb, on_demand: true, requests: 3, " + fast + "}")
	d, _, stop := startBursts(t, yml, newFakeExec(), daemon.WithHistory(dir, 2))
	var ids []string
	for range 3 {
		ids = append(ids, waitRun(t, d, trigger(t, d, "h", daemon.BurstOverrides{}).ID, daemon.RunSucceeded).ID)
	}
	gauges := map[string]string{"burst": "h", "target": "tb"}
	throughput, ok := metric(t, d, "inferprobe_burst_last_request_throughput", gauges)
	end, _ := metric(t, d, "inferprobe_burst_last_end_timestamp_seconds", gauges)
	p50, _ := metric(t, d, "inferprobe_burst_last_request_duration_seconds", map[string]string{"burst": "h", "quantile": "0.5"})
	if !ok || throughput <= 0 || end <= 0 || p50 != 0.003 {
		t.Fatalf("last-run gauges: throughput %v, end %v, p50 latency %v", throughput, end, p50)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	slices.Sort(files)
	want := []string{filepath.Join(dir, ids[1]+".json"), filepath.Join(dir, ids[2]+".json")}
	if slices.Sort(want); !slices.Equal(files, want) {
		t.Fatalf("files %v, want the two newest runs %v", files, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}

	d2, _, _ := startBursts(t, yml, newFakeExec(), daemon.WithHistory(dir, 2))
	var got []string
	for _, r := range d2.BurstRuns() {
		got = append(got, r.ID)
	}
	if want := []string{ids[2], ids[1]}; !slices.Equal(got, want) {
		t.Errorf("runs after restart %v, want %v (newest first)", got, want)
	}
	if ri, ok := d2.BurstRun(ids[2]); !ok || ri.Report == nil || ri.Report.Summary.OK != 3 {
		t.Errorf("restored run %+v", ri)
	}
	for name, want := range map[string]float64{"inferprobe_burst_last_request_throughput": throughput, "inferprobe_burst_last_end_timestamp_seconds": end} {
		if v, _ := metric(t, d2, name, gauges); v != want {
			t.Errorf("%s after restart = %v, want %v", name, v, want)
		}
	}
}

// TestBurstHistoryWriteFailure: a run that cannot be saved is counted,
// logged and kept in memory; the daemon carries on.
func TestBurstHistoryWriteFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	d, _, _ := startBursts(t, burstYAML("h: {target: tb, on_demand: true, requests: 1, "+fast+"}"), newFakeExec(), daemon.WithHistory(dir, 10))
	// The directory becomes a file: every write now fails, even as root.
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		id := waitRun(t, d, trigger(t, d, "h", daemon.BurstOverrides{}).ID, daemon.RunSucceeded).ID
		if v, _ := metric(t, d, "inferprobe_storage_write_errors_total", nil); v != float64(i) {
			t.Errorf("storage_write_errors_total = %v, want %d", v, i)
		}
		if _, ok := d.BurstRun(id); !ok {
			t.Errorf("run %s not kept in memory", id)
		}
	}
}

// TestBurstReload: a reload applies to the next run, and a removed burst's
// run is cancelled and its series go.
func TestBurstReload(t *testing.T) {
	exec := newFakeExec()
	burst := func(requests string) string {
		return burstYAML("r: {target: tb, on_demand: true, requests: " + requests + ", " + fast + "}")
	}
	d, ld, _ := startBursts(t, burst("4"), exec)
	reload := func(yml string) {
		t.Helper()
		ld.set(yml, nil)
		if err := d.RequestReload(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	open := exec.gate("tb")
	running := trigger(t, d, "r", daemon.BurstOverrides{})
	waitFor(t, "the run's requests", func() bool { return len(exec.sent("tb")) == 4 })
	reload(burst("1"))
	open()
	if ri := waitRun(t, d, running.ID, daemon.RunSucceeded); ri.Report.Summary.OK != 4 {
		t.Errorf("the run in progress sent %d, want the 4 it started with", ri.Report.Summary.OK)
	}
	waitRun(t, d, trigger(t, d, "r", daemon.BurstOverrides{}).ID, daemon.RunSucceeded)
	if n := len(exec.sent("tb")); n != 5 {
		t.Errorf("%d requests, want 4 + 1 after the reload", n)
	}

	exec.gate("tb")
	running = trigger(t, d, "r", daemon.BurstOverrides{})
	waitFor(t, "a held request", func() bool { return exec.running() == 1 })
	reload(burstYAML())
	if ri := waitRun(t, d, running.ID, daemon.RunCancelled); ri.Report.Summary.Cancelled != 1 {
		t.Errorf("removed burst's run: %+v", ri.Report.Summary)
	}
	waitFor(t, "the removed burst's series to go", func() bool {
		_, burstSeries := metric(t, d, "inferprobe_burst_running", map[string]string{"burst": "r"})
		return len(seriesOf(t, d, "r")) == 0 && !burstSeries
	})
	if len(d.Bursts()) != 0 {
		t.Errorf("bursts after removal: %+v", d.Bursts())
	}
	if _, err := d.TriggerBurst("r", daemon.BurstOverrides{}); !errors.Is(err, daemon.ErrUnknownBurst) {
		t.Errorf("TriggerBurst of a removed burst = %v", err)
	}
}

// TestBurstDrain: at shutdown a running burst stops sending, its requests
// get the grace period, and the run ends cancelled.
func TestBurstDrain(t *testing.T) {
	exec := newFakeExec()
	exec.gate("tb")
	d, _, stop := startBursts(t, burstYAML("b: {target: tb, on_demand: true, duration: 1h, arrival: {pattern: concurrency, concurrency: 2}}"),
		exec, daemon.WithGracePeriod(50*time.Millisecond))
	ri := trigger(t, d, "b", daemon.BurstOverrides{})
	waitFor(t, "the held requests", func() bool { return exec.running() == 2 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	got, ok := d.BurstRun(ri.ID)
	if !ok || got.State != daemon.RunCancelled || got.Report.Summary.Cancelled != 2 {
		t.Errorf("run after shutdown: %+v", got)
	}
	if _, err := d.TriggerBurst("b", daemon.BurstOverrides{}); err == nil {
		t.Error("a trigger after shutdown started a run")
	}
}

// TestBurstAgainstSimulator runs a burst with the real client against the
// simulator while a probe keeps running: the burst produces a report and
// the last-run gauges, its requests count with phase="burst" (warmup
// excluded), and the probe keeps counting.
func TestBurstAgainstSimulator(t *testing.T) {
	sim, err := simulator.New(simulator.Config{Profile: simulator.Profile{TTFT: 5 * time.Millisecond, ITL: time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	simSrv := httptest.NewServer(sim.Handler())
	defer simSrv.Close()
	yml := strings.ReplaceAll(`
targets:
  sim: {url: URL/v1, model: inferprobe-simulator}
probes:
  steady:
    target: sim
    arrival: {pattern: constant, rate: 20}
    dataset: {synthetic: {input_tokens: {mean: 8}, output_tokens: {mean: 8}}}
bursts:
  load:
    target: sim
    on_demand: true
    duration: 1s
    warmup: {requests: 2}
    arrival: {pattern: poisson, rate: 40, max_concurrency: 8}
    dataset: {synthetic: {input_tokens: {mean: 8}, output_tokens: {mean: 8}}}
    params: {ignore_eos: true}
    slo: {time_to_first_token: 5s}
`, "URL", simSrv.URL)
	d, _, _ := startBursts(t, yml, prober.NewClient())

	waitFor(t, "the probe to count", func() bool { return requestsOK(t, d, "steady") > 0 })
	ri := trigger(t, d, "load", daemon.BurstOverrides{})
	probeBefore := requestsOK(t, d, "steady")
	ri = waitRun(t, d, ri.ID, daemon.RunSucceeded)
	if after := requestsOK(t, d, "steady"); after <= probeBefore {
		t.Errorf("the probe stopped during the burst: %v, then %v requests", probeBefore, after)
	}

	rep := ri.Report
	s := rep.Summary
	if s.OK < 10 || s.Failed != 0 || s.TTFT.P50 < 0.005 || s.OutputTokens.P50 != 8 || s.Good != s.OK || len(rep.Digest) != 64 {
		t.Fatalf("report: %d ok, %d failed, TTFT p50 %v, output p50 %v, %d good, digest %q",
			s.OK, s.Failed, s.TTFT.P50, s.OutputTokens.P50, s.Good, rep.Digest)
	}
	if v, _ := metric(t, d, "inferprobe_requests_total", map[string]string{"scenario": "load", "phase": "burst", "outcome": "ok"}); v != float64(s.OK) {
		t.Errorf("requests_total{phase=burst} = %v, want the report's %d (warmup left out)", v, s.OK)
	}
	labels := func(extra ...string) map[string]string {
		l := map[string]string{"burst": "load", "target": "sim"}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return l
	}
	for _, g := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"inferprobe_burst_last_time_to_first_token_seconds", labels("quantile", "0.99"), s.TTFT.P99},
		{"inferprobe_burst_last_inter_token_latency_seconds", labels("quantile", "0.5"), s.ITL.P50},
		{"inferprobe_burst_last_request_duration_seconds", labels("quantile", "0.95"), s.Latency.P95},
		{"inferprobe_burst_last_request_throughput", labels(), s.RequestThroughput},
		{"inferprobe_burst_last_output_token_throughput", labels(), s.OutputTokenThroughput},
		{"inferprobe_burst_last_goodput_ratio", labels(), 1},
		{"inferprobe_burst_last_error_ratio", labels(), 0},
		{"inferprobe_burst_last_duration_seconds", labels(), s.Duration.Seconds()},
		{"inferprobe_burst_last_end_timestamp_seconds", labels(), float64(ri.Ended.UnixNano()) / 1e9},
		{"inferprobe_burst_running", labels(), 0},
		{"inferprobe_burst_runs_total", labels("result", "succeeded"), 1},
	} {
		if v, ok := metric(t, d, g.name, g.labels); !ok || v != g.want {
			t.Errorf("%s%v = %v (exported %v), want %v", g.name, g.labels, v, ok, g.want)
		}
	}

	// The first run has no earlier run to be judged against; the second
	// is judged against it, in its report and on the gauges.
	if rep.Regression != nil {
		t.Errorf("the first run was judged: %+v", rep.Regression)
	}
	if _, ok := metric(t, d, "inferprobe_burst_last_regression", labels("metric", "time_to_first_token")); ok {
		t.Error("a verdict is exported for the first run")
	}
	secondReport := waitRun(t, d, trigger(t, d, "load", daemon.BurstOverrides{}).ID, daemon.RunSucceeded).Report
	if rep.RunID == "" || secondReport.RunID == rep.RunID {
		t.Errorf("two runs of the burst have run IDs %q and %q, want one of their own each", rep.RunID, secondReport.RunID)
	}
	second := secondReport.Regression
	if second == nil || second.EarlierRuns != 1 || len(second.Metrics) != 3 {
		t.Fatalf("second run's verdict %+v, want one against 1 earlier run in 3 metrics", second)
	}
	for _, m := range second.Metrics {
		want := 0.0
		if m.Regressed {
			want = 1
		}
		if v, ok := metric(t, d, "inferprobe_burst_last_regression", labels("metric", m.Metric)); !ok || v != want {
			t.Errorf("inferprobe_burst_last_regression{metric=%q} = %v (exported %v), want %v", m.Metric, v, ok, want)
		}
	}
}

// TestBurstGracePeriod: once a run's time is up, requests still in flight
// get the grace period, then are cut, and the report says how many; a run
// that ends by count waits for its requests instead (each up to the
// target's timeout), as bench does. Either way the run ran to its end.
func TestBurstGracePeriod(t *testing.T) {
	t.Run("duration", func(t *testing.T) {
		exec := newFakeExec()
		exec.gate("tb")
		d, _, _ := startBursts(t, burstYAML("g: {target: tb, on_demand: true, grace_period: 50ms, duration: 100ms, arrival: {pattern: concurrency, concurrency: 2}}"), exec)
		ri := waitRun(t, d, trigger(t, d, "g", daemon.BurstOverrides{}).ID, daemon.RunSucceeded)
		if s := ri.Report.Summary; s.Cancelled != 2 || s.OK != 0 {
			t.Errorf("%d ok, %d cancelled; want the 2 held requests cancelled after the grace period", s.OK, s.Cancelled)
		}
		if !ri.Report.GraceExpired || ri.Report.GraceCut != 2 {
			t.Errorf("report: grace expired %v, %d cut; want it to say the 2 requests were cut", ri.Report.GraceExpired, ri.Report.GraceCut)
		}
	})
	t.Run("requests", func(t *testing.T) {
		exec := newFakeExec()
		open := exec.gate("tb")
		d, _, _ := startBursts(t, burstYAML("g: {target: tb, on_demand: true, grace_period: 50ms, requests: 2, "+fast+"}"), exec)
		id := trigger(t, d, "g", daemon.BurstOverrides{}).ID
		waitFor(t, "the 2 requests to be in flight", func() bool { return exec.running() == 2 })
		time.Sleep(250 * time.Millisecond) // well past the grace period
		if ri, _ := d.BurstRun(id); ri.State != daemon.RunRunning {
			t.Fatalf("a run that ends by count is %s past its grace period, want it waiting for its requests", ri.State)
		}
		open()
		ri := waitRun(t, d, id, daemon.RunSucceeded)
		if s := ri.Report.Summary; s.OK != 2 || s.Cancelled != 0 || ri.Report.GraceExpired {
			t.Errorf("%d ok, %d cancelled, grace expired %v; want both requests waited for", s.OK, s.Cancelled, ri.Report.GraceExpired)
		}
	})
}

// TestBurstOverridesRampFromZero: a ramp may start from 0, which makes the
// default maximum 0; an override must not read that as "no limit" and raise
// the load past what the file configures.
func TestBurstOverridesRampFromZero(t *testing.T) {
	exec := newFakeExec()
	d, _, _ := startBursts(t, burstYAML(
		"open: {target: tb, on_demand: true, requests: 2, arrival: {pattern: constant, rate: 0, ramp_to: 1000, ramp_over: 10ms}}",
		"closed: {target: tc, on_demand: true, requests: 2, arrival: {pattern: concurrency, concurrency: 0, ramp_to: 2, ramp_over: 10ms}}",
	), exec)
	for _, tc := range []struct {
		burst string
		o     daemon.BurstOverrides
		state string
		err   string
	}{
		{"open", daemon.BurstOverrides{}, daemon.RunSucceeded, ""},
		{"open", daemon.BurstOverrides{Rate: 1e6}, daemon.RunFailed, "burst open ramps its rate up from 0, so a rate override has no configured rate to stay under; set max.rate"},
		{"closed", daemon.BurstOverrides{}, daemon.RunSucceeded, ""},
		{"closed", daemon.BurstOverrides{Concurrency: 1000}, daemon.RunFailed, "burst closed ramps its concurrency up from 0, so a concurrency override has no configured concurrency to stay under; set max.concurrency"},
	} {
		ri := waitRun(t, d, trigger(t, d, tc.burst, tc.o).ID, tc.state)
		if !strings.Contains(ri.Error, tc.err) {
			t.Errorf("%s with %+v: error %q, want %q", tc.burst, tc.o, ri.Error, tc.err)
		}
	}
}

// TestBurstQueuedRunMovedTarget: a run queued by overlap: queue whose burst a
// reload moves to another target belongs to the new target: cancelled
// there, it must not bring back the series of the target it left.
func TestBurstQueuedRunMovedTarget(t *testing.T) {
	clk := newFakeClock(t0)
	exec := newFakeExec()
	openB, openC := exec.gate("tb"), exec.gate("tc")
	burst := func(target string) string {
		return "sched: {target: " + target + ", every: 1m, overlap: queue, requests: 1, " + fast + "}"
	}
	busyB := "hold-b: {target: tb, on_demand: true, requests: 1, " + fast + "}"
	busyC := "hold-c: {target: tc, on_demand: true, requests: 1, " + fast + "}"
	d, ld, _ := startBursts(t, burstYAML(busyB, busyC, burst("tb")), exec, daemon.WithClock(clk))
	holdB, holdC := trigger(t, d, "hold-b", daemon.BurstOverrides{}), trigger(t, d, "hold-c", daemon.BurstOverrides{})
	clk.set(t0.Add(time.Minute))
	waitFor(t, "the scheduled start to queue", func() bool { return len(runsOf(d, "sched")) == 1 })
	queued := runsOf(d, "sched")[0]

	ld.set(burstYAML(busyB, busyC, burst("tc")), nil)
	if err := d.RequestReload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ri, _ := d.BurstRun(queued.ID); ri.State != daemon.RunQueued || ri.Target != "tc" {
		t.Errorf("queued run after the move: %+v, want queued for tc", ri)
	}
	if got, err := d.CancelBurst(queued.ID); err != nil || got.State != daemon.RunCancelled || got.Target != "tc" {
		t.Errorf("CancelBurst = %+v, %v; want it cancelled on tc", got, err)
	}
	if _, ok := metric(t, d, "inferprobe_burst_runs_total", map[string]string{"burst": "sched", "target": "tb"}); ok {
		t.Error("the cancelled run brought back sched's series on tb, the target it left")
	}
	if v, _ := metric(t, d, "inferprobe_burst_runs_total", map[string]string{"burst": "sched", "target": "tc", "result": "cancelled"}); v != 1 {
		t.Errorf(`runs_total{target="tc",result="cancelled"} = %v, want 1`, v)
	}
	openB()
	openC()
	waitRun(t, d, holdB.ID, daemon.RunSucceeded)
	waitRun(t, d, holdC.ID, daemon.RunSucceeded)
}

// TestBurstRateOverrideOfReplay: a burst that replays its dataset's
// timestamps has no rate to override; the run says so instead of
// succeeding with the override silently ignored.
func TestBurstRateOverrideOfReplay(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 4, "output_length": 2}`+"\n"+`{"timestamp": 5, "input_length": 4, "output_length": 2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exec := newFakeExec()
	d, _, _ := startBursts(t, burstYAML("r: {target: tb, on_demand: true, requests: 2, dataset: {file: {path: "+trace+", format: mooncake, timing: replay}}}"), exec)
	ri := waitRun(t, d, trigger(t, d, "r", daemon.BurstOverrides{Rate: 1000}).ID, daemon.RunFailed)
	if want := "burst r has no arrival rate to override: it sends at its dataset's timestamps (timing: replay)"; !strings.Contains(ri.Error, want) || len(exec.sent("tb")) != 0 {
		t.Errorf("error %q after %d requests, want %q and none sent", ri.Error, len(exec.sent("tb")), want)
	}
	if ri := waitRun(t, d, trigger(t, d, "r", daemon.BurstOverrides{}).ID, daemon.RunSucceeded); ri.Report.Summary.OK != 2 {
		t.Errorf("replay without overrides: %+v", ri.Report.Summary)
	}
}

// TestBurstDrainQueued: at shutdown a run queued by overlap: queue is
// cancelled, recorded once, and never started; the run it waited for ends
// cancelled too.
func TestBurstDrainQueued(t *testing.T) {
	clk := newFakeClock(t0)
	exec := newFakeExec()
	exec.gate("tb")
	d, _, stop := startBursts(t, burstYAML(
		"long: {target: tb, on_demand: true, requests: 1, "+fast+"}",
		"sched: {target: tb, every: 1m, overlap: queue, requests: 1, "+fast+"}",
	), exec, daemon.WithClock(clk))
	long := trigger(t, d, "long", daemon.BurstOverrides{})
	// The run starts asynchronously; without this wait the drain can beat long's only request.
	waitFor(t, "long's request", func() bool { return len(exec.sent("tb")) == 1 })
	clk.set(t0.Add(time.Minute))
	waitFor(t, "the scheduled start to queue", func() bool { return len(runsOf(d, "sched")) == 1 })
	queued := runsOf(d, "sched")[0]
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{long.ID, queued.ID} {
		if ri, ok := d.BurstRun(id); !ok || ri.State != daemon.RunCancelled {
			t.Errorf("run %s after shutdown: %+v (kept %v), want cancelled", id, ri, ok)
		}
	}
	if n := len(exec.sent("tb")); n != 1 {
		t.Errorf("%d requests, want long's 1: the queued run started during the drain", n)
	}
	for _, b := range []string{"long", "sched"} {
		if v, _ := metric(t, d, "inferprobe_burst_runs_total", map[string]string{"burst": b, "result": "cancelled"}); v != 1 {
			t.Errorf("runs_total{burst=%q,result=cancelled} = %v, want 1", b, v)
		}
	}
	if n := len(d.BurstRuns()); n != 2 {
		t.Errorf("%d runs kept, want 2", n)
	}
}

// TestBurstPlannedOutsideTheLock triggers a burst whose dataset file blocks
// when opened (a FIFO put in place of the file after the load), so that
// planning the run hangs until the test writes to the FIFO. Meanwhile the
// API answers, the run shows as running and holds its target. Once planning
// ends, the run ends failed (a FIFO cannot be read twice), or cancelled when
// it was cancelled meanwhile, having sent nothing, and the target is free.
func TestBurstPlannedOutsideTheLock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel bool
		state  string
	}{
		{"planning fails", false, daemon.RunFailed},
		{"cancelled while planned", true, daemon.RunCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := filepath.Join(t.TempDir(), "pool.jsonl")
			if err := os.WriteFile(pool, []byte(`{"text": "hello", "output_length": 2}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			exec := newFakeExec()
			d, _, _ := startBursts(t, burstYAML(
				"slow: {target: tb, on_demand: true, requests: 1, arrival: {pattern: constant, rate: 1000}, dataset: {file: {path: "+pool+", format: single_turn}}}",
				"quick: {target: tb, on_demand: true, requests: 1, "+fast+"}",
			), exec)
			if err := os.Remove(pool); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(pool, 0o644); err != nil {
				t.Skipf("no FIFO here: %v", err)
			}
			triggered := make(chan daemon.RunInfo, 1)
			go func() {
				ri, err := d.TriggerBurst("slow", daemon.BurstOverrides{})
				if err != nil {
					t.Errorf("TriggerBurst(slow): %v", err)
				}
				triggered <- ri
			}()
			// Each call runs aside, so that one waiting for the planning fails
			// the test instead of hanging it.
			answers := func(what string, call func()) {
				t.Helper()
				done := make(chan struct{})
				go func() { call(); close(done) }()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Fatalf("%s waited for the run's planning", what)
				}
			}
			var id string
			waitFor(t, "the run being planned to show", func() bool {
				var runs []daemon.RunInfo
				answers("listing the runs", func() { runs = runsOf(d, "slow") })
				if len(runs) == 1 && runs[0].State == daemon.RunRunning && runs[0].Report == nil {
					id = runs[0].ID
				}
				return id != ""
			})
			answers("listing the bursts", func() {
				if bs := d.Bursts(); !slices.ContainsFunc(bs, func(b daemon.BurstInfo) bool { return b.Name == "slow" && b.Running == id }) {
					t.Errorf("bursts %+v do not show slow running %s", bs, id)
				}
			})
			answers("a trigger on the same target", func() {
				var busy *daemon.BusyError
				if _, err := d.TriggerBurst("quick", daemon.BurstOverrides{}); !errors.As(err, &busy) || busy.RunID != id {
					t.Errorf("trigger of quick: %v, want a BusyError naming %s", err, id)
				}
			})
			if tc.cancel {
				// The cancel is taken at once; the run ends when its planning
				// does, which CancelBurst gives up waiting for after 5 s.
				if ri, err := d.CancelBurst(id); err != nil || ri.State != daemon.RunRunning {
					t.Fatalf("cancel while planned: %+v, %v; want the run, still running", ri, err)
				}
			}

			w, err := os.OpenFile(pool, os.O_WRONLY, 0) // the planning's open is waiting for a writer
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.WriteString(`{"text": "hello", "output_length": 2}` + "\n")
			w.Close()
			ri := <-triggered
			if ri.State != tc.state || ri.ID != id {
				t.Fatalf("trigger returned %+v, want run %s %s", ri, id, tc.state)
			}
			if tc.state == daemon.RunFailed && !strings.Contains(ri.Error, pool) {
				t.Errorf("error %q does not name the file", ri.Error)
			}
			waitRun(t, d, trigger(t, d, "quick", daemon.BurstOverrides{}).ID, daemon.RunSucceeded)
			if n := len(exec.sent("tb")); n != 1 {
				t.Errorf("%d requests sent, want quick's 1", n)
			}
		})
	}
}
