package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"
)

// TestFlagValuesRefused: a value out of range is refused with the flag, the
// value and the range, never rounded, wrapped or mistaken for a flag.
func TestFlagValuesRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--request-count", "1.5"}, "--request-count 1.5: must be a whole number"},
		{[]string{"--request-count", "99999999999999999999"}, "--request-count 99999999999999999999 is out of range: must be 1 to 1,000,000,000 requests"},
		{[]string{"--request-count", "2000000000"}, "--request-count 2000000000 is out of range: must be 1 to 1,000,000,000 requests"},
		{[]string{"--request-count=-5"}, "--request-count -5: must be ≥ 0"},
		{[]string{"--request-rate", "-3"}, "--request-rate -3: must be ≥ 0"},
		{[]string{"--num-dataset-entries", "-1"}, "--num-dataset-entries -1: must be ≥ 0"},
		{[]string{"--workers", "100000"}, "--workers 100000 is out of range: must be 1 to 1,024 workers"},
	} {
		app, _ := benchApp()
		args := append([]string{"bench", "--model", "m"}, tc.args...)
		_, err := app.Parse(args)
		if err == nil {
			t.Errorf("%v: parsed; want %q", tc.args, tc.want)
			continue
		}
		if got := rewordParseError(err, args).Error(); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestBenchSizesRefused: a length past its bound is a flag error naming
// the flag and the range; it used to run out of memory, or be sent as 1.
func TestBenchSizesRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--synthetic-input-tokens-mean", "1e12"}, []string{"--synthetic-input-tokens-mean", "1 to 1,048,576 tokens"}},
		{[]string{"--output-tokens-mean", "1e20"}, []string{"--output-tokens-mean", "1 to 1,048,576 tokens"}},
		{[]string{"--benchmark-duration", "1e9"}, []string{"--benchmark-duration 277777h46m40s is out of range: must be 0s to 720h0m0s"}},
		{[]string{"--request-timeout-seconds", "1e12"}, []string{"--request-timeout-seconds 1000000000000s is out of range: must be 0s to 720h0m0s"}},
		{[]string{"--benchmark-duration", "10", "--benchmark-grace-period", "1e9"}, []string{"--benchmark-grace-period \"1e9\": want a number of seconds, 0s to 720h0m0s, or inf"}},
	} {
		var stdout, stderr bytes.Buffer
		code := runBench(nil, &stdout, &stderr, parseBench(t, append([]string{"--model", "m"}, tc.args...)...), nil, nil)
		for _, want := range tc.want {
			if code != exitUsage || !strings.Contains(stderr.String(), want) {
				t.Errorf("%v: exit %d, %q; want exit %d and %q", tc.args, code, stderr.String(), exitUsage, want)
			}
		}
	}
}

// TestGracePeriodNotNegative: a negative grace period is refused at parse.
func TestGracePeriodNotNegative(t *testing.T) {
	app := kingpin.New("inferprobe", "")
	app.Terminate(nil)
	cmd := app.Command("serve", "")
	addDaemonFlags(cmd, false)
	addWorkerFlags(cmd, &promslog.Config{Level: promslog.NewLevel()})
	_, err := app.Parse([]string{"serve", "--shutdown.grace-period=-5s"})
	if err == nil || !strings.Contains(err.Error(), "--shutdown.grace-period=-5s: must be ≥ 0") {
		t.Errorf("got %v; want the negative grace period refused", err)
	}
}

// TestBenchInternalErrorExits1: a bug (here the missing worker flags) is
// not a bad flag, so bench exits 1, never 2.
func TestBenchInternalErrorExits1(t *testing.T) {
	var stdout, stderr bytes.Buffer
	f := parseBench(t, "--model", "m", "--request-count", "1", "--artifact-dir", t.TempDir(), "--no-server-metrics")
	if code := runBench(nil, &stdout, &stderr, f, nil, nil); code != exitCannotRun || !strings.Contains(stderr.String(), "internal error") {
		t.Errorf("exit %d, %q; want exit %d and an internal error", code, stderr.String(), exitCannotRun)
	}
}
