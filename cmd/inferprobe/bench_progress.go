package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report"
)

// Progress display modes, after --progress auto is resolved.
const (
	progressTTY   = "tty"   // one line rewritten in place every second
	progressPlain = "plain" // a new line every plainEvery
	progressOff   = "off"
)

const plainEvery = 5 * time.Second

// progressMode resolves --progress: auto is tty when w is a terminal.
func progressMode(flag string, w io.Writer) string {
	if flag != "auto" {
		return flag
	}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return progressTTY
		}
	}
	return progressPlain
}

// progress shows how far one phase of the run (warmup, profiling) is.
type progress struct {
	w         io.Writer
	mode      string
	what      string
	limit     prober.Limit
	start     time.Time
	lastPlain time.Time
	now       func() time.Time
	live      *liveStats // the measured requests' latencies; nil in the warmup
}

// newProgress shows a phase that started at start; zero is now.
func newProgress(w io.Writer, mode, what string, l prober.Limit, start time.Time) *progress {
	t := time.Now()
	if start.IsZero() {
		start = t
	}
	return &progress{w: w, mode: mode, what: what, limit: l, start: start, lastPlain: t, now: time.Now}
}

// update shows the current state: every call on a terminal, every
// plainEvery otherwise.
func (p *progress) update(r *report.Report) {
	now := p.now()
	switch p.mode {
	case progressTTY:
		// \r and erase-line: the line is rewritten in place.
		fmt.Fprintf(p.w, "\r\033[K%s", p.line(r, now))
	case progressPlain:
		if now.Sub(p.lastPlain) >= plainEvery {
			p.lastPlain = now
			fmt.Fprintln(p.w, p.line(r, now))
		}
	}
}

// finish ends the live line so that what follows starts on its own line.
func (p *progress) finish(r *report.Report) {
	if p.mode == progressTTY {
		fmt.Fprintf(p.w, "\r\033[K%s\n", p.line(r, p.now()))
	}
}

// note says something on a line of its own, whatever the mode: on a
// terminal it replaces the live line, which the next update redraws.
func (p *progress) note(msg string) {
	if p.mode == progressTTY {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintln(p.w, msg)
}

// line is "profiling: 120/200 requests (60%), 9.8 req/s, 2 errors, TTFT p50
// 101ms p99 130ms, ITL p50 5.01ms p99 7.1ms, 812.3 output tok/s, elapsed 12s, ETA 8s".
func (p *progress) line(r *report.Report, now time.Time) string {
	ok, failed, cancelled := r.Counts()
	done := ok + failed + cancelled
	elapsed := now.Sub(p.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	line := fmt.Sprintf("%s: %d requests done", p.what, done)
	var eta time.Duration = -1
	switch {
	case p.limit.Requests > 0:
		line = fmt.Sprintf("%s: %d/%d requests (%.0f%%)", p.what, done, p.limit.Requests, 100*float64(done)/float64(p.limit.Requests))
		if rate > 0 && uint64(done) <= p.limit.Requests {
			eta = time.Duration(float64(p.limit.Requests-uint64(done)) / rate * float64(time.Second))
		}
	case p.limit.Duration > 0:
		line += fmt.Sprintf(", %v of %v", elapsed.Round(time.Second), p.limit.Duration)
		eta = max(p.limit.Duration-elapsed, 0)
	}
	line += fmt.Sprintf(", %.1f req/s, %d errors", rate, failed)
	if p.live != nil {
		line += p.live.line(elapsed)
	}
	line += fmt.Sprintf(", elapsed %v", elapsed.Round(time.Second))
	if eta >= 0 {
		line += fmt.Sprintf(", ETA %v", eta.Round(time.Second))
	}
	return line
}

// executeWithProgress executes run, showing each phase's progress and, for
// the measured requests, live. The first SIGINT or SIGTERM on sigs stops
// sending and lets the requests in flight finish (they can take up to
// --request-timeout-seconds); a second cancels them; a third ends the
// process at once. The guard passing its threshold stops sending and
// cancels the requests in flight, and so does reaching deadline (a capacity
// search's time limit; zero for none), which sets cut. interrupted says a
// signal stopped the run.
func executeWithProgress(run *finite.Run, mode string, stderr io.Writer, sigs chan os.Signal, live *liveStats, guard *finite.FailureGuard, deadline time.Time) (res finite.Result, interrupted, cut bool) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	reqCtx, abort := context.WithCancel(context.Background())
	defer abort()

	done := make(chan finite.Result, 1)
	go func() { done <- run.Execute(ctx, reqCtx) }()
	var bar *progress
	var shown finite.Progress
	// show follows the phase sending now, starting a line for each.
	show := func() {
		now := run.Progress()
		if now.Phase != shown.Phase || bar == nil {
			if bar != nil {
				bar.finish(shown.Report)
			}
			bar = newProgress(stderr, mode, string(now.Phase), now.Limit, now.Started)
			if now.Phase == finite.PhaseProfiling {
				bar.live = live
			}
		} else if !now.Started.IsZero() {
			bar.start = now.Started // shown before Execute started it
		}
		shown = now
	}
	show()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	tripped := guard.Tripped()
	var timeUp <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeUp = t.C
	}
	for {
		select {
		case res := <-done:
			show()
			bar.finish(shown.Report)
			return res, interrupted, cut
		case <-timeUp:
			cut = true
			stop()
			abort()
			bar.note("inferprobe bench: the search's --search-time-limit ran out; stopping this step and cancelling its requests in flight")
		case <-tripped:
			// As AIPerf's PROFILE_CANCEL: the run is failing, so the
			// requests in flight are cancelled rather than waited for.
			tripped = nil
			stop()
			abort()
			bar.note("inferprobe bench: " + guard.Reason() + "; stopping and cancelling the requests in flight")
		case <-sigs:
			interrupted = true
			if ctx.Err() == nil {
				stop()
				bar.note("inferprobe bench: interrupted; waiting for the requests in flight to finish (Ctrl-C again cancels them)")
			} else {
				abort()
				signal.Stop(sigs) // one more ends the process
				bar.note("inferprobe bench: cancelling the requests in flight")
			}
		case <-tick.C:
			show()
			bar.update(shown.Report)
		}
	}
}
