package e2e

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// blogModel is the model of NVIDIA's AIPerf blog post; the simulator serves
// it under that name so that the commands run unchanged.
const blogModel = "Qwen/Qwen3-0.6B"

// startBlogSimulator runs a simulator that serves blogModel quickly (1 ms
// between tokens) and returns its address without a scheme, as the blog
// writes --url localhost:8000.
func startBlogSimulator(t *testing.T) string {
	t.Helper()
	return startModelSimulator(t, blogModel)
}

// startModelSimulator is startBlogSimulator for another model name.
func startModelSimulator(t *testing.T, model string) string {
	t.Helper()
	addr := freeAddr(t)
	p := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate", "--web.listen-address="+addr,
		"--sim.model="+model, "--sim.ttft=20ms", "--sim.itl=1ms")
	waitHealthy(t, p, "http://"+addr+"/health", 10*time.Second)
	return addr
}

// benchIn runs `inferprobe bench` in dir and returns its exit status and output.
func benchIn(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	p := inferprobe(t, "inferprobe bench", dir, append([]string{"bench", "--workers=2"}, args...)...)
	code := p.exitCode(t, 120*time.Second)
	return code, p.out.String()
}

// The two commands of NVIDIA's AIPerf blog post ("aiperf profile" there),
// verbatim but for --url, which points at the simulator.
func blogCommands(url string) map[string][]string {
	return map[string][]string{
		"static": {"--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--streaming", "--url", url,
			"--synthetic-input-tokens-mean", "128", "--synthetic-input-tokens-stddev", "0",
			"--output-tokens-mean", "128", "--output-tokens-stddev", "0",
			"--extra-inputs", "min_tokens:128", "--extra-inputs", "ignore_eos:true"},
		"poisson": {"--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--streaming", "--url", url,
			"--request-rate", "10", "--arrival-pattern", "poisson",
			"--synthetic-input-tokens-mean", "512", "--synthetic-input-tokens-stddev", "128",
			"--output-tokens-mean", "128", "--output-tokens-stddev", "32",
			"--random-seed", "42", "--request-count", "200"},
	}
}

// TestBenchAIPerfBlogCommands runs both commands of the blog post and reads
// every artifact back as a script written for AIPerf would.
func TestBenchAIPerfBlogCommands(t *testing.T) {
	url := startBlogSimulator(t)
	for _, tc := range []struct {
		name, dir string
		requests  float64
		osl       float64 // 0: not pinned
	}{
		{"static", "Qwen_Qwen3-0.6B-chat-concurrency1", 10, 128},
		{"poisson", "Qwen_Qwen3-0.6B-chat-request_rate10.0", 200, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			code, out := benchIn(t, work, blogCommands(url)[tc.name]...)
			if code != 0 {
				t.Fatalf("bench exited %d:\n%s", code, out)
			}
			for _, want := range []string{"Time to First Token (ms)", "Inter Token Latency (ms)", "Output Token Throughput (tokens/sec)", "Sequence digest:"} {
				if !strings.Contains(out, want) {
					t.Errorf("console report lacks %q:\n%s", want, out)
				}
			}
			dir := filepath.Join(work, "artifacts", tc.dir)
			checkArtifacts(t, dir, tc.requests, tc.osl)
		})
	}
}

