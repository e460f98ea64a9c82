package main

import (
	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/report"
)

// Exit statuses of bench; docs/bench.md and `bench --help` list them.
const (
	exitOK          = 0
	exitCannotRun   = 1 // worker processes would not start, the artifacts could not be written, --tokenizer's model could not be downloaded, or an internal error
	exitUsage       = 2 // a flag is wrong (--tokenizer's model refused by the Hub or the settings included); nothing was sent
	exitRegressed   = 3 // a --compare-fail rule failed: past its bound and, where tested, significant
	exitAllFailed   = 4 // requests were sent and not one succeeded (failed, or lost with the workers)
	exitThreshold   = 5 // failures passed --failed-request-threshold
	exitPartial     = 6 // bench merge: a shard is missing or did not finish
	exitInterrupted = 130
)

// exitCodesHelp is the exit-status table for `bench --help`.
const exitCodesHelp = "Exit status: 0 success; 1 could not run (workers, artifacts, no network for --tokenizer's download, an internal error); 2 bad flags (a --tokenizer model offline and not cached, or refused by the Hub), nothing sent; " +
	"3 a --compare-fail rule failed (past its bound and, with the baseline's per-request records, a significant change); 4 every request failed; 5 failures passed --failed-request-threshold; " +
	"6 (bench merge) a shard is missing or did not finish, the merged report is partial; " +
	"130 interrupted (SIGINT/SIGTERM). A sweep or --num-profile-runs exits with its first point's or run's non-zero status, 130 if interrupted; " +
	"a capacity search (--search-recipe) exits 0 once it has its answer, even when steps failed (a failed step is an infeasible one)."

// runStatus is the exit status of one finished run and, when it is not
// success, why, briefly (a sweep's summary lists it); finite.Verdict
// decides it, for bench and bursts alike.
func runStatus(s report.Summary, guard *finite.FailureGuard) (int, string) {
	outcome, why := finite.Verdict(s, guard)
	return outcomeStatus[outcome], why
}

// outcomeStatus is bench's exit status for each outcome of a run.
var outcomeStatus = map[finite.Outcome]int{
	finite.OutcomeOK:        exitOK,
	finite.OutcomeAllFailed: exitAllFailed,
	finite.OutcomeThreshold: exitThreshold,
}

// statusHint says what to do about a run's failure status.
var statusHint = map[int]string{
	exitAllFailed: "see Errors by reason in the report; check --url, --model, --endpoint-type and the API key",
	exitThreshold: "the run was stopped there and its requests in flight cancelled; see Errors by reason in the report",
}
