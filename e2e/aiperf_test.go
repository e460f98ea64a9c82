package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// aiperfVenv is where `make aiperf` installs AIPerf 0.13.0.
const aiperfVenv = ".cache/aiperf"

// requireAIPerf returns the AIPerf 0.13 virtual environment and checks that
// Chromium, which `aiperf plot` renders its PNGs with, is there. Without
// them the test is skipped, unless INFERPROBE_E2E=1 (make test) asks for
// every test.
func requireAIPerf(t *testing.T) string {
	t.Helper()
	venv := filepath.Join(repoRoot(t), aiperfVenv)
	for _, p := range []string{filepath.Join(venv, "bin", "aiperf"), filepath.Join(venv, "bin", "python")} {
		if _, err := os.Stat(p); err != nil {
			missingTool(t, p+" is missing", "run `make aiperf` to install AIPerf 0.13.0 from PyPI")
		}
	}
	if _, err := exec.LookPath("chromium"); err != nil {
		missingTool(t, "chromium is not on PATH (aiperf plot renders with it)", "run `make aiperf`, which installs it with apt")
	}
	return venv
}

// runAIPerf runs one of the venv's programs and returns its output; a
// failure fails the test with that output.
func runAIPerf(t *testing.T, timeout time.Duration, env []string, name string, args ...string) []byte {
	t.Helper()
	return runAIPerfIn(t, "", timeout, env, name, args...)
}

// runAIPerfIn is runAIPerf in the working directory dir ("": the test's).
func runAIPerfIn(t *testing.T, dir string, timeout time.Duration, env []string, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// TestAIPerfReadsArtifacts is the drop-in test that counts: real AIPerf 0.13
// reads an inferprobe bench run directory with its own code. Every line of
// profile_export.jsonl loads as AIPerf's per-request record model,
// profile_export_aiperf.json as its export model and through the loader
// `aiperf plot` uses, the CSV has AIPerf's columns, and `aiperf plot` on the
// directory renders the plots of a single run.
func TestAIPerfReadsArtifacts(t *testing.T) {
	venv := requireAIPerf(t)
	addr := freeAddr(t)
	// Failures, reasoning and a usage count that includes a template make
	// every kind of line and metric appear.
	sim := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate", "--web.listen-address="+addr,
		"--sim.model="+blogModel, "--sim.ttft=20ms", "--sim.itl=2ms", "--sim.error-rate=0.15", "--sim.reasoning-tokens=3")
	waitHealthy(t, sim, "http://"+addr+"/health", 10*time.Second)

	const requests = 24
	work := t.TempDir()
	code, out := benchIn(t, work, "--model", blogModel, "--endpoint-type", "chat", "--streaming", "--url", addr,
		"--concurrency", "4", "--request-count", "24", "--synthetic-input-tokens-mean", "64", "--output-tokens-mean", "16",
		"--extra-inputs", "ignore_eos:true", "--goodput", "time_to_first_token:150", "--random-seed", "42",
		"--progress", "off", "--artifact-dir", "run")
	if code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}
	dir := filepath.Join(work, "run")
	for _, name := range []string{"profile_export_aiperf.json", "profile_export_aiperf.csv", "profile_export.jsonl",
		"inputs.json", "profile_export_console.txt", "logs/inferprobe.log"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("artifact %s: %v (size %v)", name, err, st)
		}
	}

	checked := runAIPerf(t, 2*time.Minute, nil, filepath.Join(venv, "bin", "python"),
		filepath.Join(repoRoot(t), "e2e", "testdata", "aiperf", "check_artifacts.py"), dir)
	var loaded struct {
		Records        int      `json:"jsonl_records"`
		Errors         int      `json:"errors"`
		LoadedRequests int      `json:"loaded_requests"`
		Schema         string   `json:"schema_version"`
		Metrics        []string `json:"metrics_per_record"`
	}
	if err := json.Unmarshal(checked, &loaded); err != nil {
		t.Fatalf("check_artifacts.py printed %q: %v", checked, err)
	}
	if loaded.Records != requests || loaded.LoadedRequests != requests || loaded.Schema != "1.4" {
		t.Errorf("AIPerf loaded %+v; want every one of the %d requests and schema 1.4", loaded, requests)
	}
	if loaded.Errors == 0 || loaded.Errors == requests {
		t.Errorf("%d of the lines are failures; want some (the simulator fails 15%%), not all", loaded.Errors)
	}
	for _, m := range []string{"inter_chunk_latency", "time_to_first_output_token", "decode_duration", "usage_prompt_tokens",
		"usage_completion_tokens", "reasoning_token_count", "e2e_output_token_throughput"} {
		if !strings.Contains(strings.Join(loaded.Metrics, " "), m) {
			t.Errorf("no line carries %s; per-record metrics: %v", m, loaded.Metrics)
		}
	}

	// aiperf plot writes ~/.aiperf/plot_config.yaml on first use.
	runAIPerf(t, 5*time.Minute, []string{"HOME=" + t.TempDir()}, filepath.Join(venv, "bin", "aiperf"), "plot", dir)
	for _, png := range []string{"ttft_over_time.png", "ttft_timeline.png"} {
		b, err := os.ReadFile(filepath.Join(dir, "plots", png))
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("aiperf plot did not render %s (%v, %d bytes)", png, err, len(b))
		}
	}
}

