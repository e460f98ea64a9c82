package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/inferprobe/inferprobe/tokenizer"
)

// The real engine is llama-cpp-python's OpenAI-compatible server, which runs
// llama.cpp, serving a random-weight llama model with GPT-2's vocabulary
// (e2e/testdata/realengine/make_model.py: it generates whole words only and
// ends a reply by itself after about 30 tokens). `make realengine` installs
// both under .cache/realengine. Its quirks are in the README's compatibility
// notes.
const (
	realEngineDir   = ".cache/realengine"
	realEngineModel = "realengine" // the model name it serves (--model_alias)
	gpt2Tokenizer   = "shared/data/tokenizers/gpt2/tokenizer.json"
)

// realEngine is a running llama-cpp-python server.
type realEngine struct {
	*process
	addr string // host:port
}

// url is the OpenAI API base, as a target's url.
func (e *realEngine) url() string { return "http://" + e.addr + "/v1" }

// requireRealEngine returns the Python of the real engine's virtual
// environment and the model it serves. Without them the test is skipped,
// unless INFERPROBE_E2E=1 (make test) asks for every test.
func requireRealEngine(t *testing.T) (python, model string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	python = filepath.Join(root, realEngineDir, "bin", "python")
	model = filepath.Join(root, realEngineDir, "model.gguf")
	for _, p := range []string{python, model} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("INFERPROBE_E2E") == "1" {
				t.Fatalf("%s is missing and INFERPROBE_E2E=1: run `make realengine` to install the real engine", p)
			}
			t.Skipf("%s is missing: run `make realengine` to install the real engine (llama-cpp-python; it compiles llama.cpp, several minutes the first time). Set INFERPROBE_E2E=1 to fail instead of skipping", p)
		}
	}
	return python, model
}

// requireGPT2Tokenizer finds shared/data's GPT-2 tokenizer.json (the real
// engine's vocabulary) beside the repository or above it.
func requireGPT2Tokenizer(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, gpt2Tokenizer)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			if os.Getenv("INFERPROBE_E2E") == "1" {
				t.Fatalf("%s not found beside or above the repository and INFERPROBE_E2E=1", gpt2Tokenizer)
			}
			t.Skipf("%s not found beside or above the repository; skipping", gpt2Tokenizer)
		}
		dir = parent
	}
}

// startRealEngine runs the server on a free port and waits until it has
// loaded the model (it listens only then). One thread, as the tests share
// two cores with the binary under test; a fixed sampling seed. Streams are
// not cut short when another request arrives (the server's default does:
// see the README's compatibility notes), and only the last position's
// logits are computed, as a serving engine does.
func startRealEngine(t *testing.T) *realEngine {
	t.Helper()
	python, model := requireRealEngine(t)
	addr := freeAddr(t)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, "llama-cpp-python server", t.TempDir(), python, "-m", "llama_cpp.server",
		"--model", model, "--model_alias", realEngineModel, "--host", host, "--port", port,
		"--n_ctx", "4096", "--n_threads", "1", "--n_threads_batch", "1", "--seed", "2026",
		"--logits_all", "false", "--interrupt_requests", "false")
	e := &realEngine{process: p, addr: addr}
	waitHealthy(t, p, e.url()+"/models", 60*time.Second)
	return e
}

// tokenize asks the server for its token ids of text (llama-cpp-python's
// /extras/tokenize; llama.cpp's own server has /tokenize).
func (e *realEngine) tokenize(t *testing.T, text string) []int {
	t.Helper()
	body, err := json.Marshal(map[string]string{"input": text, "model": realEngineModel})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient.Post("http://"+e.addr+"/extras/tokenize", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/extras/tokenize: status %d", resp.StatusCode)
	}
	var out struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("/extras/tokenize: %v", err)
	}
	return out.Tokens
}

// posts counts the requests to path that the server logged as received.
func (e *realEngine) posts(path string) int {
	return strings.Count(e.out.String(), `"POST `+path+` HTTP/1.1"`)
}

// benchReport is what the tests read of a bench run's
// profile_export_inferprobe.json.
type benchReport struct {
	doc map[string]json.RawMessage
}

func readBenchReport(t *testing.T, dir string) benchReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "profile_export_inferprobe.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r benchReport
	if err := json.Unmarshal(b, &r.doc); err != nil {
		t.Fatal(err)
	}
	return r
}

type benchStats struct {
	Avg, Min, Max float64
}

// stats returns a metric's statistics; ok is false when the run has none.
func (r benchReport) stats(tag string) (benchStats, bool) {
	var s benchStats
	raw, ok := r.doc[tag]
	if !ok || string(raw) == "null" {
		return s, false
	}
	return s, json.Unmarshal(raw, &s) == nil
}

