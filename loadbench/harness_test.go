package loadbench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/pool"
	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/simulator"
)

// enableEnv must be 1 for the Test functions to run: they take minutes and
// the whole machine.
const enableEnv = "INFERPROBE_LOADBENCH"

var (
	profile = flag.String("profile", "", "write CPU profiles of this process and of every worker into this directory; the workers are then this test binary, running the same pool.ServeWorker as `inferprobe worker`")
	pin     = flag.Bool("pin", false, "pin the simulator to CPU 1 and inferprobe (its workers, and this process when it runs the scheduler) to CPU 0, with taskset")
	workers = flag.Int("workers", 0, "worker processes (default: 1 with -pin, else the number of CPUs, as the daemon does)")
)

// tmp holds the binary built for this run.
var tmp string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "worker":
			os.Exit(profiledWorker())
		case streamServerArg:
			os.Exit(serveStreams(os.Args[2:]))
		}
	}
	flag.Parse()
	code := m.Run()
	if tmp != "" {
		_ = os.RemoveAll(tmp)
	}
	os.Exit(code)
}

// profiledWorker is a worker process with a CPU profile: the test binary
// started by the pool when -profile is set.
func profiledWorker() int {
	dir := os.Getenv(profileEnv)
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%d.pprof", os.Getpid())))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer pprof.StopCPUProfile()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := pool.ServeWorker(context.Background(), os.Stdin, os.Stdout, logger); err != nil {
		logger.Error("worker failed", "err", err)
		return 1
	}
	return 0
}

// profileEnv passes -profile to profiled workers.
const profileEnv = "LOADBENCH_PROFILE_DIR"

// enabled skips t unless the load benchmarks were asked for.
func enabled(t *testing.T) {
	t.Helper()
	if os.Getenv(enableEnv) != "1" {
		t.Skipf("a load benchmark: set %s=1 to run it (see BENCHMARKS.md)", enableEnv)
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary returns the inferprobe binary: $INFERPROBE_BIN, or one built from
// this checkout once per test run.
func binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("INFERPROBE_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		if tmp, buildErr = os.MkdirTemp("", "loadbench-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(tmp, "inferprobe")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/inferprobe").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ../cmd/inferprobe: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// numWorkers is -workers, or its default.
func numWorkers() int {
	switch {
	case *workers > 0:
		return *workers
	case *pin:
		return 1
	}
	return runtime.NumCPU() // the daemon's default
}

// command returns bin with args, run under taskset on cpu when -pin is set.
func command(bin, cpu string, args ...string) (string, []string) {
	if !*pin {
		return bin, args
	}
	return "taskset", append([]string{"-c", cpu, bin}, args...)
}

// pinSelf moves every thread of this process to cpu when -pin is set;
// threads started later inherit it. Workers are pinned to CPU 0 by
// newPool whatever this process is on.
func pinSelf(t testing.TB, cpu string) {
	t.Helper()
	if !*pin {
		return
	}
	if out, err := exec.Command("taskset", "-a", "-p", "-c", cpu, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
		t.Fatalf("taskset: %v: %s", err, out)
	}
}

// simProcess is the simulator running as its own process (`inferprobe
// simulate`), so that its CPU use is its own and it can be pinned.
type simProcess struct {
	cmd *exec.Cmd
	url string // API base
}

// startSimulator starts `inferprobe simulate` with args on a free port of
// 127.0.0.1 and waits until it answers.
func startSimulator(t testing.TB, args ...string) *simProcess {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	name, argv := command(binary(t), "1", append([]string{"simulate", "--web.listen-address=" + addr, "--log.level=warn"}, args...)...)
	cmd := exec.Command(name, argv...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if i == 200 {
			t.Fatalf("the simulator did not answer on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &simProcess{cmd: cmd, url: "http://" + addr + "/v1"}
}

func (s *simProcess) pid() int { return s.cmd.Process.Pid }

// newPool starts n workers from the built binary, pinned to CPU 0 with -pin.
func newPool(t testing.TB, n int) *pool.Pool {
	t.Helper()
	return newPoolOf(t, binary(t), n)
}

// newPoolOf starts n workers from bin, pinned to CPU 0 with -pin.
func newPoolOf(t testing.TB, bin string, n int) *pool.Pool {
	t.Helper()
	exe, args := command(bin, "0", "worker", "--log.level=warn")
	if *profile != "" {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Setenv(profileEnv, *profile); err != nil {
			t.Fatal(err)
		}
		exe, args = command(self, "0", "worker")
	}
	p, err := pool.New(pool.Options{Workers: n, Executable: exe, Args: args,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// target builds a streaming chat target of the simulator at url.
func target(t testing.TB, url string) *prober.Target {
	t.Helper()
	tg, err := prober.NewTarget("sim", &scenarios.Target{
		URL: url, Endpoint: prober.EndpointChat, Model: simulator.DefaultModel,
		Timeout: scenarios.Duration(5 * time.Minute), StallTimeout: scenarios.Duration(5 * time.Minute),
	})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// cpuTime is the user+system CPU time of process pid, from /proc (in clock
// ticks of 10ms).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which may hold spaces: state is field 3,
	// utime 14 and stime 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// machineCPU is the CPU time the whole machine was busy (all processes and
// the kernel) and the time stolen from it by the hypervisor, from /proc/stat.
func machineCPU() (busy, steal time.Duration) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)[1:] // user nice system idle iowait irq softirq steal ...
	var ticks [8]int64
	for i := range ticks {
		if i < len(f) {
			ticks[i], _ = strconv.ParseInt(f[i], 10, 64)
		}
	}
	tick := func(n int64) time.Duration { return time.Duration(n) * 10 * time.Millisecond }
	return tick(ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]), tick(ticks[7])
}

// selfCPU is this process's CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rss is the resident set of process pid, in bytes.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// workerPIDs are this process's children running the worker command.
func workerPIDs() []int {
	var pids []int
	for _, pid := range childPIDs(os.Getpid()) {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if slices.Contains(strings.Split(string(cmdline), "\x00"), "worker") {
			pids = append(pids, pid)
		}
	}
	return pids
}

func sumCPU(pids []int) time.Duration {
	var d time.Duration
	for _, p := range pids {
		d += cpuTime(p)
	}
	return d
}

// quantile is the nearest-rank q-quantile of sorted s.
func quantile(s []time.Duration, q float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// µs formats d in microseconds.
func µs(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 0, 64) }

// table prints aligned rows.
type table struct {
	w    io.Writer
	rows [][]string
}

func (t *table) row(cells ...any) {
	r := make([]string, len(cells))
	for i, c := range cells {
		r[i] = fmt.Sprint(c)
	}
	t.rows = append(t.rows, r)
}

// flush prints the rows as a Markdown table, the first row as its header.
func (t *table) flush() {
	if len(t.rows) == 0 {
		return
	}
	width := make([]int, len(t.rows[0]))
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(r []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range r {
			fmt.Fprintf(&b, " %-*s |", width[i], c)
		}
		fmt.Fprintln(t.w, b.String())
	}
	line(t.rows[0])
	sep := make([]string, len(width))
	for i, w := range width {
		sep[i] = strings.Repeat("-", w)
	}
	line(sep)
	for _, r := range t.rows[1:] {
		line(r)
	}
	t.rows = nil
}

// every runs f every d until ctx ends.
func every(ctx context.Context, d time.Duration, f func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f()
		}
	}
}