// TestAIPerfReadsBurstArtifacts: the artifacts of a daemon's burst run, downloaded from the
// burst API, are what bench writes: real AIPerf 0.13 reads them with its own code, one
// per-request record for each request of the run's report.
func TestAIPerfReadsBurstArtifacts(t *testing.T) {
	venv := requireAIPerf(t)
	base := startBurstDemo(t, "--web.enable-burst-api")
	var started struct{ ID string }
	if code, _, body := apiCall(t, "POST", base+"/api/v1/bursts/demo-burst", `{"duration":"3s"}`, nil, &started); code != http.StatusAccepted {
		t.Fatalf("POST demo-burst: %d %s", code, body)
	}
	if run := waitRunEnds(t, base, started.ID, time.Minute); run.State != "succeeded" {
		t.Fatalf("run %s ended %s: %s", run.ID, run.State, run.Error)
	}
	var full struct {
		Report struct {
			Summary struct{ OK, Failed int } `json:"summary"`
		} `json:"report"`
	}
	apiCall(t, "GET", base+"/api/v1/bursts/runs/"+started.ID, "", nil, &full)
	var list struct {
		Files []struct{ Name, URL string }
	}
	if code, _, body := apiCall(t, "GET", base+"/api/v1/bursts/runs/"+started.ID+"/artifacts", "", nil, &list); code != http.StatusOK {
		t.Fatalf("GET artifacts: %d %s", code, body)
	}
	dir := t.TempDir()
	for _, f := range list.Files {
		code, _, body := apiCall(t, "GET", base+f.URL, "", nil, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", f.URL, code)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checked := runAIPerf(t, 2*time.Minute, nil, filepath.Join(venv, "bin", "python"),
		filepath.Join(repoRoot(t), "e2e", "testdata", "aiperf", "check_artifacts.py"), dir)
	var loaded struct {
		Records        int    `json:"jsonl_records"`
		LoadedRequests int    `json:"loaded_requests"`
		Schema         string `json:"schema_version"`
	}
	if err := json.Unmarshal(checked, &loaded); err != nil {
		t.Fatalf("check_artifacts.py printed %q: %v", checked, err)
	}
	n := full.Report.Summary.OK + full.Report.Summary.Failed
	if n == 0 || loaded.Records != n || loaded.LoadedRequests != n || loaded.Schema != "1.4" {
		t.Errorf("AIPerf loaded %+v; want every one of the run's %d requests and schema 1.4", loaded, n)
	}
}

// TestAIPerfReadsMultiRun: a --num-profile-runs 3 run against the
// simulator is laid out as AIPerf 0.13 lays out its trials, and AIPerf's
// own code reads it: `aiperf plot`'s mode detection finds the aggregate
// at the top and the three runs under profile_runs/, its loader reads the
// aggregate as AIPerf's confidence aggregate, and `aiperf plot` renders
// the runs' comparison.
func TestAIPerfReadsMultiRun(t *testing.T) {
	venv := requireAIPerf(t)
	addr := freeAddr(t)
	sim := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate", "--web.listen-address="+addr,
		"--sim.model="+blogModel, "--sim.ttft=20ms", "--sim.itl=2ms")
	waitHealthy(t, sim, "http://"+addr+"/health", 10*time.Second)

	const runs, requests = 3, 24
	work := t.TempDir()
	code, out := benchIn(t, work, "--model", blogModel, "--endpoint-type", "chat", "--streaming", "--url", addr,
		"--concurrency", "4", "--request-count", strconv.Itoa(requests), "--warmup-request-count", "4",
		"--synthetic-input-tokens-mean", "64", "--output-tokens-mean", "16", "--extra-inputs", "ignore_eos:true",
		"--num-profile-runs", strconv.Itoa(runs), "--profile-run-cooldown-seconds", "0.2",
		"--progress", "off", "--artifact-dir", "multi")
	if code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}
	for _, want := range []string{"inferprobe | Across runs", "3 of 3 runs succeeded", "time_to_first_token_p99 (ms)", "Runs agree: ", "Aggregate: multi/aggregate"} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	base := filepath.Join(work, "multi")
	for i := 1; i <= runs; i++ {
		// Every run is a whole run: its artifacts and its run_info; the
		// warmup went before the first only, and the seed is the same.
		dir := filepath.Join(base, "profile_runs", fmt.Sprintf("run_%04d", i))
		b, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
		if err != nil {
			t.Fatal(err)
		}
		type phase struct {
			Name string `json:"name"`
		}
		var doc struct {
			RunInfo struct {
				Trial    int    `json:"trial"`
				RunLabel string `json:"run_label"`
				Seed     uint64 `json:"random_seed"`
			} `json:"run_info"`
			InputConfig struct {
				Phases []phase `json:"phases"`
			} `json:"input_config"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		warmup := slices.Contains(doc.InputConfig.Phases, phase{"warmup"})
		if doc.RunInfo.Trial != i-1 || doc.RunInfo.RunLabel != filepath.Base(dir) || doc.RunInfo.Seed != 1 || warmup != (i == 1) {
			t.Errorf("%s: run_info %+v, warmup %v; want trial %d, its label, seed 1, a warmup in the first run only", dir, doc.RunInfo, warmup, i-1)
		}
		for _, name := range []string{"profile_export.jsonl", "profile_export_aiperf.csv", "report.html", "command.txt"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Error(err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(base, "aggregate", "report.html")); err != nil {
		t.Error(err)
	}

	checked := runAIPerf(t, 2*time.Minute, nil, filepath.Join(venv, "bin", "python"),
		filepath.Join(repoRoot(t), "e2e", "testdata", "aiperf", "check_aggregate.py"), base)
	var loaded struct {
		Mode            string   `json:"mode"`
		Dirs            []string `json:"dirs"`
		TrialMode       string   `json:"trial_mode"`
		TrialDirs       []string `json:"trial_dirs"`
		AggregationType string   `json:"aggregation_type"`
		TTFTp99         float64  `json:"ttft_p99"`
		TrialRequests   []int    `json:"trial_requests"`
		RunLabels       []string `json:"run_labels"`
	}
	if err := json.Unmarshal(checked, &loaded); err != nil {
		t.Fatalf("check_aggregate.py printed %q: %v", checked, err)
	}
	agg, err := os.ReadFile(filepath.Join(base, "aggregate", "profile_export_aiperf_aggregate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ours struct {
		Metrics map[string]struct {
			Mean float64 `json:"mean"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(agg, &ours); err != nil {
		t.Fatal(err)
	}
	if loaded.Mode != "single_run" || !slices.Equal(loaded.Dirs, []string{"aggregate"}) || loaded.AggregationType != "confidence" ||
		loaded.TTFTp99 != ours.Metrics["time_to_first_token_p99"].Mean {
		t.Errorf("AIPerf read the top directory as %+v; want the aggregate alone, as a confidence aggregate with TTFT p99 %g", loaded, ours.Metrics["time_to_first_token_p99"].Mean)
	}
	if loaded.TrialMode != "multi_run" || len(loaded.TrialDirs) != runs || !slices.Equal(loaded.TrialRequests, []int{requests, requests, requests}) ||
		!slices.Equal(loaded.RunLabels, []string{"run_0001", "run_0002", "run_0003"}) {
		t.Errorf("AIPerf read profile_runs/ as %+v; want %d runs of %d requests", loaded, runs, requests)
	}

	// aiperf plot writes ~/.aiperf/plot_config.yaml on first use.
	home := []string{"HOME=" + t.TempDir()}
	runAIPerf(t, 5*time.Minute, home, filepath.Join(venv, "bin", "aiperf"), "plot", base)
	if b, err := os.ReadFile(filepath.Join(base, "plots", "aiperf_plot.log")); err != nil || !strings.Contains(string(b), "Loaded aggregate-only run") {
		t.Errorf("aiperf plot did not load the aggregate (%v):\n%s", err, b)
	}
	runAIPerf(t, 5*time.Minute, home, filepath.Join(venv, "bin", "aiperf"), "plot", filepath.Join(base, "profile_runs"))
	png := filepath.Join(base, "profile_runs", "plots", "ttft_vs_throughput.png")
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("aiperf plot did not render %s (%v, %d bytes)", png, err, len(b))
	}
}

