package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBenchShardMerge runs one bench command unsharded and as three shards
// on one agreed start, merges the shards, and checks that the merged run
// is the unsharded one: its request count and digest, and its percentiles
// against those computed here from the shards' own per-request exports.
// A missing shard, a shard given twice and a shard of another run are refused.
func TestBenchShardMerge(t *testing.T) {
	sim := freeAddr(t)
	startSimulator(t, sim)
	dir := t.TempDir()
	args := func(extra ...string) []string {
		return append([]string{"bench", "--workers=1", "--progress", "off", "--model", "inferprobe-simulator", "--url", "http://" + sim,
			"--endpoint-type", "chat", "--streaming", "--request-rate", "40",
			"--synthetic-input-tokens-mean", "64", "--synthetic-input-tokens-stddev", "16",
			"--output-tokens-mean", "8", "--output-tokens-stddev", "3", "--random-seed", "5", "--request-count", "60"}, extra...)
	}
	wait := func(p *process) (int, string) {
		t.Helper()
		return p.exitCode(t, 120*time.Second), p.out.String()
	}
	digestOf := func(out string) (string, string) {
		t.Helper()
		m := digestLine.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no digest line:\n%s", out)
		}
		return m[1], m[2]
	}

	code, out := wait(inferprobe(t, "bench unsharded", dir, args("--artifact-dir", "single")...))
	if code != 0 {
		t.Fatalf("unsharded bench exited %d:\n%s", code, out)
	}
	wantDigest, wantN := digestOf(out)

	start := time.Now().Add(6 * time.Second).UTC().Format(time.RFC3339)
	var shards []*process
	var dirs []string
	for i := range 3 {
		d := fmt.Sprintf("shard%d", i)
		dirs = append(dirs, d)
		shards = append(shards, inferprobe(t, "bench shard "+d, dir, args("--shard", fmt.Sprintf("%d/3", i), "--start-at", start, "--artifact-dir", d)...))
	}
	for i, p := range shards {
		if code, out := wait(p); code != 0 {
			t.Fatalf("shard %d/3 exited %d:\n%s", i, code, out)
		}
	}

	merge := func(extra ...string) (int, string) {
		return wait(inferprobe(t, "bench merge", dir, append([]string{"bench", "merge"}, extra...)...))
	}
	code, out = merge(append([]string{"--artifact-dir", "merged"}, dirs...)...)
	if code != 0 {
		t.Fatalf("bench merge exited %d:\n%s", code, out)
	}
	if got, n := digestOf(out); got != wantDigest || n != wantN {
		t.Errorf("merged digest %s over %s requests, unsharded %s over %s", got, n, wantDigest, wantN)
	}
	if !strings.Contains(out, "60 ok, 0 errors") {
		t.Errorf("the merged report does not count the 60 requests as ok:\n%s", out)
	}
	for _, name := range []string{"profile_export_aiperf.json", "profile_export_aiperf.csv", "inputs.json", "report.html", "profile_export_console.txt", "command.txt"} {
		if _, err := os.Stat(filepath.Join(dir, "merged", name)); err != nil {
			t.Errorf("merged artifacts: %v", err)
		}
	}
	if jsonl, err := os.ReadFile(filepath.Join(dir, "merged", "profile_export.jsonl")); err != nil || bytes.Count(jsonl, []byte("\n")) != 60 {
		t.Errorf("merged profile_export.jsonl: %d lines (%v), want 60", bytes.Count(jsonl, []byte("\n")), err)
	}

	// The percentiles, computed here from the shards' per-request exports.
	samples := map[string][]float64{}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, d, "profile_export.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var line struct {
				Metrics map[string]struct {
					Value json.RawMessage `json:"value"`
				} `json:"metrics"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("%s: %v", d, err)
			}
			for _, tag := range []string{"time_to_first_token", "request_latency", "inter_token_latency"} {
				var v float64
				if m, ok := line.Metrics[tag]; ok && json.Unmarshal(m.Value, &v) == nil {
					samples[tag] = append(samples[tag], v)
				}
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "merged", "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]any
	json.Unmarshal(b, &doc)
	for tag, s := range samples {
		slices.Sort(s)
		// A request whose tokens came in one read has no inter-token latency.
		if n, _ := doc[tag]["count"].(float64); int(n) != len(s) || len(s) < 50 {
			t.Errorf("%s: %d samples in the shards' exports, %v in the merged report; want equal, about 60", tag, len(s), n)
		}
		for p, name := range map[float64]string{.5: "p50", .9: "p90", .99: "p99", 0: "min", 1: "max"} {
			// numpy's linear interpolation between closest ranks, as AIPerf.
			pos := p * float64(len(s)-1)
			lo := int(pos)
			hi := min(lo+1, len(s)-1)
			want := s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
			got, _ := doc[tag][name].(float64)
			// The exports are in ms and the report's statistics in seconds scaled to ms.
			if math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("merged %s %s = %v, from the shards' exports %v", tag, name, got, want)
			}
		}
	}

	code, out = merge("--artifact-dir", "partial", dirs[0], "never-written", dirs[2])
	if code != 6 || !strings.Contains(out, "shard 1/3 missing") || !strings.Contains(out, "PARTIAL RUN") || !strings.Contains(out, "never-written holds no") {
		t.Errorf("merge without shard 1/3: exit %d, want 6 and the shard named:\n%s", code, out)
	}
	code, out = merge("--artifact-dir", "twice", dirs[0], dirs[0], dirs[1])
	if code != 2 || !strings.Contains(out, "shard 0/3 is given twice") {
		t.Errorf("merge with shard 0/3 twice: exit %d, want 2:\n%s", code, out)
	}
	other := args("--shard", "1/3", "--artifact-dir", "other")
	other[slices.Index(other, "60")] = "9"
	if code, out := wait(inferprobe(t, "bench other run", dir, other...)); code != 0 {
		t.Fatalf("the other run's shard exited %d:\n%s", code, out)
	}
	code, out = merge("--artifact-dir", "mixed", dirs[0], "other", dirs[2])
	if code != 2 || !strings.Contains(out, "shards of different runs") {
		t.Errorf("merge with a shard of another run: exit %d, want 2:\n%s", code, out)
	}
}
