package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMultiRunFlagsRefused: each multi-run flag's bad value, and each
// combination a multi-run cannot be, is a flag error (exit 2) naming the
// flag and the value, before anything is sent.
func TestMultiRunFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--num-profile-runs", "0"}, "--num-profile-runs 0: must be from 1 to 10"},
		{[]string{"--num-profile-runs", "11"}, "--num-profile-runs 11: must be from 1 to 10"},
		{[]string{"--num-profile-runs", "3", "--profile-run-cooldown-seconds=-1"}, "--profile-run-cooldown-seconds -1: must be from 0 to 86400"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "time_to_first_token", "--convergence-threshold", "1.5"}, "--convergence-threshold 1.5: must be between 0 and 1"},
		{[]string{"--convergence-metric", "time_to_first_token"}, "--convergence-metric needs --num-profile-runs of at least 2"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "time_to_frist_token"}, `--convergence-metric "time_to_frist_token": not a metric of profile_export_aiperf.json`},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_throughput", "--convergence-mode", "distribution"}, "--convergence-mode distribution compares per-request values, and request_throughput is a run-wide value"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_throughput", "--convergence-stat", "p99"}, "--convergence-stat p99: request_throughput is a run-wide value"},
		{[]string{"--num-profile-runs", "3", "--concurrency", "1,4", "--convergence-metric", "time_to_first_token"}, "--convergence-metric stops one configuration's runs early, not a sweep's"},
		{[]string{"--num-profile-runs", "3", "--shard", "0/2"}, "--shard splits one run across machines"},
		{[]string{"--num-profile-runs", "3", "--compare", "base.json"}, "--compare compares one run with a baseline"},
	} {
		var stdout, stderr bytes.Buffer
		code := runBench(nil, &stdout, &stderr, parseBench(t, append([]string{"--model", "m"}, tc.args...)...), nil, nil)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestMultiRunChoices: --convergence-mode and --convergence-stat take
// AIPerf's spellings, in any case, and refuse others at parse time.
func TestMultiRunChoices(t *testing.T) {
	f := parseBench(t, "--model", "m", "--convergence-mode", "CI_WIDTH", "--convergence-stat", "P99")
	if f.multi.convergenceMode != "ci-width" || f.multi.convergenceStat != "p99" {
		t.Errorf("mode %q, stat %q; want ci-width and p99", f.multi.convergenceMode, f.multi.convergenceStat)
	}
	app, _ := benchApp()
	if _, err := app.Parse([]string{"bench", "--model", "m", "--convergence-mode", "ks"}); err == nil || !strings.Contains(err.Error(), "want one of ci-width, cv, distribution") {
		t.Errorf("--convergence-mode ks: %v, want the modes listed", err)
	}
}

// TestTrialSeed: --vary-seed-per-trial derives AIPerf 0.13's seeds
// (aiperf.common.random_generator.derive_variation_seed(1, "LABEL:trial:N")
// gives these, outside a sweep and at a sweep's point), and the other
// settings give each run its point's seed (--random-seed's outside a
// sweep), or a fresh one without a seed and with --no-set-consistent-seed.
func TestTrialSeed(t *testing.T) {
	for _, tc := range []struct {
		variation string
		want      []uint64
	}{
		{"base", []uint64{7751795894126104398, 2188387355320234947, 5001448474966377943}},
		{"phases.profiling.concurrency=4", []uint64{8630153041486938434, 162326890591138190}},
		{"phases.profiling.concurrency=2, phases.profiling.rate=5.0", []uint64{5442601158799570167}},
	} {
		m := multiRunFlags{consistentSeed: true, varySeed: true}
		for i, w := range tc.want {
			if got := m.seed(1, true, tc.variation, 3, i); got != w {
				t.Errorf("%s, trial %d: seed %d, want AIPerf's %d", tc.variation, i, got, w)
			}
		}
	}
	m := multiRunFlags{consistentSeed: true}
	if got := m.seed(7, false, "base", 8, 2); got != 8 {
		t.Errorf("consistent seed %d, want the point's 8", got)
	}
	m.consistentSeed = false
	if got := m.seed(7, true, "base", 8, 2); got != 8 {
		t.Errorf("a given --random-seed gave %d, want the point's 8", got)
	}
	if a, b := m.seed(7, false, "base", 8, 1), m.seed(7, false, "base", 8, 2); a == b || a == 8 {
		t.Errorf("--no-set-consistent-seed without a seed gave %d and %d, want a fresh seed per run", a, b)
	}
}

// TestTrialArgs: the command that repeats one run of a multi-run has no
// multi-run flag, the run's seed, and no warmup when the run had none.
func TestTrialArgs(t *testing.T) {
	args := []string{"bench", "--model", "m", "--num-profile-runs", "3", "--random-seed=5", "--set-consistent-seed",
		"--no-profile-run-disable-warmup-after-first", "--convergence-metric", "time_to_first_token", "--warmup-request-count", "4",
		"--profile-run-cooldown-seconds=2", "--request-count", "10"}
	got := strings.Join(trialArgs(args, 9, true), " ")
	if want := "bench --model m --warmup-request-count 4 --request-count 10 --random-seed 9"; got != want {
		t.Errorf("with warmup: %q, want %q", got, want)
	}
	got = strings.Join(trialArgs(args, 9, false), " ")
	if want := "bench --model m --request-count 10 --random-seed 9"; got != want {
		t.Errorf("without warmup: %q, want %q", got, want)
	}
	// The warmup's load and grace go with it: alone, --warmup-grace-period
	// without --warmup-duration would be refused.
	args = []string{"bench", "--model", "m", "--warmup-duration", "2", "--warmup-grace-period=1", "--warmup-request-rate", "5",
		"--warmup-concurrency", "2", "--warmup-arrival-pattern", "constant", "--num-warmup-sessions", "3",
		"--warmup-request-rate-ramp-duration", "1", "--warmup-concurrency-ramp-duration", "1", "--request-count", "10"}
	if got, want := strings.Join(trialArgs(args, 9, false), " "), "bench --model m --request-count 10 --random-seed 9"; got != want {
		t.Errorf("without warmup options: %q, want %q", got, want)
	}
}

// TestPlanTrials: the runs go in profile_runs/run_NNNN under the
// artifact directory, each labelled with its trial, and the warmup goes
// before the first only, unless asked for before every run; the flags
// describe the whole multi-run again afterwards.
func TestPlanTrials(t *testing.T) {
	for _, every := range []bool{false, true} {
		args := []string{"--model", "m", "--num-profile-runs", "3", "--warmup-request-count", "4", "--request-count", "5"}
		if every {
			args = append(args, "--no-profile-run-disable-warmup-after-first")
		}
		f := parseBench(t, args...)
		given := slices.Clone(f.args)
		var stderr bytes.Buffer
		runs, err := f.planTrials(&stderr, "out", f.sweepPoints())
		if err != nil {
			t.Fatalf("%v: %v", err, stderr.String())
		}
		if !slices.Equal(f.args, given) || f.multi.skipWarmup {
			t.Errorf("after planning, the flags describe %q (skip warmup %v), not the multi-run %q", f.args, f.multi.skipWarmup, given)
		}
		for i, r := range runs {
			label := []string{"run_0001", "run_0002", "run_0003"}[i]
			warm := i == 0 || every
			if r.dir != filepath.Join("out", "profile_runs", label) || r.config.Trial != i || r.config.RunLabel != label ||
				(r.config.WarmupRequests == 4) != warm || (r.plan.WarmupLimit.Requests == 4) != warm ||
				strings.Contains(r.config.Command, "--warmup-request-count") != warm {
				t.Errorf("every=%v, run %d: dir %s, trial %d %q, warmup %d (plan %d), command %q", every, i, r.dir, r.config.Trial, r.config.RunLabel,
					r.config.WarmupRequests, r.plan.WarmupLimit.Requests, r.config.Command)
			}
		}
	}
}

// TestPlanSweepTrials: a multi-run sweep runs its points' runs in
// --parameter-sweep-mode's order and AIPerf 0.13's layout of it: repeated
// (default) a trial of every point after another, in
// profile_runs/trial_NNNN/POINT; independent every trial of a point after
// another, in POINT/profile_runs/trial_NNNN. Each run is at its point's
// load with the point's seed (the seed + the point's index, as a sweep of
// one trial), the warmup before a point's first run only; the flags
// describe the whole multi-run again afterwards.
func TestPlanSweepTrials(t *testing.T) {
	type run struct {
		dir                string
		concurrency, index int
		seed               uint64
		trial              int
	}
	c2, c4 := func(dir string, trial int) run { return run{dir, 2, 0, 10, trial} }, func(dir string, trial int) run { return run{dir, 4, 1, 11, trial} }
	for _, tc := range []struct {
		mode []string
		want []run
	}{
		{nil, []run{c2("out/profile_runs/trial_0001/concurrency_2", 0), c4("out/profile_runs/trial_0001/concurrency_4", 0),
			c2("out/profile_runs/trial_0002/concurrency_2", 1), c4("out/profile_runs/trial_0002/concurrency_4", 1)}},
		{[]string{"--parameter-sweep-mode", "INDEPENDENT"}, []run{c2("out/concurrency_2/profile_runs/trial_0001", 0), c2("out/concurrency_2/profile_runs/trial_0002", 1),
			c4("out/concurrency_4/profile_runs/trial_0001", 0), c4("out/concurrency_4/profile_runs/trial_0002", 1)}},
	} {
		f := parseBench(t, append([]string{"--model", "m", "--num-profile-runs", "2", "--concurrency", "2,4", "--random-seed", "10",
			"--warmup-request-count", "3", "--request-count", "5"}, tc.mode...)...)
		given := slices.Clone(f.args)
		var stderr bytes.Buffer
		runs, err := f.planTrials(&stderr, "out", f.sweepPoints())
		if err != nil {
			t.Fatalf("%v: %v", err, stderr.String())
		}
		if !slices.Equal(f.args, given) || f.concurrency != 2 || f.seed != 10 {
			t.Errorf("%v: after planning, the flags describe %q at concurrency %d, seed %d; want the multi-run %q", tc.mode, f.args, f.concurrency, f.seed, given)
		}
		if len(runs) != len(tc.want) {
			t.Fatalf("%v: %d runs, want %d", tc.mode, len(runs), len(tc.want))
		}
		for i, w := range tc.want {
			r := runs[i]
			warm := w.trial == 0
			cmdline := r.config.Command
			if r.dir != filepath.FromSlash(w.dir) || r.config.Concurrency != w.concurrency || r.index != w.index || r.seed != w.seed || r.trial != w.trial ||
				r.config.Trial != w.trial || r.config.RunLabel != []string{"run_0001", "run_0002"}[w.trial] ||
				(r.plan.WarmupLimit.Requests == 3) != warm || strings.Contains(cmdline, "--warmup-request-count") != warm ||
				strings.Contains(cmdline, "--num-profile-runs") || strings.Contains(cmdline, "--parameter-sweep-mode") ||
				!strings.Contains(cmdline, fmt.Sprintf("--concurrency %d ", w.concurrency)) || !strings.HasSuffix(cmdline, fmt.Sprintf("--random-seed %d", w.seed)) {
				t.Errorf("%v, run %d: dir %s, concurrency %d (point %d), seed %d, trial %d %q, warmup %d, command %q; want %+v", tc.mode, i, r.dir, r.config.Concurrency,
					r.index, r.seed, r.config.Trial, r.config.RunLabel, r.plan.WarmupLimit.Requests, cmdline, w)
			}
		}
	}
}

// TestMultiRunNotes: a multi-run flag on a single run, or a convergence
// setting without a metric, is accepted, as AIPerf does, with a note that
// it changes nothing.
func TestMultiRunNotes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--profile-run-cooldown-seconds", "5", "--vary-seed-per-trial"}, []string{
			"--profile-run-cooldown-seconds applies only with --num-profile-runs above 1",
			"--vary-seed-per-trial applies only with --num-profile-runs above 1"}},
		{[]string{"--num-profile-runs", "2", "--convergence-mode", "cv"}, []string{"--convergence-mode applies only with --convergence-metric"}},
		{[]string{"--num-profile-runs", "2", "--parameter-sweep-mode", "independent"}, []string{"--parameter-sweep-mode applies only to a sweep"}},
		{[]string{"--concurrency", "1,2", "--parameter-sweep-mode", "independent"}, []string{"--parameter-sweep-mode applies only to a sweep"}},
		{[]string{"--num-profile-runs", "2", "--concurrency", "1,2", "--parameter-sweep-mode", "independent"}, nil},
		{[]string{"--num-profile-runs", "2", "--vary-seed-per-trial", "--convergence-metric", "request_latency", "--convergence-mode", "cv"}, nil},
	} {
		f := parseBench(t, append([]string{"--model", "m"}, tc.args...)...)
		got := f.multi.notes(f)
		if len(got) != len(tc.want) {
			t.Errorf("%v: notes %q, want %d", tc.args, got, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%v: note %q, want %q", tc.args, got[i], w)
			}
		}
	}
}