// TestAIPerfReadsMultiRunSweep: a multi-run sweep (--num-profile-runs 2
// over --concurrency 1,2) is laid out as AIPerf 0.13 lays out its sweep of
// trials in each --parameter-sweep-mode, and AIPerf's own code reads it:
// aiperf plot's mode detection and loader find each point's aggregate as
// that sweep cell (its variation label and concurrency) and every run in
// its trial directory, AIPerf's reader of a sweep's summary finds a row
// per point, and aiperf plot draws the points.
func TestAIPerfReadsMultiRunSweep(t *testing.T) {
	venv := requireAIPerf(t)
	addr := freeAddr(t)
	sim := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate", "--web.listen-address="+addr,
		"--sim.model="+blogModel, "--sim.ttft=20ms", "--sim.itl=2ms")
	waitHealthy(t, sim, "http://"+addr+"/health", 10*time.Second)
	type cell struct {
		Dir             string `json:"dir"`
		VariationLabel  string `json:"variation_label"`
		Concurrency     int    `json:"concurrency"`
		AggregationType string `json:"aggregation_type"`
	}
	type trial struct {
		Dir      string `json:"dir"`
		RunLabel string `json:"run_label"`
		Requests int    `json:"requests"`
	}
	const requests = 8
	for _, tc := range []struct {
		mode     string
		cells    [2]string // the points' aggregates
		summary  string    // the directory holding sweep_aggregate/
		trials   []string  // the runs, sorted
		labels   []string  // their run labels
		runOrder []string  // the runs in the order they ran
	}{
		{"repeated", [2]string{"aggregate/concurrency_1", "aggregate/concurrency_2"}, "aggregate",
			[]string{"profile_runs/trial_0001/concurrency_1", "profile_runs/trial_0001/concurrency_2", "profile_runs/trial_0002/concurrency_1", "profile_runs/trial_0002/concurrency_2"},
			[]string{"run_0001", "run_0001", "run_0002", "run_0002"},
			[]string{"trial_0001/concurrency_1", "trial_0001/concurrency_2", "trial_0002/concurrency_1"}},
		{"independent", [2]string{"concurrency_1/aggregate", "concurrency_2/aggregate"}, ".",
			[]string{"concurrency_1/profile_runs/trial_0001", "concurrency_1/profile_runs/trial_0002", "concurrency_2/profile_runs/trial_0001", "concurrency_2/profile_runs/trial_0002"},
			[]string{"run_0001", "run_0002", "run_0001", "run_0002"},
			[]string{"concurrency_1/profile_runs/trial_0001", "concurrency_1/profile_runs/trial_0002", "concurrency_2/profile_runs/trial_0001"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			work := t.TempDir()
			code, out := benchIn(t, work, "--model", blogModel, "--endpoint-type", "chat", "--streaming", "--url", addr,
				"--concurrency", "1,2", "--request-count", strconv.Itoa(requests),
				"--synthetic-input-tokens-mean", "64", "--output-tokens-mean", "16", "--extra-inputs", "ignore_eos:true",
				"--num-profile-runs", "2", "--parameter-sweep-mode", tc.mode, "--progress", "off", "--artifact-dir", "sweep")
			if code != 0 {
				t.Fatalf("bench exited %d:\n%s", code, out)
			}
			for _, want := range []string{"At concurrency=1:", "Aggregate: sweep/" + tc.cells[1], "inferprobe | Sweep",
				"Sweep summary: " + filepath.Join("sweep", tc.summary, "sweep_aggregate")} {
				if !strings.Contains(out, want) {
					t.Errorf("console lacks %q:\n%s", want, out)
				}
			}
			// The runs ran in the mode's order.
			var at []int
			for _, r := range tc.runOrder {
				at = append(at, strings.Index(out, r+"\n"))
			}
			if !slices.IsSorted(at) || at[0] < 0 {
				t.Errorf("runs %q ran at %v in the console, want in this order:\n%s", tc.runOrder, at, out)
			}
			base := filepath.Join(work, "sweep")
			for _, f := range []string{tc.cells[0] + "/report.html", tc.summary + "/sweep_aggregate/sweep_report.html",
				tc.summary + "/sweep_aggregate/profile_export_aiperf_sweep.csv", tc.trials[3] + "/report.html"} {
				if _, err := os.Stat(filepath.Join(base, f)); err != nil {
					t.Error(err)
				}
			}

			checked := runAIPerf(t, 2*time.Minute, nil, filepath.Join(venv, "bin", "python"),
				filepath.Join(repoRoot(t), "e2e", "testdata", "aiperf", "check_multirun_sweep.py"), base, tc.summary)
			var loaded struct {
				Mode      string  `json:"mode"`
				Cells     []cell  `json:"cells"`
				TrialMode string  `json:"trial_mode"`
				Trials    []trial `json:"trials"`
				Rows      []struct {
					Parameters map[string]int `json:"parameters"`
					Throughput float64        `json:"request_throughput"`
				} `json:"sweep_rows"`
				Metadata struct {
					Mode   string `json:"sweep_mode"`
					Trials int    `json:"num_trials_per_value"`
				} `json:"sweep_metadata"`
			}
			if err := json.Unmarshal(checked, &loaded); err != nil {
				t.Fatalf("check_multirun_sweep.py printed %q: %v", checked, err)
			}
			wantCells := []cell{
				{tc.cells[0], "phases.profiling.concurrency=1", 1, "confidence"},
				{tc.cells[1], "phases.profiling.concurrency=2", 2, "confidence"},
			}
			if loaded.Mode != "multi_run" || !slices.Equal(loaded.Cells, wantCells) {
				t.Errorf("AIPerf read the top directory as %s %+v; want the points' aggregates %+v", loaded.Mode, loaded.Cells, wantCells)
			}
			var wantTrials []trial
			for i, d := range tc.trials {
				wantTrials = append(wantTrials, trial{d, tc.labels[i], requests})
			}
			if loaded.TrialMode != "multi_run" || !slices.Equal(loaded.Trials, wantTrials) {
				t.Errorf("AIPerf read the profile_runs directories as %s %+v; want %+v", loaded.TrialMode, loaded.Trials, wantTrials)
			}
			if len(loaded.Rows) != 2 || loaded.Rows[0].Parameters["concurrency"] != 1 || loaded.Rows[1].Parameters["concurrency"] != 2 ||
				!(loaded.Rows[0].Throughput > 0) || loaded.Metadata.Mode != tc.mode || loaded.Metadata.Trials != 2 {
				t.Errorf("AIPerf read the sweep's summary as %+v", loaded)
			}

			home := []string{"HOME=" + t.TempDir()}
			runAIPerf(t, 5*time.Minute, home, filepath.Join(venv, "bin", "aiperf"), "plot", base)
			if b, err := os.ReadFile(filepath.Join(base, "plots", "aiperf_plot.log")); err != nil || strings.Count(string(b), "Loaded aggregate-only run") != 2 {
				t.Errorf("aiperf plot did not load both points' aggregates (%v):\n%s", err, b)
			}
			png := filepath.Join(base, "plots", "ttft_vs_throughput.png")
			if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
				t.Errorf("aiperf plot did not render %s (%v, %d bytes)", png, err, len(b))
			}
		})
	}
}

