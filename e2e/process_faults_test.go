package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// faultScenario probes through one recorder and bursts through another, so
// that each side's requests can be counted apart. The timeouts are long: a
// request held by a recorder must stay in flight, not time out.
func faultScenario(probe, burst *recorder) string {
	return fmt.Sprintf(`targets:
  probed: {url: %s, model: inferprobe-simulator, timeout: 60s, stall_timeout: 60s}
  bursted: {url: %s, model: inferprobe-simulator, timeout: 60s, stall_timeout: 60s}
probes:
  steady:
    target: probed
    arrival: {pattern: constant, rate: 5}
    dataset: {synthetic: {input_tokens: {mean: 16}, output_tokens: {mean: 8}}}
bursts:
  load:
    target: bursted
    on_demand: true
    duration: 60s
    arrival: {pattern: constant, rate: 20}
    dataset: {synthetic: {input_tokens: {mean: 16}, output_tokens: {mean: 8}}}
`, probe.base(), burst.base())
}

// keptRun is a burst run as the API returns it, with the counts of its report.
type keptRun struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Report *struct {
		Summary struct{ OK, Failed, Cancelled int } `json:"summary"`
	} `json:"report"`
}

// counts are the report's ok, failed and cancelled requests.
func (r keptRun) counts() [3]int {
	if r.Report == nil {
		return [3]int{-1, -1, -1}
	}
	s := r.Report.Summary
	return [3]int{s.OK, s.Failed, s.Cancelled}
}

// startRun starts a run of burst load with the given overrides and returns its id.
func startRun(t *testing.T, base, body string) string {
	t.Helper()
	var started struct{ ID string }
	if status, _, resp := apiCall(t, "POST", base+"/api/v1/bursts/load", body, nil, &started); status != http.StatusAccepted {
		t.Fatalf("POST /api/v1/bursts/load %s: %d %s", body, status, resp)
	}
	return started.ID
}

func getRun(t *testing.T, base, id string) keptRun {
	t.Helper()
	var run keptRun
	if status, _, body := apiCall(t, "GET", base+"/api/v1/bursts/runs/"+id, "", nil, &run); status != http.StatusOK {
		t.Fatalf("GET run %s: %d %s", id, status, body)
	}
	return run
}