// extras is the report's inferprobe object.
func (r benchReport) extras(t *testing.T) (errorsByReason map[string]int, tokenCounts string) {
	t.Helper()
	var x struct {
		Errors      map[string]int `json:"errors_by_reason"`
		TokenCounts string         `json:"token_counts"`
	}
	if err := json.Unmarshal(r.doc["inferprobe"], &x); err != nil {
		t.Fatal(err)
	}
	return x.Errors, x.TokenCounts
}

// TestRealEngineBench runs bench against the real server on both of its
// generating endpoints, streamed and not, with min_tokens pinning the output
// length (this server honours min_tokens). The server sends usage only in
// replies that are not streamed, so streamed lengths are counted with the
// tokenizer, or one token per chunk without one; every way must give the
// pinned length exactly, and the prompts that the tokenizer made exact must
// be exactly as long for the server.
func TestRealEngineBench(t *testing.T) {
	engine := startRealEngine(t)
	tok := requireGPT2Tokenizer(t)
	// The server wraps a chat prompt in its fallback template (llama-2's
	// [INST] … [/INST]): its usage counts those tokens too.
	const isl, osl, requests = 64, 24, 6
	for _, tc := range []struct {
		endpoint  string
		stream    bool
		tokenizer bool
		counts    string // the report's token_counts, up to its colon
		input     func(float64) bool
	}{
		{"chat", true, true, "tokenizer", func(n float64) bool { return n == isl }},
		{"chat", true, false, "chunks", nil},
		{"chat", false, true, "usage", func(n float64) bool { return n > isl }},
		{"completions", true, true, "tokenizer", func(n float64) bool { return n == isl }},
		{"completions", true, false, "chunks", nil},
		{"completions", false, true, "usage", func(n float64) bool { return n == isl }},
	} {
		name := fmt.Sprintf("%s/stream=%v/tokenizer=%v", tc.endpoint, tc.stream, tc.tokenizer)
		t.Run(name, func(t *testing.T) {
			work := t.TempDir()
			args := []string{"--model", realEngineModel, "--url", engine.url(), "--endpoint-type", tc.endpoint,
				"--isl", strconv.Itoa(isl), "--osl", strconv.Itoa(osl), "--extra-inputs", "min_tokens:" + strconv.Itoa(osl),
				"--request-count", strconv.Itoa(requests), "--progress", "off", "--artifact-dir", "out"}
			if tc.stream {
				args = append(args, "--streaming")
			}
			if tc.tokenizer {
				args = append(args, "--tokenizer", tok)
			}
			code, out := benchIn(t, work, args...)
			if code != 0 || !strings.Contains(out, fmt.Sprintf("%d ok, 0 errors", requests)) {
				t.Fatalf("bench exited %d, want every request to succeed:\n%s", code, out)
			}
			r := readBenchReport(t, filepath.Join(work, "out"))
			if _, counts := r.extras(t); !strings.HasPrefix(counts, tc.counts) {
				t.Errorf("token counts from %q, want %s", counts, tc.counts)
			}
			if s, _ := r.stats("output_sequence_length"); s.Min != osl || s.Max != osl {
				t.Errorf("output lengths %v..%v, want exactly the pinned %d", s.Min, s.Max, osl)
			}
			if s, _ := r.stats("input_sequence_length"); tc.input != nil && (s.Min != s.Max || !tc.input(s.Min)) {
				t.Errorf("input lengths %v..%v: want one length, the tokenizer's exact %d (with chat's template tokens when the server counts)", s.Min, s.Max, isl)
			}
			if _, ok := r.stats("time_to_first_token"); ok != tc.stream {
				t.Errorf("time to first token reported: %v, want it exactly for streams", ok)
			}
			if s, ok := r.stats("inter_token_latency"); tc.stream && (!ok || s.Min <= 0) {
				t.Errorf("inter-token latency %+v (reported: %v), want a positive one for every stream", s, ok)
			}
		})
	}
	if got, want := engine.posts("/v1/chat/completions")+engine.posts("/v1/completions"), 6*requests; got != want {
		t.Errorf("the server received %d requests, want %d", got, want)
	}
}