// TestAIPerfPlotsSearch: a capacity search against the simulator is laid
// out as AIPerf 0.13 lays out an adaptive search (search_iter_NNNN/
// profile_runs/run_0001 with search_history.json beside), and `aiperf
// plot` reads its steps and draws their curve.
func TestAIPerfPlotsSearch(t *testing.T) {
	venv := requireAIPerf(t)
	addr := freeAddr(t)
	sim := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate", "--web.listen-address="+addr,
		"--sim.model="+blogModel, "--sim.ttft=50ms", "--sim.itl=10ms", "--sim.max-concurrency=4")
	waitHealthy(t, sim, "http://"+addr+"/health", 10*time.Second)

	work := t.TempDir()
	code, out := benchIn(t, work, "--model", blogModel, "--endpoint-type", "chat", "--streaming", "--url", addr,
		"--isl", "16", "--isl-stddev", "0", "--osl", "6", "--osl-stddev", "0", "--extra-inputs", "ignore_eos:true",
		"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "80", "--concurrency-min", "2", "--concurrency-max", "16",
		"--request-count", "16", "--sla-warmup-seconds", "0", "--progress", "off", "--artifact-dir", "search")
	if code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}
	base := filepath.Join(work, "search")
	steps, err := filepath.Glob(filepath.Join(base, "search_iter_*", "profile_runs", "run_0001", "profile_export_aiperf.json"))
	if err != nil || len(steps) < 3 {
		t.Fatalf("steps %v (%v); want one directory per step, at least 3", steps, err)
	}
	if _, err := os.Stat(filepath.Join(base, "search_history.json")); err != nil {
		t.Error(err)
	}
	runAIPerf(t, 5*time.Minute, []string{"HOME=" + t.TempDir()}, filepath.Join(venv, "bin", "aiperf"), "plot", base)
	png := filepath.Join(base, "plots", "ttft_vs_throughput.png")
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("aiperf plot did not render %s (%v, %d bytes)", png, err, len(b))
	}
}

