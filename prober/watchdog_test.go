package prober

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWatchdogLateTick: a tick later than pauseThreshold is a pause from
// the tick before; a request overlapping it is charged the overlap, one
// that does not nothing; a pause the ticker has not yet seen counts up to
// the asking.
func TestWatchdogLateTick(t *testing.T) {
	t0 := time.Now()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	w := &watchdog{last: t0}
	w.tick(at(watchdogTick))
	w.tick(at(2 * watchdogTick)) // on time: no pause
	if got := w.overlap(t0, at(2*watchdogTick), at(2*watchdogTick)); got != 0 {
		t.Fatalf("ticks on time: paused %v, want 0", got)
	}
	stopped := 2 * time.Second
	last := 2*watchdogTick + stopped
	w.tick(at(last))
	// Asked as the ticker ran: no pause is pending.
	for _, tc := range []struct {
		from, to time.Duration
		want     time.Duration
	}{
		{0, 10 * time.Second, stopped},                                          // in flight throughout
		{time.Second, 10 * time.Second, stopped + 2*watchdogTick - time.Second}, // sent during it
		{0, 2 * watchdogTick, 0},                                                // ended before it
		{3 * time.Second, 4 * time.Second, 0},                                   // sent after it
	} {
		if got := w.overlap(at(tc.from), at(tc.to), at(last)); got != tc.want {
			t.Errorf("request over [%v, %v]: paused %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
	// The process stopped again, and a request ended before the ticker ran.
	if got, want := w.overlap(at(last), at(last+time.Second), at(last+time.Second)), time.Second; got != want {
		t.Errorf("a pause not yet ticked: paused %v, want %v", got, want)
	}
}

// TestWatchdogThrottled: a stretch of ticks in which the cgroup's
// throttled time grows is one pause once the throttling passes
// pauseThreshold, and grows while it lasts; throttling below it is none.
func TestWatchdogThrottled(t *testing.T) {
	stat := filepath.Join(t.TempDir(), "cpu.stat")
	setThrottled := func(d time.Duration) {
		t.Helper()
		body := fmt.Sprintf("usage_usec 100\nnr_periods 10\nnr_throttled 3\nthrottled_usec %d\n", d.Microseconds())
		if err := os.WriteFile(stat, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setThrottled(time.Second)
	t0 := time.Now()
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * watchdogTick) }
	w := &watchdog{last: t0, cpuStat: stat, throttled: time.Second}
	throttled := time.Second
	step := pauseThreshold / 3 // three ticks of throttling are not yet a pause
	for i := 1; i <= 3; i++ {
		throttled += step
		setThrottled(throttled)
		w.tick(at(i))
	}
	if w.n != 0 {
		t.Fatalf("%v of throttling made %d pauses, want none", 3*step, w.n)
	}
	for i := 4; i <= 6; i++ {
		throttled += step
		setThrottled(throttled)
		w.tick(at(i))
	}
	w.tick(at(7)) // no more throttling
	if w.n != 1 || !w.pauses[0].from.Equal(at(0)) || !w.pauses[0].to.Equal(at(6)) {
		t.Fatalf("a stretch of throttling gave pauses %v (%d), want one over ticks 0 to 6", w.pauses[:w.n], w.n)
	}
	if got := w.overlap(at(5), at(7), at(7)); got != watchdogTick {
		t.Errorf("a request sent late in the stretch: paused %v, want %v", got, watchdogTick)
	}
}

// TestWatchdogCPUQuota runs a process that keeps its CPUs busy in a cgroup
// with a small CPU quota: its watchdog sees the throttling. It needs a
// cgroup v2 this test may create a cgroup in.
func TestWatchdogCPUQuota(t *testing.T) {
	if os.Getenv("INFERPROBE_WATCHDOG_BUSY") != "" {
		busyAndReport()
		return
	}
	parent, err := delegatedCgroup()
	if err != nil {
		t.Skip("no cgroup v2 to create a cgroup with a CPU quota in:", err)
	}
	dir := filepath.Join(parent, fmt.Sprintf("inferprobe-watchdog-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skip("cannot create a cgroup:", err)
	}
	defer os.Remove(dir)
	// 10 ms of CPU per 100 ms period: a busy process is held back 90 ms
	// every period.
	if err := os.WriteFile(filepath.Join(dir, "cpu.max"), []byte("10000 100000"), 0o644); err != nil {
		t.Skip("cannot set a CPU quota:", err)
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchdogCPUQuota$")
	cmd.Env = append(os.Environ(), "INFERPROBE_WATCHDOG_BUSY=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("busy process: %v\n%s", err, out)
	}
	_, v, ok := strings.Cut(string(out), "paused=")
	paused, perr := strconv.ParseInt(strings.Fields(v + " ")[0], 10, 64)
	if !ok || perr != nil {
		t.Fatalf("busy process said %q", out)
	}
	if paused <= 0 {
		t.Errorf("throttled to 10%% of a CPU, the busy process's watchdog saw no pause:\n%s", out)
	}
}

// busyAndReport keeps every CPU busy for two seconds and prints how long
// the watchdog says the process did not run meanwhile.
func busyAndReport() {
	StartWatchdog()
	start := time.Now()
	for range 4 {
		go func() {
			for time.Since(start) < 3*time.Second {
			}
		}()
	}
	time.Sleep(2 * time.Second)
	fmt.Printf("paused=%d\n", ClientPaused(start, time.Now()))
}

// delegatedCgroup is this process's cgroup v2 directory, when the cpu
// controller is enabled for its children.
func delegatedCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		if path, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			dir := filepath.Join("/sys/fs/cgroup", path)
			ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
			if err != nil {
				return "", err
			}
			if !strings.Contains(string(ctl), "cpu") {
				return "", fmt.Errorf("%s does not delegate the cpu controller (cgroup.subtree_control: %q)", dir, strings.TrimSpace(string(ctl)))
			}
			return dir, nil
		}
	}
	return "", fmt.Errorf("not in a cgroup v2")
}

// TestClientPausedAllocs: judging a request against the pauses allocates
// nothing; a request pays it once.
func TestClientPausedAllocs(t *testing.T) {
	from := time.Now()
	if n := testing.AllocsPerRun(100, func() { ClientPaused(from, time.Now()) }); n != 0 {
		t.Errorf("ClientPaused allocates %v times, want 0", n)
	}
}
