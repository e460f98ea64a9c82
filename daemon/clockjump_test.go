package daemon_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/daemon"
)

// steppedClock is the daemon's real clock with a wall clock that can be
// stepped (NTP, an operator, a VM resumed with a stale clock) apart from the
// monotonic clock. Now reads the wall clock; At does what the real clock's
// time.After(time.Until(t)) does: it turns the instant into a delay when it
// is called and then waits on the monotonic clock, which a step does not
// move. Its times carry no monotonic reading, like the cron times a
// schedule computes, so the scheduler compares them by wall time, as it
// does in production.
type steppedClock struct {
	mu      sync.Mutex
	wall    time.Time     // wall time at monotonic 0; steps move it
	mono    time.Duration // monotonic time elapsed
	waiters []monoWaiter
	asked   int       // calls of At so far
	last    time.Time // the instant of the latest call
}

type monoWaiter struct {
	deadline time.Duration // on the monotonic clock
	ch       chan time.Time
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall.Add(c.mono)
}

func (c *steppedClock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked, c.last = c.asked+1, t
	ch := make(chan time.Time, 1)
	now := c.wall.Add(c.mono)
	if d := t.Sub(now); d > 0 {
		c.waiters = append(c.waiters, monoWaiter{c.mono + d, ch})
	} else {
		ch <- now
	}
	return ch
}

// elapse lets d pass on both clocks and ends the waits that are due.
func (c *steppedClock) elapse(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mono += d
	var left []monoWaiter
	for _, w := range c.waiters {
		if w.deadline <= c.mono {
			w.ch <- c.wall.Add(c.mono)
		} else {
			left = append(left, w)
		}
	}
	c.waiters = left
}

// step moves the wall clock alone; waits keep their monotonic deadlines.
func (c *steppedClock) step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = c.wall.Add(d)
}

// waits returns how many times At was called and the latest instant asked.
func (c *steppedClock) waits() (int, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked, c.last
}

// waitAsleep waits until the scheduler has called At more than before times
// and its latest wait is for the instant until: it has handled everything
// due and gone back to sleep.
func waitAsleep(t *testing.T, c *steppedClock, before int, until time.Time) {
	t.Helper()
	waitFor(t, "the scheduler to sleep until "+until.Format(time.TimeOnly), func() bool {
		n, last := c.waits()
		return n > before && last.Equal(until)
	})
}

// hourly is a burst that starts at every full hour (UTC) and ends after two
// requests.
var hourly = `s: {target: tb, schedule: "CRON_TZ=UTC 0 * * * *", requests: 2, ` + fast + `}`

// TestCronForwardClockStep: the wall clock jumps 5 hours ahead while the
// scheduler sleeps towards 01:00. The scheduler's wait runs on the monotonic
// clock, so it wakes when the hour it meant to wait has passed, at wall
// 06:00; it then runs the missed start once (not the five jumped over) and
// follows the new wall clock: the next start is 07:00.
func TestCronForwardClockStep(t *testing.T) {
	clk := &steppedClock{wall: t0}
	d, _, _ := startBursts(t, burstYAML(hourly), newFakeExec(), daemon.WithClock(clk))
	waitAsleep(t, clk, 0, t0.Add(time.Hour))

	clk.elapse(30 * time.Minute)
	clk.step(5 * time.Hour) // wall 05:30: slots 01:00 to 05:00 jumped over
	n, _ := clk.waits()
	clk.elapse(30 * time.Minute) // the monotonic hour is over: wall 06:00
	waitAsleep(t, clk, n, t0.Add(7*time.Hour))
	runs := runsOf(d, "s")
	if len(runs) != 1 {
		t.Fatalf("%d runs after a forward step over 5 starts, want 1: %+v", len(runs), runs)
	}
	if ri := waitRun(t, d, runs[0].ID, daemon.RunSucceeded); !ri.Started.Equal(t0.Add(6 * time.Hour)) {
		t.Errorf("the missed start ran at %v, want when the scheduler woke, %v", ri.Started, t0.Add(6*time.Hour))
	}
	if next := d.Bursts()[0].Next; !next.Equal(t0.Add(7 * time.Hour)) {
		t.Errorf("next start %v, want the next full hour of the new wall clock, %v", next, t0.Add(7*time.Hour))
	}

	n, _ = clk.waits()
	clk.elapse(time.Hour)
	waitAsleep(t, clk, n, t0.Add(8*time.Hour))
	if runs := runsOf(d, "s"); len(runs) != 2 || !runs[0].Started.Equal(t0.Add(7*time.Hour)) {
		t.Fatalf("runs %+v, want a second one at 07:00", runs)
	}
	waitRun(t, d, runsOf(d, "s")[0].ID, daemon.RunSucceeded)
	wantNoStorm(t, d)
}

// wantNoStorm requires burst s to have run twice and skipped no start: a
// scheduler that replays missed starts in a row finds the target busy and
// skips them, so the skips are the storm.
func wantNoStorm(t *testing.T, d *daemon.Daemon) {
	t.Helper()
	if v, _ := metric(t, d, "inferprobe_burst_runs_total", map[string]string{"burst": "s", "result": "succeeded"}); v != 2 {
		t.Errorf("runs_total{succeeded} = %v, want 2", v)
	}
	if v, _ := metric(t, d, "inferprobe_burst_skipped_total", map[string]string{"burst": "s"}); v != 0 {
		t.Errorf("skipped_total = %v, want 0: missed starts were replayed", v)
	}
}

