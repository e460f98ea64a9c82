package main

import (
	"fmt"
	"sync"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// Exit statuses of bench; README.md and `bench --help` list them.
const (
	exitOK          = 0
	exitCannotRun   = 1 // worker processes would not start, the artifacts could not be written, or an internal error
	exitUsage       = 2 // a flag is wrong; nothing was sent
	exitRegressed   = 3 // a --compare-fail rule failed
	exitAllFailed   = 4 // requests were sent and not one succeeded
	exitThreshold   = 5 // failures passed --failed-request-threshold
	exitPartial     = 6 // bench merge: a shard is missing or did not finish
	exitInterrupted = 130
)

// exitCodesHelp is the exit-status table for `bench --help`.
const exitCodesHelp = "Exit status: 0 success; 1 could not run (workers, artifacts, an internal error); 2 bad flags, nothing sent; " +
	"3 a --compare-fail rule failed; 4 every request failed; 5 failures passed --failed-request-threshold; " +
	"6 (bench merge) a shard is missing or did not finish, the merged report is partial; " +
	"130 interrupted (SIGINT/SIGTERM). A sweep exits with its first point's non-zero status, 130 if interrupted."

// thresholdFloor is AIPerf's grace floor for --failed-request-threshold:
// the check is armed once max(concurrency, 10) requests have finished, so
// one early failure cannot end the run.
func thresholdFloor(concurrency int) int { return max(concurrency, 10) }

// failureGuard ends a run early, as AIPerf's --failed-request-threshold does,
// once more than threshold of the finished measured requests have failed.
// It is a prober.Recorder fed every measured request.
type failureGuard struct {
	threshold float64
	floor     int

	mu            sync.Mutex
	total, failed int
	tripped       chan struct{} // closed when the threshold is passed
	why           string
}

func newFailureGuard(threshold float64, floor int) *failureGuard {
	return &failureGuard{threshold: threshold, floor: floor, tripped: make(chan struct{})}
}

// Started is part of prober.Recorder.
func (g *failureGuard) Started() {}

// Observe counts a finished request.
func (g *failureGuard) Observe(rec *record.Record) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total++
	if rec.Outcome == record.OutcomeError {
		g.failed++
	}
	if g.why == "" && passesThreshold(g.failed, g.total, g.threshold, g.floor) {
		g.why = fmt.Sprintf("%d of %d requests failed (%.3f > --failed-request-threshold %g)", g.failed, g.total, float64(g.failed)/float64(g.total), g.threshold)
		close(g.tripped)
	}
}

// Tripped is closed once the threshold is passed; nil for no guard.
func (g *failureGuard) Tripped() <-chan struct{} {
	if g == nil {
		return nil
	}
	return g.tripped
}

// reason says why the guard ended the run, or "".
func (g *failureGuard) reason() string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.why
}

// passesThreshold is AIPerf's rule: armed from floor finished requests on,
// it passes when failed/total exceeds threshold.
func passesThreshold(failed, total int, threshold float64, floor int) bool {
	return total > 0 && total >= floor && float64(failed)/float64(total) > threshold
}

// runStatus is the exit status of one finished run and, when it is not
// success, why, briefly (a sweep's summary lists it). Every request failing
// says more than the threshold passing (the target is wrong, not slow), so
// it wins.
func runStatus(s report.Summary, guard *failureGuard) (int, string) {
	switch {
	case s.OK == 0 && s.Failed > 0:
		return exitAllFailed, fmt.Sprintf("all %d requests failed", s.Failed)
	case guard.reason() != "":
		// The guard sees every measured request, so it has judged the end too.
		return exitThreshold, guard.reason()
	}
	return exitOK, ""
}

// statusHint says what to do about a run's failure status.
var statusHint = map[int]string{
	exitAllFailed: "see Errors by reason in the report; check --url, --model, --endpoint-type and the API key",
	exitThreshold: "the run was stopped there and its requests in flight cancelled; see Errors by reason in the report",
}