// TestAIPerfReadsGPUTelemetry: bench --gpu-telemetry URL scrapes a
// dcgm-exporter stand-in (a real exporter's reply, whose GPU 0 power and
// energy counter move on every scrape) beside an unreachable URL, which is
// a warning, not an end. Real AIPerf 0.13 loads gpu_telemetry_export.jsonl
// as its records, finds in them what its DCGM collector makes of the same
// reply, recomputes telemetry_data from them with its own accumulator, and
// `aiperf plot` draws the GPU utilisation plot of the directory.
func TestAIPerfReadsGPUTelemetry(t *testing.T) {
	venv := requireAIPerf(t)
	samplePath := filepath.Join(repoRoot(t), "gputelemetry", "testdata", "dcgm-exporter.txt")
	sample, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	var scrapes atomic.Int64
	dcgm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := scrapes.Add(1)
		body := strings.Replace(string(sample), "} 412.783000", fmt.Sprintf("} %d.5", 300+n%7*20), 1)
		body = strings.Replace(body, "} 98734561223", fmt.Sprintf("} %d", 98734561223+n*400_000), 1) // mJ: 400 J a scrape
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	defer dcgm.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()

	sim := startBlogSimulator(t)
	work := t.TempDir()
	code, out := benchIn(t, work, "--model", blogModel, "--endpoint-type", "chat", "--streaming", "--url", sim,
		"--concurrency", "2", "--request-count", "40", "--isl", "32", "--osl", "24", "--extra-inputs", "ignore_eos:true",
		"--gpu-telemetry", dcgm.URL, strings.TrimPrefix(dead.URL, "http://"), "--auto-plot", "--progress", "off", "--artifact-dir", "run")
	if code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, dead.URL+"/metrics is not reachable") {
		t.Errorf("no warning about the unreachable URL:\n%s", out)
	}
	if strings.Contains(out, "GPU telemetry unavailable") || strings.Contains(out, "GPU: no telemetry") {
		t.Errorf("URLs alone asked for this host's GPUs too:\n%s", out)
	}
	if !strings.Contains(out, "GPU telemetry (over the run)") {
		t.Errorf("no GPU telemetry table in the console:\n%s", out)
	}
	dir := filepath.Join(work, "run")
	checked := runAIPerf(t, 2*time.Minute, nil, filepath.Join(venv, "bin", "python"),
		filepath.Join(repoRoot(t), "e2e", "testdata", "aiperf", "check_gpu_telemetry.py"), dir, samplePath)
	var got struct {
		Records   int      `json:"records"`
		Metrics   int      `json:"metrics_checked"`
		Endpoints []string `json:"endpoints"`
	}
	if err := json.Unmarshal(checked, &got); err != nil {
		t.Fatalf("check_gpu_telemetry.py printed %q: %v", checked, err)
	}
	// 2 GPUs × 10 fields dcgm-exporter's defaults give AIPerf.
	if got.Records < 6 || got.Metrics != 20 || !slices.Equal(got.Endpoints, []string{dcgm.URL + "/metrics"}) {
		t.Errorf("AIPerf checked %+v; want 3 scrapes or more of 2 GPUs, 20 metrics, the reachable endpoint only", got)
	}

	// --auto-plot drew the PNGs `aiperf plot` draws of the directory, by name.
	ours := plotsIn(t, dir)
	theirs := aiperfPlots(t, venv, dir)
	if !slices.Contains(theirs, "gpu_utilization_and_throughput_over_time.png") || !slices.Equal(ours, theirs) {
		t.Errorf("--auto-plot drew %v; aiperf plot draws %v", ours, theirs)
	}
}