// TestCronBackwardClockStep: the wall clock steps an hour back after the
// 01:00 start, so it shows 01:00 again later. The start that ran is not run
// again: the scheduler wakes early by the wall clock, finds 02:00 still
// ahead, and waits for it.
func TestCronBackwardClockStep(t *testing.T) {
	clk := &steppedClock{wall: t0}
	d, _, _ := startBursts(t, burstYAML(hourly), newFakeExec(), daemon.WithClock(clk))
	waitAsleep(t, clk, 0, t0.Add(time.Hour))
	clk.elapse(time.Hour)
	waitAsleep(t, clk, 1, t0.Add(2*time.Hour))
	first := runsOf(d, "s")
	if len(first) != 1 || !first[0].Started.Equal(t0.Add(time.Hour)) {
		t.Fatalf("runs %+v, want one at 01:00", first)
	}
	waitRun(t, d, first[0].ID, daemon.RunSucceeded)

	clk.elapse(30 * time.Minute)
	clk.step(-time.Hour) // wall 00:30
	n, _ := clk.waits()
	clk.elapse(30 * time.Minute) // the wait for 02:00 ends on the monotonic clock at wall 01:00
	waitAsleep(t, clk, n, t0.Add(2*time.Hour))
	if runs := runsOf(d, "s"); len(runs) != 1 {
		t.Fatalf("%d runs once the stepped-back wall clock showed 01:00 again, want still 1: %+v", len(runs), runs)
	}

	n, _ = clk.waits()
	clk.elapse(time.Hour) // wall 02:00
	waitAsleep(t, clk, n, t0.Add(3*time.Hour))
	runs := runsOf(d, "s")
	if len(runs) != 2 || !runs[0].Started.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("runs %+v, want a second one at 02:00", runs)
	}
	waitRun(t, d, runs[0].ID, daemon.RunSucceeded)
	wantNoStorm(t, d)
}

// monoClock is a clock whose times carry a monotonic reading, as
// time.Now's do; elapse moves it on, so schedules can be followed without
// waiting.
type monoClock struct {
	mu      sync.Mutex
	base    time.Time // from time.Now: has a monotonic reading
	elapsed time.Duration
	waiters []fakeWaiter
}

func (c *monoClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(c.elapsed)
}

func (c *monoClock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if now := c.base.Add(c.elapsed); !t.After(now) {
		ch <- now
	} else {
		c.waiters = append(c.waiters, fakeWaiter{t, ch})
	}
	return ch
}

func (c *monoClock) elapse(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.elapsed += d
	now := c.base.Add(c.elapsed)
	var left []fakeWaiter
	for _, w := range c.waiters {
		if w.at.After(now) {
			left = append(left, w)
		} else {
			w.ch <- now
		}
	}
	c.waiters = left
}

// hasMonotonic reports whether t carries a monotonic clock reading, which
// Time.String shows as a final "m=±value" field.
func hasMonotonic(t time.Time) bool { return strings.Contains(t.String(), " m=") }

// TestEveryScheduleIsMonotonic: an every: schedule counts elapsed time, so a
// wall-clock step must not move it. It does not, because its next start is
// derived from the clock's Now by adding durations, which keeps Now's
// monotonic reading; Go then compares such times, and time.Until measures
// them, by the monotonic clock alone. The test fails if the schedule drops
// the reading (Round, Truncate, UTC, In, a time rebuilt from its fields),
// which would make a step of the wall clock delay or hasten every runs.
func TestEveryScheduleIsMonotonic(t *testing.T) {
	clk := &monoClock{base: time.Now()}
	d, _, _ := startBursts(t, burstYAML("e: {target: tb, every: 90m, requests: 2, "+fast+"}"), newFakeExec(), daemon.WithClock(clk))
	first := d.Bursts()[0].Next
	if !hasMonotonic(first) {
		t.Fatalf("next start %v has no monotonic reading: a wall-clock step would move it", first)
	}
	if want := clk.Now().Add(90 * time.Minute); !first.Equal(want) {
		t.Fatalf("next start %v, want 90m after loading, %v", first, want)
	}
	// A long stall (a suspended machine): one run, and the following start
	// still on the monotonic clock.
	clk.elapse(5 * time.Hour)
	waitFor(t, "the run after the stall", func() bool { return len(runsOf(d, "e")) == 1 })
	waitRun(t, d, runsOf(d, "e")[0].ID, daemon.RunSucceeded)
	want := first.Add(3 * 90 * time.Minute) // the first start of the 90m grid after 5h
	waitFor(t, "the start after the stall to be planned", func() bool { return d.Bursts()[0].Next.Equal(want) })
	if next := d.Bursts()[0].Next; !hasMonotonic(next) {
		t.Errorf("next start after a run %v has no monotonic reading: a wall-clock step would move it", next)
	}
	if n := len(runsOf(d, "e")); n != 1 {
		t.Errorf("%d runs after a stall over three starts, want 1", n)
	}
}