// lastRunGauges reads the last-run gauges of burst load that a restart must bring back.
func lastRunGauges(t *testing.T, base string) [2]float64 {
	t.Helper()
	fams, err := scrapeText(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return [2]float64{
		value(fams, "inferprobe_burst_last_request_throughput", "burst", "load"),
		value(fams, "inferprobe_burst_last_end_timestamp_seconds", "burst", "load"),
	}
}

// runFiles lists the names in the storage directory.
func runFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestRestartDrainsAndKeepsHistory stops the daemon with SIGTERM while
// requests are in flight, twice, and restarts it on the same
// --storage.path. Recorders between inferprobe and the simulator hold
// requests, so the test decides what is in flight, and count what the server
// side received. Nothing is lost and nothing is counted twice: while it
// drains, inferprobe accounts every request received as finished or in
// flight, once; requests in flight finish within the grace period, or are
// cut at its end and counted cancelled; the runs' reports, read back after
// each restart, count exactly the requests their target received; the
// last-run gauges come back; and a file left half-written by a killed
// daemon is cleared.
func TestRestartDrainsAndKeepsHistory(t *testing.T) {
	dir := t.TempDir()
	sim := freeAddr(t)
	startSimulator(t, sim)
	probeRec, burstRec := newRecorder(t, sim), newRecorder(t, sim)
	config := filepath.Join(dir, "scenario.yml")
	if err := os.WriteFile(config, []byte(faultScenario(probeRec, burstRec)), 0o644); err != nil {
		t.Fatal(err)
	}
	storage := filepath.Join(dir, "runs")
	serve := func(grace string) (*process, string) {
		t.Helper()
		addr := freeAddr(t)
		p := inferprobe(t, "inferprobe serve", dir, "serve", "--workers=2", "--config.file="+config,
			"--web.listen-address="+addr, "--storage.path="+storage, "--web.enable-burst-api",
			"--shutdown.grace-period="+grace)
		base := "http://" + addr
		waitHealthy(t, p, base+"/-/ready", 10*time.Second)
		return p, base
	}

	// A run that ends by itself: its report counts what the server received.
	p, base := serve("30s")
	eventually(t, 10*time.Second, "probe requests succeed", func() error {
		if n := probeRec.counts().completed; n < 3 {
			return fmt.Errorf("%d probe requests completed", n)
		}
		return nil
	})
	first := waitRunEnds(t, base, startRun(t, base, `{"requests":10}`), 30*time.Second)
	if run := getRun(t, base, first.ID); run.State != "succeeded" || run.counts() != [3]int{10, 0, 0} {
		t.Fatalf("first run %s with counts %v, want succeeded with 10 ok", run.State, run.counts())
	}
	if c := burstRec.counts(); c.arrived != 10 || c.completed != 10 {
		t.Fatalf("the burst's target saw %+v, want 10 requests, all completed", c)
	}
	gauges := lastRunGauges(t, base)
	if gauges[0] <= 0 || gauges[1] <= 0 {
		t.Fatalf("last-run gauges (throughput, end) = %v after a completed run", gauges)
	}

	// SIGTERM with probe and burst requests in flight; they are let go
	// within the 30s grace period.
	second := startRun(t, base, "")
	eventually(t, 10*time.Second, "the second run's requests complete", func() error {
		if n := burstRec.counts().completed; n < 20 {
			return fmt.Errorf("%d burst requests completed", n)
		}
		return nil
	})
	probeRec.hold()
	burstRec.hold()
	eventually(t, 10*time.Second, "requests held in flight", func() error {
		if ph, bh := probeRec.counts().held, burstRec.counts().held; ph < 2 || bh < 3 {
			return fmt.Errorf("%d probe and %d burst requests held", ph, bh)
		}
		return nil
	})
	p.signal(t, syscall.SIGTERM)
	eventually(t, 10*time.Second, "every request received accounted for once while draining", func() error {
		if !strings.Contains(p.out.String(), "shutting down") {
			return fmt.Errorf("no shutdown logged yet")
		}
		fams, err := scrapeText(base + "/metrics")
		if err != nil {
			t.Fatalf("/metrics while draining: %v", err)
		}
		for _, c := range []struct {
			phase string
			rec   *recorder
		}{{"probe", probeRec}, {"burst", burstRec}} {
			counted := value(fams, "inferprobe_requests_total", "phase", c.phase)
			inFlight := value(fams, "inferprobe_in_flight_requests", "phase", c.phase)
			got := c.rec.counts()
			if errs := value(fams, "inferprobe_requests_total", "phase", c.phase, "outcome", "error"); errs != 0 {
				t.Fatalf("%v %s requests failed", errs, c.phase)
			}
			if counted+inFlight != float64(got.arrived) || inFlight < float64(got.held) {
				return fmt.Errorf("%s: %v finished and %v in flight; the server received %d (%d held)",
					c.phase, counted, inFlight, got.arrived, got.held)
			}
		}
		return nil
	})
	probeRec.release()
	burstRec.release()
	if code := p.exitCode(t, 40*time.Second); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM", code)
	}
	for name, rec := range map[string]*recorder{"probe": probeRec, "burst": burstRec} {
		if c := rec.counts(); c.cut != 0 || c.completed != c.arrived {
			t.Errorf("%s target saw %+v: requests in flight at SIGTERM did not all finish", name, c)
		}
	}
	secondSent := burstRec.counts().arrived - 10

	// Restart: both runs are back with their reports, the gauges show the
	// last completed run, and restoring counts nothing again. A temporary
	// file left by a daemon killed while writing (kill -9) is cleared.
	if err := os.WriteFile(filepath.Join(storage, ".run-killed"), []byte(`{"id":"`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, base = serve("1s")
	var list struct{ Runs []keptRun }
	if status, _, body := apiCall(t, "GET", base+"/api/v1/bursts/runs", "", nil, &list); status != http.StatusOK || len(list.Runs) != 2 {
		t.Fatalf("GET runs after a restart: %d %s, want the 2 runs", status, body)
	}
	if r := list.Runs[0]; r.ID != second || r.State != "cancelled" || r.counts() != [3]int{secondSent, 0, 0} {
		t.Errorf("newest run %s %s with counts %v, want %s cancelled by the shutdown with %d ok (every request its target received)",
			r.ID, r.State, r.counts(), second, secondSent)
	}
	if r := list.Runs[1]; r.ID != first.ID || r.State != "succeeded" || r.counts() != [3]int{10, 0, 0} {
		t.Errorf("older run %s %s with counts %v, want %s succeeded with 10 ok", r.ID, r.State, r.counts(), first.ID)
	}
	if got := lastRunGauges(t, base); got != gauges {
		t.Errorf("last-run gauges (throughput, end) after a restart = %v, want %v", got, gauges)
	}
	fams, err := scrapeText(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if n := value(fams, "inferprobe_burst_runs_total", "burst", "load"); n != 0 {
		t.Errorf("inferprobe_burst_runs_total = %v after a restart, want 0: restored runs did not run again", n)
	}
	// Each run's record, and beside it the directory of its report and artifacts.
	wantFiles := []string{first.ID, first.ID + ".json", second, second + ".json"}
	slices.Sort(wantFiles) // as ReadDir lists them
	if files := runFiles(t, storage); !slices.Equal(files, wantFiles) {
		t.Errorf("--storage.path holds %v, want %v", files, wantFiles)
	}

	// SIGTERM with burst requests held past a 1s grace period: they are cut
	// and counted cancelled, once each. The run sends its 5 requests at
	// once and then waits for them, so all 5 are at the target when the
	// signal comes.
	burstRec.hold()
	before := burstRec.counts()
	third := startRun(t, base, `{"requests":5}`)
	eventually(t, 10*time.Second, "the third run's requests held", func() error {
		if n := burstRec.counts().held; n != 5 {
			return fmt.Errorf("%d held", n)
		}
		return nil
	})
	p.signal(t, syscall.SIGTERM)
	if code := p.exitCode(t, 20*time.Second); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM", code)
	}
	eventually(t, 5*time.Second, "the cut requests seen ending at the target", func() error {
		if c := burstRec.counts(); c.arrived-before.arrived != 5 || c.cut-before.cut != 5 || c.completed != before.completed {
			return fmt.Errorf("target saw %+v, %+v before the run; want the run's 5 requests, all cut", c, before)
		}
		return nil
	})
	burstRec.release()

	_, base = serve("1s")
	if r := getRun(t, base, third); r.State != "cancelled" || r.counts() != [3]int{0, 0, 5} {
		t.Errorf("run cut by the shutdown: %s with counts %v, want cancelled with its 5 requests cancelled", r.State, r.counts())
	}
	if got := lastRunGauges(t, base); got != gauges {
		t.Errorf("last-run gauges after a cancelled run and a restart = %v, want the completed run's %v", got, gauges)
	}
}

// mountNamespace returns the unshare arguments that give a process a mount
// namespace of its own in which it may mount a tmpfs at dir, or skips the
// test. Unprivileged user namespaces do it without root; root can do it
// without them.
func mountNamespace(t *testing.T, dir string) []string {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare (util-linux) to mount a full file system in a private mount namespace")
	}
	var tried []string
	for _, args := range [][]string{{"--user", "--map-root-user", "--mount"}, {"--mount"}} {
		cmd := exec.Command("unshare", append(args, "sh", "-c", `mount -t tmpfs -o size=16k tmpfs "$1"`, "sh", dir)...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			return args
		}
		tried = append(tried, fmt.Sprintf("unshare %s: %v %s", strings.Join(args, " "), err, out))
	}
	t.Skipf("cannot mount a tmpfs in a private mount namespace here (needs user namespaces or CAP_SYS_ADMIN):\n%s", strings.Join(tried, "\n"))
	return nil
}

// TestFullStorageDisk runs the daemon with --storage.path on a file system
// that is really full: a 512 KiB tmpfs filled up (a run of 5 requests
// keeps 248 KiB: its record and its report and artifacts), mounted in a mount
// namespace of the daemon's own (so nothing outside it changes). Chmod would
// not do (as root, permissions do not stop writes), and a path that is not a
// directory fails at open rather than at write; here the run's file is
// created and its write fails with ENOSPC, as on a full disk. The daemon
// keeps probing, logs the error, counts it in
// inferprobe_storage_write_errors_total, leaves no partial file behind and
// keeps the run in memory, counted once; once space is freed, the next run
// is saved.
func TestFullStorageDisk(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "runs")
	if err := os.Mkdir(storage, 0o755); err != nil {
		t.Fatal(err)
	}
	ns := mountNamespace(t, storage)
	sim := freeAddr(t)
	startSimulator(t, sim)
	probeRec, burstRec := newRecorder(t, sim), newRecorder(t, sim)
	config := filepath.Join(dir, "scenario.yml")
	if err := os.WriteFile(config, []byte(faultScenario(probeRec, burstRec)), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	// sh mounts and fills the tmpfs, then becomes inferprobe: one process,
	// whose pid the test signals and whose mounts it reads via /proc/PID/root.
	fill := `mount -t tmpfs -o size=512k tmpfs "$1" || exit 97; cat /dev/zero > "$1/fill" 2>/dev/null; shift; exec "$@"`
	args := slices.Concat(ns, []string{"sh", "-c", fill, "sh", storage, binary, "serve", "--workers=2", "--config.file=" + config,
		"--web.listen-address=" + addr, "--storage.path=" + storage, "--web.enable-burst-api"})
	p := start(t, "inferprobe serve (full storage)", dir, "unshare", args...)
	base := "http://" + addr
	waitHealthy(t, p, base+"/-/ready", 10*time.Second)
	inside := filepath.Join("/proc", fmt.Sprint(p.cmd.Process.Pid), "root", storage)
	if files := runFiles(t, inside); !slices.Equal(files, []string{"fill"}) {
		t.Fatalf("the daemon's --storage.path holds %v, want only the file that fills it", files)
	}

	metric := func(name string, pairs ...string) float64 {
		t.Helper()
		fams, err := scrapeText(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		return value(fams, name, pairs...)
	}
	id := waitRunEnds(t, base, startRun(t, base, `{"requests":5}`), 30*time.Second).ID
	if n := metric("inferprobe_storage_write_errors_total"); n != 1 {
		t.Errorf("inferprobe_storage_write_errors_total = %v, want 1", n)
	}
	if out := p.out.String(); !strings.Contains(out, "cannot save burst run; it is kept in memory only") ||
		!strings.Contains(out, "no space left on device") {
		t.Errorf("the failed write is not logged with its cause:\n%s", out)
	}
	if files := runFiles(t, inside); !slices.Equal(files, []string{"fill"}) {
		t.Errorf("after the failed write --storage.path holds %v, want no partial or temporary file", files)
	}
	if run := getRun(t, base, id); run.State != "succeeded" || run.counts() != [3]int{5, 0, 0} {
		t.Errorf("run kept in memory: %s with counts %v, want succeeded with 5 ok", run.State, run.counts())
	}
	var list struct{ Runs []keptRun }
	apiCall(t, "GET", base+"/api/v1/bursts/runs", "", nil, &list)
	if len(list.Runs) != 1 || list.Runs[0].ID != id {
		t.Errorf("GET runs lists %+v, want run %s once", list.Runs, id)
	}
	if n := metric("inferprobe_burst_runs_total", "burst", "load"); n != 1 {
		t.Errorf("inferprobe_burst_runs_total = %v, want 1", n)
	}
	if c := burstRec.counts(); c.arrived != 5 {
		t.Errorf("the burst's target received %d requests, want the run's 5", c.arrived)
	}
	okBefore := metric("inferprobe_requests_total", "phase", "probe", "outcome", "ok")
	eventually(t, 10*time.Second, "probing goes on", func() error {
		p.checkRunning(t)
		if ok := metric("inferprobe_requests_total", "phase", "probe", "outcome", "ok"); ok < okBefore+3 {
			return fmt.Errorf("%v ok probe requests, %v at the failed write", ok, okBefore)
		}
		return nil
	})

	// Space comes back: the next run is saved.
	if err := os.Remove(filepath.Join(inside, "fill")); err != nil {
		t.Fatal(err)
	}
	next := waitRunEnds(t, base, startRun(t, base, `{"requests":5}`), 30*time.Second).ID
	if n := metric("inferprobe_storage_write_errors_total"); n != 1 {
		t.Errorf("inferprobe_storage_write_errors_total = %v with space free, want still 1", n)
	}
	// The run's record, and the directory of its report and artifacts.
	if files := runFiles(t, inside); !slices.Equal(files, []string{next, next + ".json"}) {
		t.Errorf("with space free --storage.path holds %v, want %s.json and its artifacts", files, next)
	}
}

// workerLog returns the integer attribute key of the first log line of the
// daemon that says msg about the worker with pid, and whether there is one.
func workerLog(out, msg string, pid int, key string) (int, bool) {
	for line := range strings.Lines(out) {
		if !strings.Contains(line, msg) || !strings.Contains(line, fmt.Sprintf(" pid=%d ", pid)) {
			continue
		}
		if m := regexp.MustCompile(` ` + key + `=(\d+)`).FindStringSubmatch(line); m != nil {
			n, err := strconv.Atoi(m[1])
			return n, err == nil
		}
	}
	return 0, false
}

// TestFrozenAndKilledWorkers freezes one worker (SIGSTOP) and kills the other
// (kill -9) during a burst run, behind a recorder that counts what the
// server receives. The frozen worker gets no request once its heartbeat is
// late; the requests the workers never started are sent by another worker,
// once; those they may have started are worker_lost; and the run's outcomes
// are the requests the server received plus those never sent, with no
// negative schedule lag.
func TestFrozenAndKilledWorkers(t *testing.T) {
	dir := t.TempDir()
	sim := freeAddr(t)
	startSimulator(t, sim)
	rec := newRecorder(t, sim)
	config := filepath.Join(dir, "scenario.yml")
	scenario := fmt.Sprintf(`targets:
  sim: {url: %s, model: inferprobe-simulator, timeout: 60s, stall_timeout: 60s}
bursts:
  load:
    target: sim
    on_demand: true
    duration: 60s
    arrival: {pattern: constant, rate: 25}
    dataset: {synthetic: {input_tokens: {mean: 16}, output_tokens: {mean: 40}}}
`, rec.base())
	if err := os.WriteFile(config, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	p := inferprobe(t, "inferprobe serve", dir, "serve", "--workers=2", "--config.file="+config,
		"--web.listen-address="+addr, "--web.enable-burst-api")
	base := "http://" + addr
	waitHealthy(t, p, base+"/-/ready", 10*time.Second)
	workers := children(t, p.cmd.Process.Pid)
	if len(workers) != 2 {
		t.Fatalf("daemon has %d child processes, want its 2 workers: %v", len(workers), workers)
	}
	frozen, killed := workers[0], workers[1]
	t.Cleanup(func() { _ = syscall.Kill(frozen, syscall.SIGKILL) })

	const total = 250 // 10 s at 25 requests/s
	id := startRun(t, base, fmt.Sprintf(`{"requests":%d}`, total))
	arrivedAtLeast := func(n int) {
		t.Helper()
		eventually(t, 20*time.Second, fmt.Sprintf("%d requests reach the server", n), func() error {
			if got := rec.counts().arrived; got < n {
				return fmt.Errorf("%d arrived", got)
			}
			return nil
		})
	}
	logged := func(what, msg string, pid int, key string) int {
		t.Helper()
		var n int
		eventually(t, 10*time.Second, what, func() error {
			var ok bool
			if n, ok = workerLog(p.out.String(), msg, pid, key); !ok {
				return fmt.Errorf("no %q line for pid %d with %s", msg, pid, key)
			}
			return nil
		})
		return n
	}

	arrivedAtLeast(25)
	if err := syscall.Kill(frozen, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	kept := logged("the frozen worker is late", "heartbeat is late", frozen, "kept")
	frozenLost := logged("the frozen worker is killed", "worker lost", frozen, "lost_requests")
	frozenBack, _ := workerLog(p.out.String(), "worker lost", frozen, "given_back")
	if frozenLost+frozenBack != kept {
		t.Errorf("late, the frozen worker kept %d requests; killed, it lost %d and gave back %d: it was given requests after its heartbeat was late",
			kept, frozenLost, frozenBack)
	}

	arrivedAtLeast(rec.counts().arrived + 25)
	if err := syscall.Kill(killed, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedLost := logged("the killed worker is seen lost", "worker lost", killed, "lost_requests")
	killedBack, _ := workerLog(p.out.String(), "worker lost", killed, "given_back")

	waitRunEnds(t, base, id, 60*time.Second)
	var run struct {
		State  string `json:"state"`
		Report struct {
			Summary struct {
				OK, Failed, Cancelled int
				Lost                  int            `json:"client_lost"`
				Errors                map[string]int `json:"errors_by_reason"`
				Lag                   struct {
					Count int
					Min   float64
				} `json:"schedule_lag_seconds"`
			} `json:"summary"`
		} `json:"report"`
	}
	if status, _, body := apiCall(t, "GET", base+"/api/v1/bursts/runs/"+id, "", nil, &run); status != http.StatusOK {
		t.Fatalf("GET run: %d %s", status, body)
	}
	s := run.Report.Summary
	c := rec.counts()
	lost := s.Lost
	neverSent := total - c.arrived
	t.Logf("frozen worker: kept %d when late, lost %d, gave back %d; killed worker: lost %d, gave back %d",
		kept, frozenLost, frozenBack, killedLost, killedBack)
	t.Logf("run: %d ok, %d failed %v, %d cancelled, %d lost; server: %d arrived, %d completed, %d cut; never sent %d",
		s.OK, s.Failed, s.Errors, s.Cancelled, lost, c.arrived, c.completed, c.cut, neverSent)
	switch {
	case run.State != "succeeded" || s.OK+s.Failed+s.Cancelled+lost != total:
		t.Errorf("run %s counted %d ok, %d failed, %d cancelled, %d lost; want its %d requests once each", run.State, s.OK, s.Failed, s.Cancelled, lost, total)
	case s.Failed != 0 || lost != frozenLost+killedLost:
		// The workers' losses are the client's, not the target's failures.
		t.Errorf("failures %v and %d lost, want no failure and the %d requests the workers lost", s.Errors, lost, frozenLost+killedLost)
	case s.OK > c.completed || s.Cancelled != 0:
		// A frozen worker's requests may complete at the server, into a
		// socket nobody reads: completed can exceed ok, never the reverse.
		t.Errorf("%d ok and %d cancelled; the server completed only %d", s.OK, s.Cancelled, c.completed)
	case neverSent > lost || c.cut > lost:
		// Every request is ok or lost; those the server never received or
		// cut are all among the lost.
		t.Errorf("the server received %d (%d cut) and %d were never sent, against %d outcomes of which %d lost", c.arrived, c.cut, neverSent, total, lost)
	}
	if n := rec.repeats(); n != 0 {
		t.Errorf("%d requests reached the server twice", n)
	}
	if s.Lag.Min < 0 || s.Lag.Count != total-lost {
		t.Errorf("schedule lag over %d requests, min %gs; want the %d sent, none negative", s.Lag.Count, s.Lag.Min, total-lost)
	}
}

// TestBenchStoppedWorker stops bench's only worker (SIGSTOP) for 2 s in the
// middle of a run: the requests it held or was handed meanwhile are left out
// of the statistics, so no TTFT near the stop's length reaches them, the
// console says how many and calls the run client-bound, and
// profile_export.jsonl marks them.
func TestBenchStoppedWorker(t *testing.T) {
	sim := freeAddr(t)
	startSimulator(t, sim) // TTFT 20 ms, 5 ms a token
	artifacts := t.TempDir()
	p := inferprobe(t, "inferprobe bench", t.TempDir(), "bench", "--workers=1", "--artifact-dir", artifacts,
		"--model", "inferprobe-simulator", "--url", "http://"+sim, "--endpoint-type", "chat", "--streaming",
		"--request-rate", "20", "--request-count", "200", "--output-tokens-mean", "64", "--extra-inputs", "ignore_eos:true")
	var worker int
	eventually(t, 20*time.Second, "bench's worker starts", func() error {
		if w := children(t, p.cmd.Process.Pid); len(w) == 1 {
			worker = w[0]
			return nil
		}
		return fmt.Errorf("no worker yet")
	})
	time.Sleep(1500 * time.Millisecond) // into the run, with requests in flight
	const stopped = 2 * time.Second
	if err := syscall.Kill(worker, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(stopped)
	if err := syscall.Kill(worker, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t, 90*time.Second); code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, p.out.String())
	}
	out := p.out.String()
	m := regexp.MustCompile(`Client-Paused Requests\s+(\d+) left out`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "CLIENT-BOUND RUN") {
		t.Fatalf("the console does not say that requests were left out and the run is client-bound:\n%s", out)
	}
	var doc struct {
		TTFT struct{ Max, Count float64 } `json:"time_to_first_token"`
	}
	b, err := os.ReadFile(filepath.Join(artifacts, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.TTFT.Max*float64(time.Millisecond) >= float64(stopped/2) {
		t.Errorf("TTFT max %gms over %g requests: a request timed across the stop is in the statistics", doc.TTFT.Max, doc.TTFT.Count)
	}
	jsonl, err := os.ReadFile(filepath.Join(artifacts, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if marked := strings.Count(string(jsonl), `"client_paused_ms"`); strconv.Itoa(marked) != m[1] {
		t.Errorf("profile_export.jsonl marks %d requests client-paused, the console %s", marked, m[1])
	}
	t.Logf("%s requests left out; TTFT max %gms over %g requests", m[1], doc.TTFT.Max, doc.TTFT.Count)
}
