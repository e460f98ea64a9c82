package main

import (
	"testing"

	"github.com/inferprobe/inferprobe/scenarios"
)

// TestUserCentricFlags: --user-centric-rate and --num-users become pattern
// user_centric, which the scenario checks.
func TestUserCentricFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"users", []string{"--model", "m", "--user-centric-rate", "4", "--num-users", "8", "--session-turns-mean", "5"},
			[]string{"pattern: user_centric", "rate: 4", "users: 8"}},
		{"capped", []string{"--model", "m", "--user-centric-rate", "4", "--num-users", "8", "--session-turns-mean", "5", "--concurrency", "3"},
			[]string{"pattern: user_centric", "max_concurrency: 3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, yml := scenarioYAML(t, tc.args, tc.want)
			checkWritten(t, sc, yml)
		})
	}
}

// TestUserCentricFlagErrors: AIPerf's refusals, in its words where it has
// them, and what bench does not take with a user-centric rate.
func TestUserCentricFlagErrors(t *testing.T) {
	uc := []string{"--model", "m", "--user-centric-rate", "4", "--num-users", "3"}
	with := func(more ...string) []string { return append(append([]string(nil), uc...), more...) }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "m", "--num-users", "3"}, "--num-users requires --user-centric-rate. Pass --user-centric-rate to enable user-centric mode"},
		{with(), "User-centric rate mode requires --session-turns-mean >= 2. For single-turn workloads, use --request-rate instead."},
		{[]string{"--model", "m", "--user-centric-rate", "4", "--session-turns-mean", "3"}, "--user-centric-rate requires --num-users"},
		{with("--session-turns-mean", "3", "--request-count", "2"), "--request-count (2) must be >= --num-users (3). Each user needs at least one request."},
		{with("--session-turns-mean", "3", "--request-rate", "2"), "--request-rate and --user-centric-rate both set the rate"},
		{with("--session-turns-mean", "3", "--request-rate-series", "s.json"), "--request-rate-series is not supported with --user-centric-rate."},
		{with("--session-turns-mean", "3", "--arrival-pattern", "constant"), "has no arrival pattern"},
		{with("--session-turns-mean", "3", "--num-sessions", "4"), "--num-sessions is not supported with --user-centric-rate here"},
		{with("--session-turns-mean", "3", "--request-rate-ramp-duration", "4"), "--request-rate-ramp-duration is not supported with --user-centric-rate here"},
	} {
		wantScenarioError(t, tc.args, tc.want)
	}
}

// TestUserCentricWarmup: the warmup of a user-centric run is a closed loop
// at --warmup-concurrency, else --concurrency, else 1, as AIPerf's
// build_warmup makes it without a rate.
func TestUserCentricWarmup(t *testing.T) {
	for _, tc := range []struct {
		more []string
		want int
	}{
		{nil, 1},
		{[]string{"--concurrency", "4"}, 4},
		{[]string{"--warmup-concurrency", "2"}, 2},
	} {
		args := append([]string{"--model", "m", "--user-centric-rate", "4", "--num-users", "3", "--session-turns-mean", "3", "--warmup-request-count", "5"}, tc.more...)
		f := parseBench(t, args...)
		if _, err := f.scenario(); err != nil {
			t.Fatal(err)
		}
		a, err := f.load.warmup.arrival(f)
		if err != nil || a == nil || a.Pattern != scenarios.ArrivalConcurrency || a.Concurrency != tc.want {
			t.Errorf("%v: warmup %+v, %v; want a closed loop at %d", tc.more, a, err, tc.want)
		}
	}
}

// TestUserCentricArtifactDir: the default directory names the load as
// AIPerf's _describe_user_centric does, the rate as Python prints a float.
func TestUserCentricArtifactDir(t *testing.T) {
	for rate, want := range map[string]string{"4": "artifacts/m-chat-user_centric-users8-qps4.0", "2.5": "artifacts/m-chat-user_centric-users8-qps2.5"} {
		f := parseBench(t, "--model", "m", "--user-centric-rate", rate, "--num-users", "8", "--session-turns-mean", "3")
		if got := defaultArtifactDir(f); got != want {
			t.Errorf("--user-centric-rate %s: %s, want %s", rate, got, want)
		}
	}
}
