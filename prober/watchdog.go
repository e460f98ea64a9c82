package prober

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// pauseThreshold is how long a process may go without running before what
// it timed meanwhile is not the server's: a SIGSTOP, a VM paused by its
// host, a container throttled by its CPU quota, a long stop-the-world pause.
// 500 ms is far above the delays of a busy machine's scheduler (tens of ms,
// which the client-saturation signals judge), so a loaded CI host does not
// mark requests, and well below the pauses that turned a 51 ms TTFT into 2 s.
const pauseThreshold = 500 * time.Millisecond

// watchdogTick is how often the watchdog looks: its lateness is the measure
// of a pause, so it ticks well within pauseThreshold.
const watchdogTick = pauseThreshold / 5

// keptPauses is how many of the latest pauses are kept to judge the requests
// that were in flight during them; a request overlapping more is marked anyway.
const keptPauses = 64

// pause is a span in which the process did not run, as monotonic readings.
type pause struct{ from, to time.Time }

// watchdog notices the spans in which its process did not run: its ticker
// came late by more than pauseThreshold, or the cgroup's CPU quota held it
// back that long in one stretch of throttling (cgroup v2 cpu.stat). It
// costs a request one lock and a look at the latest pauses (ClientPaused),
// nothing per chunk.
type watchdog struct {
	mu     sync.Mutex
	last   time.Time // the latest tick
	pauses [keptPauses]pause
	n      int // pauses seen; the latest is pauses[(n-1)%keptPauses]

	cpuStat string // the cgroup's cpu.stat; "" without one
	// throttled is cpu.stat's throttled_usec at the latest tick;
	// throttledFrom the tick before the current stretch of throttling
	// began (zero outside one) and stretch the throttling since.
	throttled     time.Duration
	throttledFrom time.Time
	stretch       time.Duration
}

var processWatchdog = sync.OnceValue(func() *watchdog {
	w := &watchdog{last: time.Now(), cpuStat: cgroupCPUStat()}
	w.throttled, _ = readThrottled(w.cpuStat)
	go w.watch()
	return w
})

// StartWatchdog starts the process's watchdog, if it has not started: a
// process that times requests calls it before its first, so that a pause
// during that one is seen.
func StartWatchdog() { processWatchdog() }

// ClientPaused is how long, between from and to, the process did not run
// for more than pauseThreshold at a time: what it timed over that span is
// not the server's. A pause still going on when it is asked (the watchdog
// has not run since) counts up to now.
func ClientPaused(from, to time.Time) time.Duration {
	return processWatchdog().overlap(from, to, time.Now())
}

func (w *watchdog) overlap(from, to, now time.Time) time.Duration {
	var sum time.Duration
	add := func(p pause) {
		if d := minTime(to, p.to).Sub(maxTime(from, p.from)); d > 0 {
			sum += d
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := max(0, w.n-keptPauses); i < w.n; i++ {
		add(w.pauses[i%keptPauses])
	}
	if now.Sub(w.last) > pauseThreshold {
		add(pause{w.last, now})
	}
	return sum
}

func (w *watchdog) watch() {
	t := time.NewTicker(watchdogTick)
	defer t.Stop()
	for range t.C {
		// The tick's own time is when it was due, not when this goroutine
		// ran: the lateness is now's.
		w.tick(time.Now())
	}
}

// tick records the pause that ended at now, if the watchdog was kept from
// running that long, and the cgroup's throttling since the last tick.
func (w *watchdog) tick(now time.Time) {
	throttled, ok := readThrottled(w.cpuStat)
	w.mu.Lock()
	defer w.mu.Unlock()
	prev := w.last
	w.last = now
	if now.Sub(prev) > pauseThreshold {
		w.add(pause{prev, now})
	}
	if !ok {
		return
	}
	d := throttled - w.throttled
	w.throttled = throttled
	if d <= 0 {
		w.throttledFrom, w.stretch = time.Time{}, 0
		return
	}
	if w.throttledFrom.IsZero() {
		w.throttledFrom = prev
	}
	w.stretch += d
	if w.stretch > pauseThreshold {
		// One pause for the stretch, which grows while it lasts.
		if latest := &w.pauses[(w.n-1+keptPauses)%keptPauses]; w.n > 0 && latest.from.Equal(w.throttledFrom) {
			latest.to = maxTime(latest.to, now)
		} else {
			w.add(pause{w.throttledFrom, now})
		}
	}
}

// add keeps p; the caller holds mu.
func (w *watchdog) add(p pause) {
	w.pauses[w.n%keptPauses] = p
	w.n++
}

// cgroupCPUStat is the path of the cpu.stat of the process's cgroup v2, or ""
// where there is none (cgroup v1, not Linux).
func cgroupCPUStat() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if path, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			p := "/sys/fs/cgroup" + path + "/cpu.stat"
			if _, ok := readThrottled(p); ok {
				return p
			}
		}
	}
	return ""
}

// readThrottled reads throttled_usec of the cpu.stat at path.
func readThrottled(path string) (time.Duration, bool) {
	if path == "" {
		return 0, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "throttled_usec "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Duration(n) * time.Microsecond, err == nil
		}
	}
	return 0, false
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
