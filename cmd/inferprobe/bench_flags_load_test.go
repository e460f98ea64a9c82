package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/scenarios"
)

// TestLoadFlags: AIPerf's load, cancellation, trace and output-length flags
// become the scenario fields that mean the same, and the scenario checks.
func TestLoadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of the generated YAML
	}{
		{"max_completion_tokens by default", []string{"--model", "m"}, []string{"max_tokens_field: max_completion_tokens"}},
		{"legacy max_tokens", []string{"--model", "m", "--use-legacy-max-tokens"}, []string{"max_tokens_field: max_tokens"}},
		{"rate mode", []string{"--model", "m", "--request-rate", "4", "--request-rate-mode", "constant"}, []string{"pattern: constant", "rate: 4"}},
		{"concurrency burst", []string{"--model", "m", "--concurrency", "3", "--request-rate-mode", "concurrency-burst"},
			[]string{"pattern: concurrency", "concurrency: 3"}},
		// AIPerf starts at rate × 0.1 s / duration: 10 × 0.1 / 5 = 0.2.
		{"rate ramp", []string{"--model", "m", "--request-rate", "10", "--request-rate-ramp-duration", "5"},
			[]string{"rate: 0.2", "ramp_to: 10", "ramp_over: 5s"}},
		{"concurrency ramp", []string{"--model", "m", "--concurrency", "8", "--concurrency-ramp-duration", "4"},
			[]string{"concurrency: 1", "ramp_to: 8", "ramp_over: 4s"}},
		{"cap ramp", []string{"--model", "m", "--request-rate", "20", "--concurrency", "8", "--concurrency-ramp-duration", "4"},
			[]string{"max_concurrency: 8", "max_concurrency_ramp_over: 4s", "rate: 20"}},
		{"cancellation", []string{"--model", "m", "--request-cancellation-rate", "25", "--request-cancellation-delay", "0.5"},
			[]string{"rate: 0.25", "after: 500ms"}},
		{"cancellation without a delay hangs up at once", []string{"--model", "m", "--request-cancellation-rate", "10"},
			[]string{"rate: 0.1", "after: 0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, yml := scenarioYAML(t, tc.args, tc.want)
			checkWritten(t, sc, yml)
		})
	}
}

