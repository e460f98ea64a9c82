package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// children lists the pids whose parent is pid, from /proc.
func children(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces, so split after ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// TestKilledWorkerIsReplaced: the daemon's requests run in worker processes
// it forks; kill -9 of one mid-run leaves /metrics serving, the worker is
// replaced, probing goes on, and SIGTERM still shuts the daemon down cleanly.
// (That each lost request is counted exactly once is proven at the pool
// level, prober/pool TestKilledWorker, where every request can be followed.)
func TestKilledWorkerIsReplaced(t *testing.T) {
	dir := t.TempDir()
	simAddr := freeAddr(t)
	startSimulator(t, simAddr)
	addr := freeAddr(t)
	serve := inferprobe(t, "inferprobe serve", dir, "serve", "--workers=2",
		"--config.file="+writeScenario(t, dir, "scenario.yml", simAddr), "--web.listen-address="+addr)
	metricsURL := "http://" + addr + "/metrics"
	waitHealthy(t, serve, metricsURL, 10*time.Second)

	metric := func(name string, pairs ...string) float64 {
		t.Helper()
		serve.checkRunning(t)
		fams, err := scrapeText(metricsURL)
		if err != nil {
			t.Fatalf("/metrics: %v", err)
		}
		return value(fams, name, pairs...)
	}
	eventually(t, 10*time.Second, "two workers up and requests succeeding", func() error {
		if up, ok := metric("inferprobe_workers_up"), metric("inferprobe_requests_total", "outcome", "ok"); up != 2 || ok < 3 {
			return fmt.Errorf("%v workers up, %v ok requests", up, ok)
		}
		return nil
	})
	workers := children(t, serve.cmd.Process.Pid)
	if len(workers) != 2 {
		t.Fatalf("daemon has %d child processes, want its 2 workers: %v", len(workers), workers)
	}
	if err := syscall.Kill(workers[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	okBefore := metric("inferprobe_requests_total", "outcome", "ok")
	eventually(t, 10*time.Second, "the killed worker replaced and probing going on", func() error {
		restarts, up := metric("inferprobe_worker_restarts_total"), metric("inferprobe_workers_up")
		if ok := metric("inferprobe_requests_total", "outcome", "ok"); restarts != 1 || up != 2 || ok < okBefore+5 {
			return fmt.Errorf("%v restarts, %v up, %v ok requests (%v before the kill)", restarts, up, ok, okBefore)
		}
		return nil
	})
	if now := children(t, serve.cmd.Process.Pid); len(now) != 2 {
		t.Errorf("after the restart the daemon has %d children, want 2", len(now))
	}
	serve.signal(t, syscall.SIGTERM)
	if code := serve.exitCode(t, 20*time.Second); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM", code)
	}
	out := serve.out.String()
	if !strings.Contains(out, "worker") || !strings.Contains(out, "restart") {
		t.Errorf("the daemon did not log the worker's loss and restart:\n%s", out)
	}
}
