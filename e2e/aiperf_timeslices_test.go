package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// timeslicesOnlyInAIPerf are the metrics AIPerf 0.13's timeslices carry and bench's do not:
// the time-weighted effective and active set and tokens in flight, which bench does not compute
// (docs/metrics.md), and the HTTP byte and chunk counts and OSL mismatch figures, which bench's
// main export also leaves out where AIPerf writes zeros.
var timeslicesOnlyInAIPerf = []string{
	"Active Decode Throughput", "Active Decode Throughput Per User", "Active Prefill Throughput",
	"Active Prefill Throughput Per User", "Active Total Throughput", "Effective Concurrency",
	"Effective Decode Concurrency", "Effective Decode Throughput", "Effective Decode Throughput Per User",
	"Effective Prefill Concurrency", "Effective Prefill Throughput", "Effective Prefill Throughput Per User",
	"Effective Total Throughput", "Tokens In Flight", "HTTP Chunks Received", "HTTP Chunks Sent",
	"HTTP Data Received", "HTTP Data Sent", "OSL Mismatch Count", "OSL Mismatch Diff %",
}

// TestAIPerfTimeslices runs one --slice-duration command line with real AIPerf 0.13 and with
// bench against the same simulator: both write the two timeslice files, in the same layout
// (CSV columns, JSON keys), with the same units and statistics for every metric both have, and
// aiperf plot draws its timeslice plots from bench's.
func TestAIPerfTimeslices(t *testing.T) {
	if testing.Short() {
		t.Skip("runs AIPerf")
	}
	venv := requireAIPerf(t)
	url := startBlogSimulator(t)
	work := t.TempDir()
	args := append(shellWords(t, "-m Qwen/Qwen3-0.6B --url "+url+" --streaming --request-rate 20 --request-count 40 --slice-duration 0.5 --osl 8 --ui-type none"),
		"--tokenizer", qwenTokenizerDir(t))
	aiperfDir, benchDir := filepath.Join(work, "aiperf"), filepath.Join(work, "bench")
	runAIPerfIn(t, work, 3*time.Minute, []string{"HOME=" + t.TempDir()}, filepath.Join(venv, "bin", "aiperf"), append([]string{"profile"}, append(args, "--output-artifact-dir", aiperfDir)...)...)
	if code, out := benchIn(t, work, append(args, "--output-artifact-dir", benchDir)...); code != 0 {
		t.Fatalf("bench exit %d:\n%s", code, out)
	}
	want, got := readTimeslices(t, aiperfDir), readTimeslices(t, benchDir)
	if !slices.Equal(got.header, want.header) || !slices.Equal(got.keys, want.keys) {
		t.Errorf("layout: bench CSV %v, JSON %v; AIPerf CSV %v, JSON %v", got.header, got.keys, want.header, want.keys)
	}
	if got.slices < 4 || got.lastComplete || want.lastComplete {
		t.Errorf("bench wrote %d windows of a 2 s run (last complete: %v, AIPerf's %v); want at least 4, the last cut short", got.slices, got.lastComplete, want.lastComplete)
	}
	for _, m := range []string{"Time to First Token", "Inter Token Latency", "Request Latency", "Request Throughput", "Output Token Throughput"} {
		if got.stats[m] == "" {
			t.Errorf("bench's timeslices lack %s", m)
		}
	}
	for m, st := range want.stats {
		switch {
		case got.stats[m] != "" && got.stats[m] != st:
			t.Errorf("%s: bench %s, AIPerf %s", m, got.stats[m], st)
		case got.stats[m] == "" && !slices.Contains(timeslicesOnlyInAIPerf, m):
			t.Errorf("%s (%s) is in AIPerf's timeslices, not bench's", m, st)
		}
	}
	runAIPerf(t, 5*time.Minute, []string{"HOME=" + t.TempDir()}, filepath.Join(venv, "bin", "aiperf"), "plot", benchDir)
	for _, png := range []string{"timeslices_ttft.png", "timeslices_itl.png"} {
		if b, err := os.ReadFile(filepath.Join(benchDir, "plots", png)); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("aiperf plot did not draw %s from bench's timeslices (%v)", png, err)
		}
	}
}

// timeslices is what TestAIPerfTimeslices compares of a run's timeslice files: the CSV's
// header and windows, each metric's unit and statistics, the JSON's keys (top level and a
// window's, metrics aside) and whether its last window is complete.
type timeslices struct {
	header, keys []string
	slices       int
	stats        map[string]string // metric: "unit: stat stat …"
	lastComplete bool
}

func readTimeslices(t *testing.T, dir string) timeslices {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "profile_export_aiperf_timeslices.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%s's timeslices CSV: %v, %d rows", dir, err, len(rows))
	}
	ts := timeslices{header: rows[0], stats: map[string]string{}}
	windows, stats := map[string]bool{}, map[string][]string{}
	units := map[string]string{}
	for _, r := range rows[1:] {
		windows[r[0]] = true
		units[r[3]] = r[4]
		if !slices.Contains(stats[r[3]], r[5]) {
			stats[r[3]] = append(stats[r[3]], r[5])
		}
	}
	ts.slices = len(windows)
	for m, s := range stats {
		ts.stats[m] = fmt.Sprintf("%s: %s", units[m], strings.Join(s, " "))
	}
	b, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf_timeslices.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	var list []map[string]any
	if err := json.Unmarshal(b, &doc); err != nil || json.Unmarshal(doc["timeslices"], &list) != nil || len(list) == 0 {
		t.Fatalf("%s's timeslices JSON: %v, %d windows", dir, err, len(list))
	}
	for k := range doc {
		ts.keys = append(ts.keys, k)
	}
	for k, v := range list[len(list)-1] {
		if _, metric := v.(map[string]any); !metric {
			ts.keys = append(ts.keys, "window."+k)
		}
	}
	slices.Sort(ts.keys)
	complete, ok := list[len(list)-1]["is_complete"].(bool)
	ts.lastComplete = !ok || complete
	return ts
}