// TestOutputLengthNoLimitByDefault: without --osl bench asks for no output
// limit, as AIPerf sends no max_completion_tokens; with it, that length.
func TestOutputLengthNoLimitByDefault(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want scenarios.Lengths
	}{
		{[]string{"--model", "m"}, scenarios.Lengths{}},
		{[]string{"--model", "m", "--osl", "100", "--osl-stddev", "5"}, scenarios.Lengths{Mean: 100, Stddev: 5}},
	} {
		sc, err := parseBench(t, tc.args...).scenario()
		if err != nil {
			t.Fatal(err)
		}
		if got := sc.cfg.Probes["bench"].Dataset.Synthetic.OutputTokens; got != tc.want {
			t.Errorf("%v: output tokens %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

// TestInputFileFormatDetected: an --input-file of Mooncake's shape given
// without --custom-dataset-type is read as a trace, as AIPerf detects it,
// but sent at the load, not replayed: AIPerf replays a trace at its
// timestamps only when --custom-dataset-type names its type, which still
// decides when given.
func TestInputFileFormatDetected(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args           []string
		format, timing string
	}{
		{nil, "mooncake", scenarios.TimingArrival},
		{[]string{"--custom-dataset-type", "mooncake_trace"}, "mooncake", scenarios.TimingReplay},
		{[]string{"--custom-dataset-type", "single_turn"}, "single_turn", scenarios.TimingArrival},
	} {
		sc, err := parseBench(t, append([]string{"--model", "m", "--input-file", trace}, tc.args...)...).scenario()
		if err != nil {
			t.Fatal(err)
		}
		if f := sc.cfg.Probes["bench"].Dataset.File; f.Format != tc.format || f.Timing != tc.timing {
			t.Errorf("%v: format %s, timing %s; want %s, %s", tc.args, f.Format, f.Timing, tc.format, tc.timing)
		}
	}
}

// TestInputFileOutputLength: the entries of an --input-file that give no
// output length get --osl, else no limit, as AIPerf.
func TestInputFileOutputLength(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want scenarios.Lengths
	}{
		{nil, scenarios.Lengths{}},
		{[]string{"--osl", "10", "--osl-stddev", "2"}, scenarios.Lengths{Mean: 10, Stddev: 2}},
	} {
		sc, err := parseBench(t, append([]string{"--model", "m", "--input-file", "p.jsonl"}, tc.args...)...).scenario()
		if err != nil {
			t.Fatal(err)
		}
		if got := sc.cfg.Probes["bench"].Dataset.File.OutputTokens; got != tc.want {
			t.Errorf("%v: output tokens %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

// TestLoadFlagsTrace: the fixed-schedule and trace flags set the file's fields.
func TestLoadFlagsTrace(t *testing.T) {
	sc, err := parseBench(t, "--model", "m", "--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace",
		"--replay-speedup", "4", "--fixed-schedule-start-offset", "1500", "--fixed-schedule-end-offset", "9000",
		"--isl-block-size", "16").scenario()
	if err != nil {
		t.Fatal(err)
	}
	f := sc.cfg.Probes["bench"].Dataset.File
	if f.Speedup != 4 || f.StartOffset != scenarios.Duration(1500*time.Millisecond) || f.EndOffset != scenarios.Duration(9*time.Second) || f.BlockSize != 16 {
		t.Errorf("file %+v", f)
	}
	if got := sc.flagFor("probes.bench.dataset.file.start_offset"); got != "--fixed-schedule-start-offset" {
		t.Errorf("start_offset is from %s", got)
	}
}

func TestLoadFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "m", "--request-cancellation-delay", "1"}, "--request-cancellation-delay needs --request-cancellation-rate"},
		{[]string{"--model", "m", "--request-cancellation-rate", "150"}, "must be a percentage from 0 to 100"},
		{[]string{"--model", "m", "--request-rate-ramp-duration", "5"}, "--request-rate-ramp-duration ramps --request-rate"},
		{[]string{"--model", "m", "--request-rate", "5", "--concurrency-ramp-duration", "5"}, "--concurrency-ramp-duration ramps --concurrency from 1; give --concurrency"},
		{[]string{"--model", "m", "--concurrency", "4", "--concurrency-ramp-duration", "0"}, "--concurrency-ramp-duration 0: must be a number of seconds > 0"},
		{[]string{"--model", "m", "--replay-speedup", "2"}, "--replay-speedup applies to a trace given with --input-file"},
		{[]string{"--model", "m", "--request-rate", "1", "--request-rate-mode", "concurrency-burst"}, "drop --request-rate"},
		{[]string{"--model", "m", "--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace", "--fixed-schedule-auto-offset", "--fixed-schedule-start-offset", "5"},
			"cannot be used with --fixed-schedule-start-offset"},
	} {
		wantScenarioError(t, tc.args, tc.want)
	}
}

// TestLoadLimits: --request-count and --benchmark-duration together end
// the run at whichever comes first; the grace period is AIPerf's 30 s after
// a duration, 'inf' or none after a count; the warmup may be bounded both
// ways.
func TestLoadLimits(t *testing.T) {
	for _, tc := range []struct {
		args          []string
		limit, warmup prober.Limit
		grace         time.Duration
		err           string
	}{
		{args: []string{"--request-count", "50", "--benchmark-duration", "20"}, limit: prober.Limit{Requests: 50, Duration: 20 * time.Second}, grace: 30 * time.Second},
		{args: []string{"--request-count", "50"}, limit: prober.Limit{Requests: 50}, grace: finite.NoGrace},
		{args: []string{"--benchmark-duration", "20", "--benchmark-grace-period", "2.5"}, limit: prober.Limit{Duration: 20 * time.Second}, grace: 2500 * time.Millisecond},
		{args: []string{"--benchmark-duration", "20", "--benchmark-grace-period", "inf"}, limit: prober.Limit{Duration: 20 * time.Second}, grace: finite.NoGrace},
		{args: []string{"--warmup-request-count", "5", "--warmup-duration", "3"}, warmup: prober.Limit{Requests: 5, Duration: 3 * time.Second}, grace: finite.NoGrace},
		{args: []string{"--benchmark-grace-period", "5"}, err: "--benchmark-grace-period applies only after a --benchmark-duration"},
		{args: []string{"--benchmark-duration", "20", "--benchmark-grace-period", "soon"}, err: `--benchmark-grace-period "soon"`},
		{args: []string{"--warmup-duration", "0"}, err: "--warmup-duration 0: must be"},
	} {
		f := parseBench(t, append([]string{"--model", "m"}, tc.args...)...)
		limit, warmup, grace, err := f.load.limits(f)
		grace = finite.GraceFor(limit, grace) // the plan's, as finite.NewPlan decides it
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case limit != tc.limit || warmup != tc.warmup || grace != tc.grace:
			t.Errorf("%v: limit %+v warmup %+v grace %v, want %+v %+v %v", tc.args, limit, warmup, grace, tc.limit, tc.warmup, tc.grace)
		}
	}
}

// TestSaveScenarioLimits: the saved burst keeps both limits, the warmup's
// two bounds and the grace period.
func TestSaveScenarioLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "burst.yml")
	f := parseBench(t, "--model", "m", "--request-count", "50", "--benchmark-duration", "20", "--benchmark-grace-period", "4",
		"--warmup-request-count", "5", "--warmup-duration", "3", "--save-scenario", path)
	sc, err := f.scenario()
	if err != nil {
		t.Fatal(err)
	}
	limit, warmup, grace, err := f.load.limits(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := saveScenario(f, sc, &finite.Plan{Limit: limit, WarmupLimit: warmup, Grace: grace}); err != nil {
		t.Fatal(err)
	}
	cfg, err := scenarios.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Bursts["bench"]
	if b.Requests != 50 || b.Duration != scenarios.Duration(20*time.Second) || b.GracePeriod != scenarios.Duration(4*time.Second) ||
		b.Warmup != (scenarios.Warmup{Requests: 5, Duration: scenarios.Duration(3 * time.Second)}) ||
		b.Target != "bench" || cfg.Targets["bench"].MaxTokensField != scenarios.MaxCompletionTokens {
		t.Errorf("burst %+v", b)
	}
}