// TestRealEngineTokenizerMatchesServer: inferprobe's tokenizer, loaded from
// shared/data's GPT-2 tokenizer.json, gives the server's token ids (its
// /extras/tokenize) on every kind of text.
func TestRealEngineTokenizerMatchesServer(t *testing.T) {
	engine := startRealEngine(t)
	tok, err := tokenizer.Load(requireGPT2Tokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		"The quick brown fox jumps over the lazy dog.",
		"It's what we'd've done, isn't it? They're here; you'll see.",
		"func main() {\n\tfmt.Println(\"hello, world\") // 42\n}\n",
		"    four spaces, then a tab\t\tand   runs   of   spaces  \n\n\n",
		"Café naïve résumé façade Ærøskøbing Straße",
		"Emoji: 🚀🔥👍🏽 and a family 👨‍👩‍👧",
		"中文分词测试，日本語のテキスト、한국어 문장.",
		"Numbers 1234567890 3.14159 -42 1e-9 0x1F",
		"<|endoftext|> special-looking text [INST] <<SYS>>",
		strings.Repeat("tokens merge across repeated words ", 40),
	} {
		want := engine.tokenize(t, text)
		if got := tok.Encode(text); !slices.Equal(got, want) {
			t.Errorf("%q:\ninferprobe %v\nserver     %v", text, got, want)
		}
	}
}

// promptEval matches the timing llama.cpp prints after each request: the
// time it took to evaluate the prompt, and how many tokens that was.
var promptEval = regexp.MustCompile(`prompt eval time =\s*([0-9.]+) ms /\s*(\d+) tokens`)

// TestRealEngineTTFTCoversPromptEval checks TTFT against the server's own
// measure of its prefill. The server reports no timings in its replies; it
// logs each request's prompt evaluation time. One request at a time, each
// request's TTFT must contain its prompt evaluation (the first token cannot
// come sooner) and exceed it only by the server's and the network's overhead.
func TestRealEngineTTFTCoversPromptEval(t *testing.T) {
	engine := startRealEngine(t)
	work := t.TempDir()
	const isl, requests = 1000, 8
	before := len(promptEval.FindAllStringSubmatch(engine.out.String(), -1))
	code, out := benchIn(t, work, "--model", realEngineModel, "--url", engine.url(), "--endpoint-type", "completions",
		"--streaming", "--tokenizer", requireGPT2Tokenizer(t), "--isl", strconv.Itoa(isl), "--osl", "4",
		"--extra-inputs", "min_tokens:4", "--concurrency", "1", "--request-count", strconv.Itoa(requests),
		"--progress", "off", "--artifact-dir", "out")
	if code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}
	evals := promptEval.FindAllStringSubmatch(engine.out.String(), -1)[before:]
	if len(evals) != requests {
		t.Fatalf("the server logged %d prompt evaluations, want %d", len(evals), requests)
	}
	lines := jsonlRecords(t, filepath.Join(work, "out", "profile_export.jsonl"))
	if len(lines) != requests {
		t.Fatalf("%d records, want %d", len(lines), requests)
	}
	slices.SortFunc(lines, func(a, b jsonlRecord) int { return a.Metadata.Start - b.Metadata.Start })
	var table strings.Builder
	for i, rec := range lines {
		eval, _ := strconv.ParseFloat(evals[i][1], 64)
		tokens, _ := strconv.Atoi(evals[i][2])
		ttft := rec.Metrics["time_to_first_token"].Value
		fmt.Fprintf(&table, "request %d: prompt eval %.2f ms over %d tokens, TTFT %.2f ms (+%.2f ms)\n", i, eval, tokens, ttft, ttft-eval)
		if tokens != isl {
			t.Errorf("request %d: the server evaluated %d prompt tokens, want the %d the tokenizer made", i, tokens, isl)
		}
		if ttft < eval {
			t.Errorf("request %d: TTFT %.2f ms is shorter than the server's prompt evaluation, %.2f ms", i, ttft, eval)
		}
		// Generous: the server's Python, tokenizing the prompt, sampling
		// and one SSE write take a few to a few tens of ms on a busy machine.
		if ttft > eval+100 {
			t.Errorf("request %d: TTFT %.2f ms exceeds the server's prompt evaluation, %.2f ms, by more than 100 ms", i, ttft, eval)
		}
	}
	t.Logf("TTFT against the server's prompt evaluation:\n%s", table.String())
}