// plotsIn are the PNGs in dir/plots, each checked to be one.
func plotsIn(t *testing.T, dir string) []string {
	t.Helper()
	pngs, _ := filepath.Glob(filepath.Join(dir, "plots", "*.png"))
	var names []string
	for _, png := range pngs {
		if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s is not a PNG (%v, %d bytes)", png, err, len(b))
		}
		names = append(names, filepath.Base(png))
	}
	return names
}

// aiperfPlots runs `aiperf plot` on dir, in place of what plots/ held, and
// returns the PNGs it drew.
func aiperfPlots(t *testing.T, venv, dir string) []string {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, "plots")); err != nil {
		t.Fatal(err)
	}
	// aiperf plot writes ~/.aiperf/plot_config.yaml on first use.
	runAIPerf(t, 5*time.Minute, []string{"HOME=" + t.TempDir()}, filepath.Join(venv, "bin", "aiperf"), "plot", dir)
	return plotsIn(t, dir)
}

// TestAIPerfSweepLayout runs one sweep (--concurrency 1,2) twice against the
// simulator, with bench and with real AIPerf 0.13 (its tokenizer from an
// offline Hugging Face cache made here), and compares their summaries:
// sweep_aggregate/profile_export_aiperf_sweep.json with AIPerf's keys at
// every level and AIPerf's statistics per metric, the CSV with AIPerf's
// columns and sections (compare_sweep.py). bench's --auto-plot draws the
// PNGs `aiperf plot` draws of its sweep (its TTFT-against-throughput curve).
func TestAIPerfSweepLayout(t *testing.T) {
	venv := requireAIPerf(t)
	sim := startBlogSimulator(t)
	work := t.TempDir()
	args := []string{"--model", blogModel, "--endpoint-type", "chat", "--streaming", "--url", sim,
		"--concurrency", "1,2", "--request-count", "6", "--isl", "16", "--osl", "8"}
	code, out := benchIn(t, work, append(args, "--auto-plot", "--progress", "off", "--artifact-dir", "bench")...)
	if code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}

	runAIPerf(t, 6*time.Minute, []string{"HOME=" + t.TempDir()}, filepath.Join(venv, "bin", "aiperf"), append([]string{"profile"}, append(args,
		"--tokenizer", qwenTokenizerDir(t), "--ui-type", "none", "--output-artifact-dir", filepath.Join(work, "aiperf"))...)...)

	compared := runAIPerf(t, time.Minute, nil, filepath.Join(venv, "bin", "python"),
		filepath.Join(repoRoot(t), "e2e", "testdata", "aiperf", "compare_sweep.py"), filepath.Join(work, "bench"), filepath.Join(work, "aiperf"))
	var got struct {
		Cells int `json:"cells"`
	}
	if err := json.Unmarshal(compared, &got); err != nil {
		t.Fatalf("compare_sweep.py printed %q: %v", compared, err)
	}
	if got.Cells < 2*30 {
		t.Errorf("compared %s; want every metric of both points (30 or more each)", compared)
	}

	// --auto-plot drew the PNGs `aiperf plot` draws of the sweep, by name.
	dir := filepath.Join(work, "bench")
	ours := plotsIn(t, dir)
	if theirs := aiperfPlots(t, venv, dir); !slices.Contains(theirs, "ttft_vs_throughput.png") || !slices.Equal(ours, theirs) {
		t.Errorf("--auto-plot drew %v; aiperf plot draws %v", ours, theirs)
	}
}