func checkArtifacts(t *testing.T, dir string, requests, osl float64) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("artifact: %v", err)
		}
		return b
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(read("profile_export_aiperf.json"), &doc); err != nil {
		t.Fatalf("profile_export_aiperf.json: %v", err)
	}
	type metric struct {
		Unit string  `json:"unit"`
		Avg  float64 `json:"avg"`
		P99  float64 `json:"p99"`
	}
	get := func(tag string) metric {
		var m metric
		if err := json.Unmarshal(doc[tag], &m); err != nil || m.Unit == "" {
			t.Errorf("%s: %s (%v)", tag, doc[tag], err)
		}
		return m
	}
	if got := get("request_count").Avg; got != requests {
		t.Errorf("request_count %v, want %v", got, requests)
	}
	if ttft := get("time_to_first_token"); ttft.Unit != "ms" || ttft.Avg < 20 {
		t.Errorf("time_to_first_token %+v: want ms and at least the simulator's 20 ms", ttft)
	}
	get("inter_token_latency")
	get("output_token_throughput_per_user")
	if got := get("output_sequence_length").Avg; osl > 0 && got != osl {
		t.Errorf("output_sequence_length avg %v, want the pinned %v", got, osl)
	}

	// AIPerf's two sections, inferprobe's, and AIPerf's GPU telemetry header.
	var sections []string
	for s := range strings.SplitSeq(strings.TrimSpace(string(read("profile_export_aiperf.csv"))), "\r\n\r\n") {
		if s = strings.TrimSpace(s); s != "" {
			sections = append(sections, s)
		}
	}
	for _, s := range sections {
		if _, err := csv.NewReader(strings.NewReader(s)).ReadAll(); err != nil {
			t.Errorf("CSV section does not parse: %v\n%s", err, s)
		}
	}
	// AIPerf's four, with inferprobe's confidence intervals before the GPU header.
	if len(sections) != 5 || !slices.ContainsFunc(sections, func(s string) bool { return strings.HasPrefix(s, "Confidence Interval,") }) {
		t.Errorf("CSV has %d sections, want AIPerf's 4 and the confidence intervals", len(sections))
	}

	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(read("profile_export.jsonl")))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Metadata struct {
				SessionNum *int `json:"session_num"`
			} `json:"metadata"`
			// A value is a number, or a list (inter_chunk_latency).
			Metrics map[string]struct {
				Value json.RawMessage `json:"value"`
				Unit  string          `json:"unit"`
			} `json:"metrics"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Metadata.SessionNum == nil || rec.Metrics["request_latency"].Unit != "ms" {
			t.Fatalf("JSONL line %d: %v: %s", lines+1, err, sc.Bytes())
		}
		lines++
	}
	if float64(lines) != requests {
		t.Errorf("%d JSONL lines, want %v", lines, requests)
	}
	if page := read("report.html"); bytes.Count(page, []byte(`<svg role="img"`)) != 14 || bytes.Contains(page, []byte("<script")) {
		t.Errorf("report.html is not the fourteen-chart, script-free report")
	}
	if cmd := string(read("command.txt")); !strings.HasPrefix(cmd, "inferprobe bench --workers=2 --model Qwen/Qwen3-0.6B") {
		t.Errorf("command.txt = %q", cmd)
	}
}

// TestBenchCompareAndSaveScenario: a failed --compare-fail rule exits 3, the
// API key is written nowhere, and --save-scenario writes a file that
// check-config accepts.
func TestBenchCompareAndSaveScenario(t *testing.T) {
	url := startBlogSimulator(t)
	work := t.TempDir()
	const key = "sk-e2e-secret-key"
	args := []string{"--model", blogModel, "--url", url, "--streaming", "--request-count", "5", "--osl", "16",
		"--api-key", key, "--goodput", "time_to_first_token:5000", "--warmup-request-count", "2"}
	code, out := benchIn(t, work, append(args, "--artifact-dir", "base", "--save-scenario", "burst.yml")...)
	if code != 0 {
		t.Fatalf("baseline run exited %d:\n%s", code, out)
	}
	if !strings.Contains(out, "Goodput (requests/sec)") || !strings.Contains(out, "5 ok, 0 errors") {
		t.Errorf("report lacks goodput, or warmup requests were counted:\n%s", out)
	}
	code, out = benchIn(t, work, append(args, "--artifact-dir", "again", "--compare", "base/profile_export_aiperf.json",
		"--compare-fail", "time_to_first_token.p99>0.001", "--compare-fail", "request_latency.p99<0.001")...)
	if code != 3 || !strings.Contains(out, "FAIL time_to_first_token.p99>0.001") || !strings.Contains(out, "pass request_latency.p99<0.001") {
		t.Errorf("compare run exited %d, want 3 with one FAIL and one pass:\n%s", code, out)
	}
	if strings.Contains(out, key) {
		t.Errorf("the API key was printed:\n%s", out)
	}
	for dir, want := range map[string]bool{"base": false, "again": true} {
		page, err := os.ReadFile(filepath.Join(work, dir, "report.html"))
		if err != nil || bytes.Contains(page, []byte(`<section id="compare">`)) != want ||
			want && !bytes.Contains(page, []byte(`<tr class="fail"><td>time_to_first_token.p99&gt;0.001</td>`)) {
			t.Errorf("%s/report.html: the comparison with its failed rule should be there: %v (%v)", dir, want, err)
		}
	}
	filepath.WalkDir(work, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(key)) {
				t.Errorf("%s contains the API key", path)
			}
		}
		return nil
	})
	// The saved scenario reads the key from INFERPROBE_API_KEY, as the
	// daemon would.
	t.Setenv("INFERPROBE_API_KEY", key)
	p := inferprobe(t, "inferprobe check-config", work, "check-config", "burst.yml")
	if code := p.exitCode(t, 30*time.Second); code != 0 {
		b, _ := os.ReadFile(filepath.Join(work, "burst.yml"))
		t.Errorf("check-config burst.yml exited %d:\n%s\n%s", code, p.out.String(), b)
	}
}

// TestBenchTraceReplay: --input-file with --custom-dataset-type
// mooncake_trace and --fixed-schedule sends the whole trace at its
// timestamps.
func TestBenchTraceReplay(t *testing.T) {
	url := startBlogSimulator(t)
	work := t.TempDir()
	var trace strings.Builder
	for i := range 20 { // one request every 100 ms
		fmt.Fprintf(&trace, `{"timestamp": %d, "input_length": %d, "output_length": 10, "hash_ids": [%d]}`+"\n", 100*i, 100+i, i%3)
	}
	if err := os.WriteFile(filepath.Join(work, "trace.jsonl"), []byte(trace.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := benchIn(t, work, "--model", blogModel, "--url", url, "--streaming",
		"--input-file", "trace.jsonl", "--custom-dataset-type", "mooncake_trace", "--fixed-schedule")
	if code != 0 || !strings.Contains(out, "20 ok, 0 errors") {
		t.Fatalf("bench exited %d, want every request of the trace sent:\n%s", code, out)
	}
	b, err := os.ReadFile(filepath.Join(work, "artifacts", "Qwen_Qwen3-0.6B-chat-fixed_schedule", "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Duration struct {
			Avg float64 `json:"avg"`
		} `json:"benchmark_duration"`
		ISL struct {
			Min float64 `json:"min"`
			Max float64 `json:"max"`
		} `json:"input_sequence_length"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// The last request is due 1.9 s after the first: replay keeps the gaps.
	if doc.Duration.Avg < 1.9 {
		t.Errorf("benchmark_duration %v s: the trace's 1.9 s of timestamps were not kept", doc.Duration.Avg)
	}
	if doc.ISL.Min != 100 || doc.ISL.Max != 119 {
		t.Errorf("input lengths %v..%v, want the trace's 100..119", doc.ISL.Min, doc.ISL.Max)
	}
}

