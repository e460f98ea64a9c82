package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBenchExitStatus: scripts can trust bench's exit status — 4 when every
// request failed (a wrong model), 5 when failures pass
// --failed-request-threshold, 0 on success — and the console names each
// error reason with the server's own first message.
func TestBenchExitStatus(t *testing.T) {
	good := freeAddr(t)
	startSimulator(t, good)
	flaky := freeAddr(t)
	p := inferprobe(t, "inferprobe simulate (flaky)", t.TempDir(), "simulate", "--web.listen-address="+flaky,
		"--sim.ttft=5ms", "--sim.itl=1ms", "--sim.error-rate=0.5", "--sim.seed=3")
	waitHealthy(t, p, "http://"+flaky+"/health", 10*time.Second)
	common := []string{"--endpoint-type", "chat", "--streaming", "--output-tokens-mean", "8", "--progress", "off"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"success", []string{"--model", "inferprobe-simulator", "--url", good, "--request-count", "20", "--failed-request-threshold", "0.1"}, 0,
			[]string{"20 ok, 0 errors"}},
		{"all failed", []string{"--model", "no-such-model", "--url", good, "--request-count", "5"}, 4,
			[]string{"all 5 requests failed", "http_4xx", "5  HTTP 404:", "does not exist"}},
		{"threshold passed", []string{"--model", "inferprobe-simulator", "--url", flaky, "--request-count", "200", "--failed-request-threshold", "0.2"}, 5,
			[]string{"> --failed-request-threshold 0.2", "http_5xx", "simulated server error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := bench(t, append(append([]string{}, common...), tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			// A healthy short run is not called client-bound (the median-lag
			// rule for runs under 50 requests).
			if tc.code == 0 && strings.Contains(out, "CLIENT-BOUND") {
				t.Errorf("a healthy 20-request run was called client-bound:\n%s", out)
			}
			if tc.code == 5 && strings.Contains(out, "200 requests") {
				t.Errorf("the threshold did not stop the run early:\n%s", out)
			}
		})
	}
}

// TestBenchSweepInterrupt: a sweep runs its points one after another in
// AIPerf's directories with a summary beside them; Ctrl-C during a point
// stops the sweep there, with the finished points and the summary written.
func TestBenchSweepInterrupt(t *testing.T) {
	sim := freeAddr(t)
	startSimulator(t, sim)
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep")
	p := inferprobe(t, "inferprobe bench (sweep)", dir, "bench", "--workers=2", "--model", "inferprobe-simulator", "--url", sim,
		"--streaming", "--output-tokens-mean", "16", "--extra-inputs", "ignore_eos:true", "--request-count", "30",
		"--concurrency", "1,2,4", "--progress", "plain", "--artifact-dir", out)
	eventually(t, 60*time.Second, "the sweep to start its second point", func() error {
		if !strings.Contains(p.out.String(), "sweep point 2 of 3: concurrency=2") {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t, 60*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130", code)
	}
	text := p.out.String()
	for _, want := range []string{"inferprobe | Sweep", "concurrency=1", "sweep interrupted; 2 of 3 points finished"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(text, "sweep point 3 of 3") {
		t.Error("the sweep went on after Ctrl-C")
	}
	for _, f := range []string{"concurrency_1/report.html", "concurrency_2/profile_export.jsonl", "sweep_aggregate/sweep_report.html", "sweep_aggregate/profile_export_aiperf_sweep.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "concurrency_4")); err == nil {
		t.Error("concurrency_4 was written after Ctrl-C")
	}
	b, err := os.ReadFile(filepath.Join(out, "sweep_aggregate", "profile_export_aiperf_sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs       int `json:"num_profile_runs"`
		Successful int `json:"num_successful_runs"`
		Failed     []struct {
			Error string `json:"error"`
		} `json:"failed_runs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Runs != 2 || doc.Successful != 1 || len(doc.Failed) != 1 || doc.Failed[0].Error != "interrupted" {
		t.Errorf("sweep summary: %+v", doc)
	}
}

// TestBenchSweepSameSeedNoTable: with --parameter-sweep-same-seed every point
// sends the same sequence (the same digest, seed --random-seed), and with
// --no-sweep-table the console ends without the sweep's table, whose files
// are still written.
func TestBenchSweepSameSeedNoTable(t *testing.T) {
	sim := freeAddr(t)
	startSimulator(t, sim)
	out := filepath.Join(t.TempDir(), "sweep")
	code, text := bench(t, "--model", "inferprobe-simulator", "--url", sim, "--streaming", "--output-tokens-mean", "4",
		"--request-count", "6", "--concurrency", "1,2", "--random-seed", "7", "--parameter-sweep-same-seed", "--no-sweep-table",
		"--progress", "off", "--artifact-dir", out)
	if code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, text)
	}
	digests := digestLine.FindAllStringSubmatch(text, -1)
	if len(digests) != 2 || digests[0][1] != digests[1][1] || digests[0][3] != "7" || digests[1][3] != "7" {
		t.Errorf("want two points of one digest, seed 7; have %q", digests)
	}
	if strings.Contains(text, "inferprobe | Sweep") {
		t.Errorf("the sweep's table was printed with --no-sweep-table:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(out, "sweep_aggregate", "profile_export_aiperf_sweep.json")); err != nil {
		t.Error(err)
	}
}
