package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
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