type jsonlRecord struct {
	Metadata struct {
		Start int `json:"request_start_ns"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value float64 `json:"value"`
	} `json:"metrics"`
}

func jsonlRecords(t *testing.T, path string) []jsonlRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []jsonlRecord
	for line := range strings.Lines(string(b)) {
		var rec jsonlRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, rec)
	}
	return out
}

// TestRealEngineServe runs the daemon's probes against the real server:
// streamed chat counted with the tokenizer and plain completions counted by
// usage, their output pinned with min_tokens, which the server honours, and
// a streamed probe pinned with ignore_eos, which the server ignores: the
// model then ends most replies early, and the mismatch counter must say so.
func TestRealEngineServe(t *testing.T) {
	engine := startRealEngine(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`targets:
  chat:
    url: %[1]s
    model: %[2]s
    tokenizer: %[3]s
  plain:
    url: %[1]s
    endpoint: completions
    model: %[2]s
    stream: false
probes:
  chat_min_tokens:
    target: chat
    arrival: {pattern: constant, rate: 4}
    dataset: {synthetic: {input_tokens: {mean: 32}, output_tokens: {mean: 32}}}
    params: {min_tokens: 32}
  chat_ignore_eos:
    target: chat
    arrival: {pattern: constant, rate: 4}
    dataset: {synthetic: {input_tokens: {mean: 32}, output_tokens: {mean: 32}}}
    params: {ignore_eos: true}
  plain_min_tokens:
    target: plain
    arrival: {pattern: constant, rate: 4}
    dataset: {synthetic: {input_tokens: {mean: 32}, output_tokens: {mean: 32}}}
    params: {min_tokens: 32}
`, engine.url(), realEngineModel, requireGPT2Tokenizer(t))
	path := filepath.Join(dir, "scenario.yml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	serve := inferprobe(t, "inferprobe serve", dir, "serve", "--config.file="+path, "--web.listen-address="+addr, "--workers=2")
	metricsURL := "http://" + addr + "/metrics"
	waitHealthy(t, serve, metricsURL, 20*time.Second)

	const enough = 12 // requests per probe
	probes := []string{"chat_min_tokens", "chat_ignore_eos", "plain_min_tokens"}
	var fams map[string]*dto.MetricFamily
	eventually(t, 60*time.Second, fmt.Sprintf("%d successful requests per probe", enough), func() error {
		serve.checkRunning(t)
		var err error
		if fams, err = scrapeText(metricsURL); err != nil {
			return err
		}
		for _, p := range probes {
			if ok := value(fams, "inferprobe_requests_total", "scenario", p, "outcome", "ok"); ok < enough {
				return fmt.Errorf("%s: %v ok requests", p, ok)
			}
		}
		return nil
	})
	for _, p := range probes {
		if errs := value(fams, "inferprobe_requests_total", "scenario", p, "outcome", "error"); errs != 0 {
			t.Errorf("%s: %v failed requests", p, errs)
		}
	}
	for _, p := range []string{"chat_min_tokens", "plain_min_tokens"} {
		if m := value(fams, "inferprobe_output_length_mismatches_total", "scenario", p); m != 0 {
			t.Errorf("%s: %v output-length mismatches, want none: the server honours min_tokens", p, m)
		}
	}
	ok := value(fams, "inferprobe_requests_total", "scenario", "chat_ignore_eos", "outcome", "ok")
	m := value(fams, "inferprobe_output_length_mismatches_total", "scenario", "chat_ignore_eos")
	// Each reply reaches 32 tokens with probability about 0.97^32 ≈ 0.38.
	if m == 0 || m > ok {
		t.Errorf("chat_ignore_eos: %v mismatches of %v successful requests, want some: the server ignores ignore_eos and the model stops early", m, ok)
	}
	if hs := matching(fams, "inferprobe_time_to_first_token_seconds", "scenario", "chat_min_tokens"); len(hs) != 1 || hs[0].GetHistogram().GetSampleCount() == 0 {
		t.Errorf("no time to first token recorded for the streamed probe")
	}
	t.Logf("chat_ignore_eos: %v of %v replies shorter than the pinned 32 tokens", m, ok)
}

// TestRealEngineClosedLoopNoConnectErrors: a closed-loop bench of 300
// requests at concurrency 4 against the real server fails none of them on
// the connection, and the server receives exactly the requests that bench
// reports.
func TestRealEngineClosedLoopNoConnectErrors(t *testing.T) {
	engine := startRealEngine(t)
	work := t.TempDir()
	const requests = 300
	code, out := benchIn(t, work, "--model", realEngineModel, "--url", engine.url(), "--endpoint-type", "chat",
		"--streaming", "--concurrency", "4", "--request-count", strconv.Itoa(requests),
		"--isl", "64", "--osl", "16", "--extra-inputs", "min_tokens:16", "--progress", "off", "--artifact-dir", "out")
	if code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}
	errs, _ := readBenchReport(t, filepath.Join(work, "out")).extras(t)
	t.Logf("errors by reason: %v", errs)
	if errs["connect"] != 0 {
		t.Errorf("%d of %d requests failed as connect errors", errs["connect"], requests)
	}
	if !strings.Contains(out, fmt.Sprintf("%d ok, 0 errors", requests)) {
		t.Errorf("not every request succeeded:\n%s", out)
	}
	if got := engine.posts("/v1/chat/completions"); got != requests {
		t.Errorf("the server received %d requests, want the %d bench sent", got, requests)
	}
}
