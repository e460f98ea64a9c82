package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// TestSweepPoints: a list after --concurrency or --request-rate is a sweep,
// each point in AIPerf's variation directory (concurrency_N, rate_R with
// Python's float spelling; both: their grid, joined by __); one value is one run.
func TestSweepPoints(t *testing.T) {
	dirs := func(args ...string) []string {
		var out []string
		for _, p := range parseBench(t, append([]string{"--model", "m"}, args...)...).sweepPoints() {
			out = append(out, p.dir)
		}
		return out
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--concurrency", "4"}, []string{""}},
		{[]string{"--concurrency", "1,4,16,64"}, []string{"concurrency_1", "concurrency_4", "concurrency_16", "concurrency_64"}},
		{[]string{"--request-rate", "1,5,10"}, []string{"rate_1.0", "rate_5.0", "rate_10.0"}},
		{[]string{"--request-rate", "0.5, 2.5"}, []string{"rate_0.5", "rate_2.5"}},
		{[]string{"--concurrency", "1,2", "--request-rate", "5,10"}, []string{"concurrency_1__rate_5.0", "concurrency_1__rate_10.0", "concurrency_2__rate_5.0", "concurrency_2__rate_10.0"}},
	} {
		if got := dirs(tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("%v: points %q, want %q", tc.args, got, tc.want)
		}
	}
	f := parseBench(t, "--model", "m", "--concurrency", "8,2")
	if f.concurrency != 8 || defaultArtifactDir(f) != "artifacts/m-chat-concurrency8" {
		t.Errorf("the first value is the flag's: concurrency %d, directory %s", f.concurrency, defaultArtifactDir(f))
	}
	// A 0 would be taken for "no value" and run the first point again; a
	// value given twice would overwrite its directory.
	for list, want := range map[string]string{
		"--concurrency=1,x":   "not a whole number or a comma-separated list",
		"--concurrency=1,0":   "every value of a sweep must be above 0",
		"--request-rate=5,-1": "every value of a sweep must be above 0",
		"--concurrency=4,4":   "4 comes twice",
	} {
		app, _ := benchApp()
		if _, err := app.Parse([]string{"bench", "--model", "m", list}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", list, err, want)
		}
	}
}

// TestSweepSeeds: point i of a sweep draws from the seed + i, as AIPerf's;
// with --parameter-sweep-same-seed every point draws from --random-seed,
// which it then needs.
func TestSweepSeeds(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []uint64
	}{
		{[]string{"--random-seed", "7"}, []uint64{7, 8, 9}},
		{[]string{"--random-seed", "7", "--parameter-sweep-same-seed"}, []uint64{7, 7, 7}},
	} {
		f := parseBench(t, append([]string{"--model", "m", "--concurrency", "1,2,4"}, tc.args...)...)
		seed, args := f.seed, f.args
		var got []uint64
		for i, p := range f.sweepPoints() {
			f.apply(p, i, seed, args)
			got = append(got, f.seed)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: seeds %v, want %v", tc.args, got, tc.want)
		}
	}
	var stderr strings.Builder
	if code := runBench(nil, io.Discard, &stderr, parseBench(t, "--model", "m", "--concurrency", "1,2", "--parameter-sweep-same-seed"), nil, nil); code != exitUsage ||
		!strings.Contains(stderr.String(), "--parameter-sweep-same-seed needs --random-seed") {
		t.Errorf("without --random-seed: exit %d, %q; want %d saying it needs one", code, stderr.String(), exitUsage)
	}
}

// TestRunStatus: every request failing, and failures past
// --failed-request-threshold, are failures of the run; success is 0.
func TestRunStatus(t *testing.T) {
	tripped := finite.NewFailureGuard(0.2, 10, "--failed-request-threshold")
	for i := range 10 {
		rec := &record.Record{Seq: uint64(i)}
		if i%2 == 0 {
			rec.Outcome = record.OutcomeError
		}
		tripped.Observe(rec)
	}
	select {
	case <-tripped.Tripped():
	default:
		t.Fatal("5 of 10 failed and the 0.2 threshold did not trip")
	}
	early := finite.NewFailureGuard(0.2, 10, "--failed-request-threshold")
	for i := range 9 { // below the grace floor
		early.Observe(&record.Record{Seq: uint64(i), Outcome: record.OutcomeError})
	}
	for _, tc := range []struct {
		name  string
		s     report.Summary
		guard *finite.FailureGuard
		want  int
	}{
		{"success", report.Summary{OK: 10}, nil, exitOK},
		{"success under a threshold", report.Summary{OK: 9, Failed: 1}, finite.NewFailureGuard(0.2, 10, "--failed-request-threshold"), exitOK},
		{"all failed", report.Summary{Failed: 3}, nil, exitAllFailed},
		{"all failed beats the threshold", report.Summary{Failed: 10}, tripped, exitAllFailed},
		{"threshold passed", report.Summary{OK: 5, Failed: 5}, tripped, exitThreshold},
		{"below the grace floor", report.Summary{OK: 0, Failed: 9}, early, exitAllFailed},
		{"nothing sent", report.Summary{}, nil, exitOK},
	} {
		if got, why := runStatus(tc.s, tc.guard); got != tc.want || (got != exitOK) != (why != "") {
			t.Errorf("%s: exit %d (%q), want %d", tc.name, got, why, tc.want)
		}
	}
	if finite.PassesThreshold(2, 9, 0.1, 10) || !finite.PassesThreshold(2, 10, 0.1, 10) || finite.PassesThreshold(1, 10, 0.1, 10) {
		t.Error("PassesThreshold: want armed from the floor, and strictly more than the threshold")
	}
}