// TestBenchInterrupt: Ctrl-C stops sending, lets the requests in flight
// finish, writes the report of what finished and exits 130; a second Ctrl-C
// cancels the requests in flight instead of waiting for them.
func TestBenchInterrupt(t *testing.T) {
	addr := freeAddr(t)
	// 20 ms per token: a 100-token request takes 2 s.
	sim := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate", "--web.listen-address="+addr,
		"--sim.model="+blogModel, "--sim.ttft=20ms", "--sim.itl=20ms")
	waitHealthy(t, sim, "http://"+addr+"/health", 10*time.Second)
	for _, tc := range []struct {
		name    string
		signals int
		within  time.Duration // from the first signal to the exit
		note    string
	}{
		{"once: in-flight requests finish", 1, 20 * time.Second, "waiting for the requests in flight to finish"},
		{"twice: in-flight requests are cancelled", 2, 5 * time.Second, "cancelling the requests in flight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			p := inferprobe(t, "inferprobe bench", work, "bench", "--workers=2", "--model", blogModel, "--url", addr, "--streaming",
				"--concurrency", "4", "--request-count", "10000", "--osl", "100", "--extra-inputs", "ignore_eos:true",
				"--progress", "plain", "--artifact-dir", "out")
			time.Sleep(5 * time.Second) // workers up, some requests done, four in flight
			p.checkRunning(t)
			sent := time.Now()
			p.signal(t, syscall.SIGINT)
			if tc.signals == 2 {
				time.Sleep(300 * time.Millisecond)
				p.signal(t, syscall.SIGINT)
			}
			if code := p.exitCode(t, tc.within+10*time.Second); code != 130 {
				t.Fatalf("exit %d, want 130:\n%s", code, p.out.String())
			}
			if took := time.Since(sent); took > tc.within {
				t.Errorf("took %s after the first signal to exit, want at most %s", took, tc.within)
			}
			out := p.out.String()
			if !strings.Contains(out, tc.note) || !strings.Contains(out, "interrupted: the report covers the requests that finished") {
				t.Errorf("output lacks %q or the interrupted note:\n%s", tc.note, out)
			}
			b, err := os.ReadFile(filepath.Join(work, "out", "profile_export_aiperf.json"))
			if err != nil {
				t.Fatalf("no report after the interrupt: %v", err)
			}
			var doc struct {
				WasCancelled bool `json:"was_cancelled"`
				Count        struct {
					Avg float64 `json:"avg"`
				} `json:"request_count"`
				Extras struct {
					Cancelled int `json:"cancelled_request_count"`
				} `json:"inferprobe"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if !doc.WasCancelled || doc.Count.Avg < 1 || doc.Count.Avg >= 10000 {
				t.Errorf("was_cancelled %v, request_count %v: want a partial report of a cancelled run", doc.WasCancelled, doc.Count.Avg)
			}
			if tc.signals == 2 && doc.Extras.Cancelled == 0 {
				t.Errorf("no request was cancelled by the second signal")
			}
		})
	}
}
