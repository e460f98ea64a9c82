package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"

	"github.com/inferprobe/inferprobe/capacity"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/simulator"
)

// The test binary doubles as the worker executable: bench's pool starts it
// with the hidden worker command, which TestMain runs instead of the tests.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// TestBenchSearchFindsSimulatorCapacity: against the simulator, whose
// capacity under a TTFT SLO its capacity model gives, bench's default
// max-concurrency-under-sla search finds it within one step, with three
// seeds, and writes AIPerf's search layout.
func TestBenchSearchFindsSimulatorCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three searches against the simulator")
	}
	// Slow enough that a busy machine's stalls (100ms seen on two shared
	// cores) do not cross the SLO: each side is 125ms from it.
	const isl, osl = 16, 7
	// Four slots: one client more makes a quarter of the requests wait a
	// whole wave, well above the 5% a p95 lets through.
	cfg := simulator.Config{MaxConcurrency: 4, Profile: simulator.Profile{TTFT: 100 * time.Millisecond, ITL: 25 * time.Millisecond}}
	// Halfway between the unqueued TTFT (100ms) and one wave more (350ms).
	const slo = 225 * time.Millisecond
	want := cfg.Capacity(slo, 0.95, isl, osl)
	if want != cfg.MaxConcurrency {
		t.Fatalf("the capacity model gives %d, want the slots, %d", want, cfg.MaxConcurrency)
	}
	for seed := 1; seed <= 3; seed++ {
		cfg.Seed = uint64(seed)
		sim, err := simulator.New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(sim.Handler())
		dir := t.TempDir()
		var stdout, stderr bytes.Buffer
		code := runBenchArgs(t, &stdout, &stderr, "--model", simulator.DefaultModel, "--url", ts.URL, "--streaming",
			"--isl", strconv.Itoa(isl), "--isl-stddev", "0", "--osl", strconv.Itoa(osl), "--osl-stddev", "0", "--extra-inputs", "ignore_eos:true",
			"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", strconv.Itoa(int(slo/time.Millisecond)), "--concurrency-min", "2", "--concurrency-max", "32",
			"--request-count", "24", "--sla-warmup-seconds", "0", "--random-seed", strconv.Itoa(seed), "--artifact-dir", dir, "--workers", "1", "--no-collector.gpu", "--progress", "off")
		ts.Close()
		if code != 0 {
			t.Fatalf("seed %d: exit %d\n%s", seed, code, stderr.String())
		}
		var history struct {
			Iterations []struct {
				Values   map[string]int `json:"variation_values"`
				Feasible bool
			}
			Boundary struct {
				FeasibleMax   struct{ Value int } `json:"feasible_max"`
				InfeasibleMin struct{ Value int } `json:"infeasible_min"`
			} `json:"boundary_summary"`
			Reason string `json:"convergence_reason"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "search_history.json"))
		if err == nil {
			err = json.Unmarshal(b, &history)
		}
		if err != nil {
			t.Fatal(err)
		}
		got := history.Boundary.FeasibleMax.Value
		var steps []int
		for _, it := range history.Iterations {
			steps = append(steps, it.Values["phases.profiling.concurrency"])
		}
		t.Logf("seed %d: capacity %d, first infeasible %d, steps %v (%s)", seed, got, history.Boundary.InfeasibleMin.Value, steps, history.Reason)
		if math.Abs(float64(got-want)) > 1 {
			t.Errorf("seed %d: found %d, want %d within one\n%s", seed, got, want, stdout.String())
		}
		if slices.Max(steps) > 32 {
			t.Errorf("seed %d: measured past --concurrency-max 32: %v", seed, steps)
		}
		for _, f := range []string{"search_iter_0000/profile_runs/run_0001/profile_export_aiperf.json", "sweep_aggregate/profile_export_aiperf_sweep.json", "report.html"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("seed %d: %v", seed, err)
			}
		}
		if !strings.Contains(stdout.String(), "Answer: capacity ") {
			t.Errorf("seed %d: the console has no answer:\n%s", seed, stdout.String())
		}
	}
}

// runBenchArgs runs bench in this process with its worker and GPU flags,
// as `inferprobe bench ARGS` would.
func runBenchArgs(t *testing.T, stdout, stderr io.Writer, args ...string) int {
	t.Helper()
	app := kingpin.New("inferprobe", "")
	app.Terminate(nil)
	logConfig := &promslog.Config{Level: promslog.NewLevel()}
	cmd := app.Command("bench", "")
	f := addBenchFlags(cmd, logConfig)
	workers := addWorkerFlags(cmd, logConfig)
	gpus := addGPUFlags(cmd)
	if _, err := app.Parse(append([]string{"bench"}, args...)); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	f.args = append([]string{"bench"}, args...)
	return runBench(nil, stdout, stderr, f, workers, gpus)
}

// TestAIPerfSearchCommandLines: the search command lines of AIPerf 0.13's
// own documentation (its recipes' docstrings and --help) parse and plan,
// with only the program name changed; the Bayesian recipe is refused in
// one line naming the deterministic one.
func TestAIPerfSearchCommandLines(t *testing.T) {
	for _, tc := range []struct {
		line, recipe, style string
	}{
		{"aiperf profile --search-recipe max-concurrency-under-sla --ttft-sla-ms 200", "max-concurrency-under-sla", "smooth_isotonic"},
		{"aiperf profile --search-recipe concurrency-ramp --degradation-threshold 0.20", "concurrency-ramp", "grid"},
		{"aiperf profile --search-recipe concurrency-ramp --degradation-metric-tag time_to_first_token --degradation-stat p95", "concurrency-ramp", "grid"},
		{"aiperf profile --search-recipe max-goodput-under-slo --ttft-sla-ms 500 --tpot-sla-ms 15 --e2e-sla-ms 2000 --slo-attainment-fraction 0.95", "max-goodput-under-slo", "smooth_isotonic"},
		{"aiperf profile --search-recipe max-concurrency-under-sla --ttft-sla-ms 200 --search-sla time_to_first_token:p95:lt:200 --search-sla request_error_rate:avg:lt:1", "max-concurrency-under-sla", "smooth_isotonic"},
		{"aiperf profile --search-recipe max-concurrency-under-sla --search-style monotonic --e2e-sla-ms 2000 --concurrency-min 2 --concurrency-max 256 --search-max-iterations 12 --search-random-seed 7", "max-concurrency-under-sla", "monotonic"},
		{"aiperf profile --search-recipe max-concurrency-under-sla --search-style grid --error-rate-sla 0.05", "max-concurrency-under-sla", "grid"},
	} {
		args := strings.Fields(strings.TrimPrefix(tc.line, "aiperf profile "))
		f := parseBench(t, append([]string{"--model", "m"}, args...)...)
		p, err := f.searchPlan(io.Discard)
		if err != nil || p == nil || p.Recipe != tc.recipe || p.Style != tc.style {
			t.Errorf("%s: plan %+v, %v; want %s, %s", tc.line, p, err, tc.recipe, tc.style)
		}
	}
	var stdout, stderr bytes.Buffer
	code := runBench(nil, &stdout, &stderr, parseBench(t, "--model", "m", "--search-recipe", "max-throughput-ttft-sla", "--ttft-sla-ms", "200"), nil, nil)
	if got := stderr.String(); code != exitUsage || strings.Count(got, "\n") != 1 || !strings.Contains(got, "max-concurrency-under-sla --ttft-sla-ms") {
		t.Errorf("the Bayesian recipe: exit %d, %q", code, got)
	}
	stderr.Reset()
	code = runBench(nil, &stdout, &stderr, parseBench(t, "--model", "m", "--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200", "--search-style", "bo"), nil, nil)
	if got := stderr.String(); code != exitUsage || strings.Count(got, "\n") != 1 || !strings.Contains(got, "use --search-style smooth_isotonic") {
		t.Errorf("--search-style bo: exit %d, %q", code, got)
	}
}

// TestSearchFlagsRefused: a search's options without --search-recipe, and
// a search with what it cannot be (a sweep, a rate, --no-streaming with a
// TTFT SLA), fail before anything is sent, naming the flag.
func TestSearchFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ttft-sla-ms", "200"}, "--ttft-sla-ms is an option of a capacity search: add --search-recipe"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200", "--concurrency", "4"}, "--concurrency with --search-recipe"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200", "--request-rate", "4"}, "--request-rate with --search-recipe"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200", "--shard", "0/2"}, "--shard with --search-recipe"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "0"}, "--ttft-sla-ms 0: must be above 0"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200", "--num-profile-runs", "3"}, "--num-profile-runs with --search-recipe"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200", "--no-streaming"}, "drop --no-streaming"},
		{[]string{"--search-recipe", "max-goodput-under-slo", "--ttft-sla-ms", "1", "--tpot-sla-ms", "1", "--e2e-sla-ms", "1", "--goodput", "time_to_first_token:5"}, "--goodput with --search-recipe"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--search-sla", "ttft:p95:lt"}, "--search-sla \"ttft:p95:lt\": want metric_tag:stat:op:threshold"},
	} {
		var stdout, stderr bytes.Buffer
		code := runBench(nil, &stdout, &stderr, parseBench(t, append([]string{"--model", "m"}, tc.args...)...), nil, nil)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestSearchStepWarmup: smooth_isotonic's per-step warm-up (AIPerf's
// sla_warmup_seconds, default 30: 60 s the first time at a concurrency)
// replaces the --warmup-* options, on the step's plan and command line;
// --sla-warmup-seconds 0 turns it off and --sla-replicates reaches the
// plan; neither is monotonic's.
func TestSearchStepWarmup(t *testing.T) {
	search := []string{"--model", "m", "--streaming", "--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200"}
	f := parseBench(t, append(search, "--warmup-request-count", "5", "--warmup-concurrency", "2", "--sla-replicates", "4")...)
	p, err := f.searchPlan(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Run(context.Background(), time.Time{}, func(_ context.Context, s capacity.Step) (capacity.Metrics, error) {
		f.applyStep(sweepPoint{concurrency: s.Concurrency, dir: searchDir(p, s)}, s, 1, stepArgs(f.args))
		return nil, errInterrupted // one step is enough
	})
	if !errors.Is(err, errInterrupted) || p.Replicates != 4 || r == nil {
		t.Fatalf("%v, replicates %d", err, p.Replicates)
	}
	run, err := f.planRun(io.Discard, false)
	if err != nil {
		t.Fatal(err)
	}
	if run.plan.WarmupLimit != (prober.Limit{Duration: time.Minute}) || run.config.WarmupDuration != 60 || run.config.WarmupRequests != 0 {
		t.Errorf("warmup %+v, config %v s and %d requests; want 60 s, no count", run.plan.WarmupLimit, run.config.WarmupDuration, run.config.WarmupRequests)
	}
	if cmd := strings.Join(f.args, " "); !strings.HasSuffix(cmd, "--warmup-duration 60") || strings.Contains(cmd, "--warmup-request-count") || strings.Contains(cmd, "--warmup-concurrency") {
		t.Errorf("the step's command line: %s", cmd)
	}
	off := parseBench(t, append(search, "--sla-warmup-seconds", "0")...)
	if p, err := off.searchPlan(io.Discard); err != nil || p.WarmupSeconds != 0 {
		t.Errorf("--sla-warmup-seconds 0: %+v, %v", p, err)
	}
	mono := parseBench(t, append(search, "--search-style", "monotonic", "--sla-replicates", "3")...)
	if _, err := mono.searchPlan(io.Discard); err == nil || !strings.Contains(err.Error(), "--search-style monotonic has no replicate phase") {
		t.Errorf("--sla-replicates with monotonic: %v", err)
	}
}

// TestBenchSearchTimeLimit: --search-time-limit cuts the step running when
// it runs out, and the search ends without judging it.
func TestBenchSearchTimeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a search against the simulator")
	}
	// A step of 20 requests at concurrency 1, each over 300 ms: 6 s, far
	// past the limit.
	sim, err := simulator.New(simulator.Config{Profile: simulator.Profile{TTFT: 300 * time.Millisecond, ITL: time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim.Handler())
	defer ts.Close()
	var stdout, stderr bytes.Buffer
	dir := t.TempDir()
	code := runBenchArgs(t, &stdout, &stderr, "--model", simulator.DefaultModel, "--url", ts.URL, "--streaming", "--osl", "2",
		"--search-recipe", "max-concurrency-under-sla", "--search-style", "monotonic", "--ttft-sla-ms", "1000", "--request-count", "20",
		"--search-time-limit", "0.5", "--artifact-dir", dir, "--workers", "1", "--no-collector.gpu", "--progress", "off")
	if code != exitOK || !strings.Contains(stderr.String(), "--search-time-limit ran out") || !strings.Contains(stderr.String(), "the search ended before a step finished (time_limit)") {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "search_history.json")); err == nil {
		t.Error("a search with no step judged wrote a summary")
	}
}
