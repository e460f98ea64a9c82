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

// The real engines are two llama.cpp-based OpenAI-compatible servers built
// from one llama.cpp (the one llama-cpp-python vendors): llama.cpp's own
// llama-server and llama-cpp-python's Python server. Both serve a
// random-weight llama model with GPT-2's vocabulary
// (e2e/testdata/realengine/make_model.py: it generates whole words only and
// ends a reply by itself after about 30 tokens). `make realengine` builds
// them under .cache. What each does differently is in
// docs/compatibility.md; engine records what the tests rely on.
const (
	llamaCppBuild   = ".cache/llama.cpp/build/bin" // llama-server and libllama
	realEngineVenv  = ".cache/realengine"          // llama-cpp-python and the model
	realEngineModel = "realengine"                 // the model name both serve
	gpt2Tokenizer   = "shared/data/tokenizers/gpt2/tokenizer.json"
)

// engine is one real server and what it does differently.
type engine struct {
	name string
	// start runs the server on addr, returning the URL that answers 200
	// once the model is loaded.
	start func(t *testing.T, root, model, addr string) (*process, string)
	// honours and ignores are the output-length pins ("min_tokens" or
	// "ignore_eos") that the server honours and the one it ignores.
	honours, ignores string
	streamUsage      bool // it sends usage in streams
	// tokenizePath and tokenizeField: where it tokenizes, and the body
	// field that holds the text; it answers {"tokens": [...]}.
	tokenizePath, tokenizeField string
	// legacyMaxTokens: its chat API reads only max_tokens, so bench, which
	// sends max_completion_tokens as AIPerf does, needs --use-legacy-max-tokens.
	legacyMaxTokens bool
}

var engines = []engine{
	{
		name: "llama-server",
		start: func(t *testing.T, root, model, addr string) (*process, string) {
			host, port := splitAddr(t, addr)
			// Its libraries beside it, wherever the build was made (its
			// runpath names the build's first directory).
			t.Setenv("LD_LIBRARY_PATH", filepath.Join(root, llamaCppBuild))
			p := start(t, "llama-server", t.TempDir(), filepath.Join(root, llamaCppBuild, "llama-server"),
				"--model", model, "--alias", realEngineModel, "--host", host, "--port", port,
				"--ctx-size", "4096", "--threads", "1", "--threads-batch", "1", "--seed", "2026", "--metrics")
			return p, "http://" + addr + "/health"
		},
		honours: "ignore_eos", ignores: "min_tokens", streamUsage: true,
		tokenizePath: "/tokenize", tokenizeField: "content",
	},
	{
		name: "llama-cpp-python",
		// Streams are not cut short when another request arrives (the
		// server's default does), and only the last position's logits are
		// computed, as a serving engine does.
		start: func(t *testing.T, root, model, addr string) (*process, string) {
			host, port := splitAddr(t, addr)
			t.Setenv("LLAMA_CPP_LIB_PATH", filepath.Join(root, llamaCppBuild))
			p := start(t, "llama-cpp-python server", t.TempDir(), filepath.Join(root, realEngineVenv, "bin", "python"),
				"-m", "llama_cpp.server", "--model", model, "--model_alias", realEngineModel, "--host", host, "--port", port,
				"--n_ctx", "4096", "--n_threads", "1", "--n_threads_batch", "1", "--seed", "2026",
				"--logits_all", "false", "--interrupt_requests", "false")
			return p, "http://" + addr + "/v1/models"
		},
		honours: "min_tokens", ignores: "ignore_eos",
		tokenizePath: "/extras/tokenize", tokenizeField: "input", legacyMaxTokens: true,
	},
}

// pin is the --extra-inputs value that pins the output to n tokens with the
// named parameter.
func pin(name string, n int) string {
	if name == "ignore_eos" {
		return "ignore_eos:true"
	}
	return name + ":" + strconv.Itoa(n)
}

// eachEngine runs f against each real engine, started afresh, in a subtest.
func eachEngine(t *testing.T, f func(t *testing.T, e *realEngine)) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) { f(t, startEngine(t, eng)) })
	}
}

// realEngine is a running real server.
type realEngine struct {
	*process
	engine
	addr string // host:port
}

// url is the OpenAI API base, as a target's url.
func (e *realEngine) url() string { return "http://" + e.addr + "/v1" }

// repoRoot is the repository's root directory (the tests run in e2e/).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// requireRealEngines checks that `make realengine` has built the servers
// and the model, and returns the model's path. Without them the test is
// skipped, unless INFERPROBE_E2E=1 (make test) asks for every test.
func requireRealEngines(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	model := filepath.Join(root, realEngineVenv, "model.gguf")
	for _, p := range []string{filepath.Join(root, llamaCppBuild, "llama-server"), filepath.Join(root, realEngineVenv, "bin", "python"), model} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("INFERPROBE_E2E") == "1" {
				t.Fatalf("%s is missing and INFERPROBE_E2E=1: run `make realengine` to build the real engines", p)
			}
			t.Skipf("%s is missing: run `make realengine` to build the real engines (it compiles llama.cpp, several minutes the first time). Set INFERPROBE_E2E=1 to fail instead of skipping", p)
		}
	}
	return model
}

// requireGPT2Tokenizer finds shared/data's GPT-2 tokenizer.json (the real
// engines' vocabulary) beside the repository or above it.
func requireGPT2Tokenizer(t *testing.T) string {
	t.Helper()
	dir := repoRoot(t)
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

func splitAddr(t *testing.T, addr string) (host, port string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return host, port
}

// startEngine runs the server on a free port and waits until it has loaded
// the model. One thread, as the tests share two cores with the binary under
// test; a fixed sampling seed.
func startEngine(t *testing.T, eng engine) *realEngine {
	t.Helper()
	model := requireRealEngines(t)
	addr := freeAddr(t)
	p, ready := eng.start(t, repoRoot(t), model, addr)
	waitHealthy(t, p, ready, 60*time.Second)
	return &realEngine{process: p, engine: eng, addr: addr}
}

// tokenize asks the server for its token ids of text.
func (e *realEngine) tokenize(t *testing.T, text string) []int {
	t.Helper()
	body, err := json.Marshal(map[string]string{e.tokenizeField: text})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient.Post("http://"+e.addr+e.tokenizePath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d", e.tokenizePath, resp.StatusCode)
	}
	var out struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: %v", e.tokenizePath, err)
	}
	return out.Tokens
}

// promptEval matches the timing that llama.cpp logs after each request it
// served, in both servers: the time it took to evaluate the prompt, and how
// many tokens that was.
var promptEval = regexp.MustCompile(`prompt eval time =\s*([0-9.]+) ms /\s*(\d+) tokens`)

// served counts the requests the server has served, by their timing lines.
func (e *realEngine) served() int {
	return len(promptEval.FindAllStringIndex(e.out.String(), -1))
}

// benchReport is what the tests read of a bench run's
// profile_export_aiperf.json.
type benchReport struct {
	doc map[string]json.RawMessage
}

func readBenchReport(t *testing.T, dir string) benchReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
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

// TestRealEngineBench runs bench against each real server on both of its
// generating endpoints, streamed and not, with the output length pinned by
// the parameter that server honours. Every way of counting (usage,
// tokenizer, one token per chunk) must give the pinned length exactly, and
// the prompts that the tokenizer made exact must be exactly as long for
// the server.
func TestRealEngineBench(t *testing.T) {
	tok := requireGPT2Tokenizer(t)
	const isl, osl, requests = 64, 24, 6
	eachEngine(t, func(t *testing.T, e *realEngine) {
		runs := 0
		for _, endpoint := range []string{"chat", "completions"} {
			for _, tc := range []struct{ stream, tokenizer bool }{{true, true}, {true, false}, {false, true}} {
				usage := !tc.stream || e.streamUsage
				counts := "usage"
				switch {
				case !usage && tc.tokenizer:
					counts = "tokenizer"
				case !usage:
					counts = "chunks"
				}
				t.Run(fmt.Sprintf("%s/stream=%v/tokenizer=%v", endpoint, tc.stream, tc.tokenizer), func(t *testing.T) {
					work := t.TempDir()
					args := []string{"--model", realEngineModel, "--url", e.url(), "--endpoint-type", endpoint,
						"--isl", strconv.Itoa(isl), "--osl", strconv.Itoa(osl), "--extra-inputs", pin(e.honours, osl),
						"--request-count", strconv.Itoa(requests), "--progress", "off", "--artifact-dir", "out"}
					if tc.stream {
						args = append(args, "--streaming")
					}
					if endpoint == "chat" && e.legacyMaxTokens {
						args = append(args, "--use-legacy-max-tokens")
					}
					if tc.tokenizer {
						args = append(args, "--tokenizer", tok)
					}
					runs++
					code, out := benchIn(t, work, args...)
					if code != 0 || !strings.Contains(out, fmt.Sprintf("%d ok, 0 errors", requests)) {
						t.Fatalf("bench exited %d, want every request to succeed:\n%s", code, out)
					}
					r := readBenchReport(t, filepath.Join(work, "out"))
					if _, got := r.extras(t); !strings.HasPrefix(got, counts) {
						t.Errorf("token counts from %q, want %s", got, counts)
					}
					if s, _ := r.stats("output_sequence_length"); s.Min != osl || s.Max != osl {
						t.Errorf("output lengths %v..%v, want exactly the pinned %d", s.Min, s.Max, osl)
					}
					// input_sequence_length is the client's count, as in AIPerf:
					// the tokenizer's exact one. The server's (usage) count of a
					// chat prompt includes its chat template's tokens.
					if s, _ := r.stats("input_sequence_length"); s.Min != isl || s.Max != isl {
						t.Errorf("input lengths %v..%v: want the tokenizer's exact %d", s.Min, s.Max, isl)
					}
					if s, ok := r.stats("usage_prompt_tokens"); usage && (!ok || s.Min != s.Max || (endpoint == "chat") != (s.Min > isl) || s.Min < isl) {
						t.Errorf("usage prompt tokens %+v (reported: %v): want one length, %d or more with chat's template", s, ok, isl)
					}
					if _, ok := r.stats("time_to_first_token"); ok != tc.stream {
						t.Errorf("time to first token reported: %v, want it exactly for streams", ok)
					}
					if s, ok := r.stats("inter_token_latency"); tc.stream && (!ok || s.Min <= 0) {
						t.Errorf("inter-token latency %+v (reported: %v), want a positive one for every stream", s, ok)
					}
				})
			}
		}
		if got, want := e.served(), runs*requests; got != want {
			t.Errorf("the server served %d requests, want %d", got, want)
		}
	})
}

// TestRealEngineTokenizerMatchesServer: inferprobe's tokenizer, loaded from
// shared/data's GPT-2 tokenizer.json, gives each server's token ids on every
// kind of text.
func TestRealEngineTokenizerMatchesServer(t *testing.T) {
	tok, err := tokenizer.Load(requireGPT2Tokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"The quick brown fox jumps over the lazy dog.",
		"It's what we'd've done, isn't it? They're here; you'll see.",
		"func main() {\n\tfmt.Println(\"hello, world\") // 42\n}\n",
		"    four spaces, then a tab\t\tand   runs   of   spaces  \n\n\n",
		"Café naïve résumé façade Ærøskøbing Straße",
		"Emoji: 🚀🔥👍🏽 and a family 👨‍👩‍👧",
		"中文分词测试，日本語のテキスト、한국어 문장.",
		"Numbers 1234567890 3.14159 -42 1e-9 0x1F",
		"[INST] <<SYS>> look-alikes of template text </s>",
		strings.Repeat("tokens merge across repeated words ", 40),
	}
	eachEngine(t, func(t *testing.T, e *realEngine) {
		for _, text := range texts {
			want := e.tokenize(t, text)
			if got := tok.Encode(text); !slices.Equal(got, want) {
				t.Errorf("%q:\ninferprobe %v\nserver     %v", text, got, want)
			}
		}
	})
}

// TestRealEngineTTFTCoversPromptEval checks TTFT against each server's own
// measure of its prefill, the prompt evaluation time that llama.cpp logs
// after each request (llama-server also returns it in `timings`;
// llama-cpp-python does not). One request at a time, each request's TTFT
// must contain its prompt evaluation (the first token cannot come sooner)
// and exceed it only by the server's and the network's overhead.
func TestRealEngineTTFTCoversPromptEval(t *testing.T) {
	tok := requireGPT2Tokenizer(t)
	const isl, requests = 1000, 8
	eachEngine(t, func(t *testing.T, e *realEngine) {
		work := t.TempDir()
		before := e.served()
		code, out := benchIn(t, work, "--model", realEngineModel, "--url", e.url(), "--endpoint-type", "completions",
			"--streaming", "--tokenizer", tok, "--isl", strconv.Itoa(isl), "--osl", "4",
			"--extra-inputs", pin(e.honours, 4), "--concurrency", "1", "--request-count", strconv.Itoa(requests),
			"--progress", "off", "--artifact-dir", "out")
		if code != 0 {
			t.Fatalf("bench exited %d:\n%s", code, out)
		}
		evals := promptEval.FindAllStringSubmatch(e.out.String(), -1)[before:]
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
			ttft, _ := rec.Metrics["time_to_first_token"].Value.(float64)
			fmt.Fprintf(&table, "request %d: prompt eval %.2f ms over %d tokens, TTFT %.2f ms (+%.2f ms)\n", i, eval, tokens, ttft, ttft-eval)
			if tokens != isl {
				t.Errorf("request %d: the server evaluated %d prompt tokens, want the %d the tokenizer made", i, tokens, isl)
			}
			if ttft < eval {
				t.Errorf("request %d: TTFT %.2f ms is shorter than the server's prompt evaluation, %.2f ms", i, ttft, eval)
			}
			// Generous: tokenizing the prompt, sampling and one write take
			// a few to a few tens of ms on a busy machine.
			if ttft > eval+100 {
				t.Errorf("request %d: TTFT %.2f ms exceeds the server's prompt evaluation, %.2f ms, by more than 100 ms", i, ttft, eval)
			}
		}
		t.Logf("TTFT against the server's prompt evaluation:\n%s", table.String())
	})
}

type jsonlRecord struct {
	Metadata struct {
		Start int `json:"request_start_ns"`
	} `json:"metadata"`
	// Values are numbers but for inter_chunk_latency, a list.
	Metrics map[string]struct {
		Value any `json:"value"`
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

// TestRealEngineServe runs the daemon's probes against each real server:
// streamed chat counted with the tokenizer where the server sends no usage,
// and plain completions counted by usage, their output pinned with the
// parameter the server honours, and a streamed probe pinned with the one it
// ignores: the model then ends most replies early, and the mismatch counter
// must say so.
func TestRealEngineServe(t *testing.T) {
	tok := requireGPT2Tokenizer(t)
	eachEngine(t, func(t *testing.T, e *realEngine) {
		dir := t.TempDir()
		params := func(name string) string {
			if name == "ignore_eos" {
				return "{ignore_eos: true}"
			}
			return "{" + name + ": 32}"
		}
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
  chat_honoured:
    target: chat
    arrival: {pattern: constant, rate: 4}
    dataset: {synthetic: {input_tokens: {mean: 32}, output_tokens: {mean: 32}}}
    params: %[4]s
  chat_ignored:
    target: chat
    arrival: {pattern: constant, rate: 4}
    dataset: {synthetic: {input_tokens: {mean: 32}, output_tokens: {mean: 32}}}
    params: %[5]s
  plain_honoured:
    target: plain
    arrival: {pattern: constant, rate: 4}
    dataset: {synthetic: {input_tokens: {mean: 32}, output_tokens: {mean: 32}}}
    params: %[4]s
`, e.url(), realEngineModel, tok, params(e.honours), params(e.ignores))
		path := filepath.Join(dir, "scenario.yml")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		addr := freeAddr(t)
		serve := inferprobe(t, "inferprobe serve", dir, "serve", "--config.file="+path, "--web.listen-address="+addr, "--workers=2")
		metricsURL := "http://" + addr + "/metrics"
		waitHealthy(t, serve, metricsURL, 20*time.Second)

		const enough = 12 // requests per probe
		probes := []string{"chat_honoured", "chat_ignored", "plain_honoured"}
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
				t.Errorf("%s: %v failed requests (by reason: %v)", p, errs, errorReasons(fams, p))
			}
		}
		for _, p := range []string{"chat_honoured", "plain_honoured"} {
			if m := value(fams, "inferprobe_output_length_mismatches_total", "scenario", p); m != 0 {
				t.Errorf("%s: %v output-length mismatches, want none: the server honours %s", p, m, e.honours)
			}
		}
		ok := value(fams, "inferprobe_requests_total", "scenario", "chat_ignored", "outcome", "ok")
		m := value(fams, "inferprobe_output_length_mismatches_total", "scenario", "chat_ignored")
		// Each reply reaches 32 tokens with probability about 0.97^32 ≈ 0.38.
		if m == 0 || m > ok {
			t.Errorf("chat_ignored: %v mismatches of %v successful requests, want some: the server ignores %s and the model stops early", m, ok, e.ignores)
		}
		if hs := matching(fams, "inferprobe_time_to_first_token_seconds", "scenario", "chat_honoured"); len(hs) != 1 || hs[0].GetHistogram().GetSampleCount() == 0 {
			t.Errorf("no time to first token recorded for the streamed probe")
		}
		t.Logf("%s ignored: %v of %v replies shorter than the pinned 32 tokens", e.ignores, m, ok)
	})
}

// errorReasons counts a probe's failed requests by reason.
func errorReasons(fams map[string]*dto.MetricFamily, probe string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range matching(fams, "inferprobe_request_errors_total", "scenario", probe) {
		for _, l := range m.GetLabel() {
			if l.GetName() == "reason" && m.GetCounter().GetValue() > 0 {
				out[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// TestRealEngineClosedLoopNoConnectErrors: a closed-loop bench of 300
// requests at concurrency 4 against each real server fails none of them on
// the connection, and the server serves exactly the requests bench sent —
// llama-server too, which closes the connection after every stream while
// advertising keep-alive: inferprobe stops reusing connections to it once
// it has seen it close one (docs/faults.md).
func TestRealEngineClosedLoopNoConnectErrors(t *testing.T) {
	const requests = 300
	eachEngine(t, func(t *testing.T, e *realEngine) {
		work := t.TempDir()
		code, out := benchIn(t, work, "--model", realEngineModel, "--url", e.url(), "--endpoint-type", "chat",
			"--streaming", "--concurrency", "4", "--request-count", strconv.Itoa(requests),
			"--isl", "64", "--osl", "16", "--extra-inputs", pin(e.honours, 16), "--progress", "off", "--artifact-dir", "out")
		if code != 0 {
			t.Fatalf("bench exited %d:\n%s", code, out)
		}
		report := readBenchReport(t, filepath.Join(work, "out"))
		errs, _ := report.extras(t)
		var conns struct {
			Retries  int `json:"connection_retries"`
			Withheld int `json:"keep_alive_withheld"`
		}
		if err := json.Unmarshal(report.doc["inferprobe"], &conns); err != nil {
			t.Fatal(err)
		}
		t.Logf("errors by reason: %v; %d sent again on a fresh connection, %d on a connection of their own; the server served %d",
			errs, conns.Retries, conns.Withheld, e.served())
		failed := 0
		for reason, n := range errs {
			failed += n
			t.Errorf("%d requests failed as %s; want none", n, reason)
		}
		// A failed request never reached the server, and none reached it twice.
		if got := e.served(); got != requests-failed {
			t.Errorf("the server served %d requests, want the %d that succeeded of the %d bench sent", got, requests-failed, requests)
		}
	})
}

// TestRealEngineSearch: a capacity search against each real server ends,
// stays within its bounds and is monotone: under an SLA no step breaks,
// the monotonic style doubles from --concurrency-min to --concurrency-max,
// measuring each concurrency twice, and every step agrees with the rest.
func TestRealEngineSearch(t *testing.T) {
	const requests = 4
	eachEngine(t, func(t *testing.T, e *realEngine) {
		work := t.TempDir()
		args := []string{"--model", realEngineModel, "--url", e.url(), "--endpoint-type", "chat", "--streaming",
			"--isl", "32", "--osl", "8", "--extra-inputs", pin(e.honours, 8), "--request-count", strconv.Itoa(requests),
			"--search-recipe", "max-concurrency-under-sla", "--search-style", "monotonic", "--e2e-sla-ms", "600000",
			"--concurrency-max", "4", "--progress", "off", "--artifact-dir", "out"}
		if e.legacyMaxTokens {
			args = append(args, "--use-legacy-max-tokens")
		}
		code, out := benchIn(t, work, args...)
		if code != 0 {
			t.Fatalf("bench exited %d:\n%s", code, out)
		}
		var history struct {
			Iterations []struct {
				Values       map[string]int `json:"variation_values"`
				Feasible     bool
				NonMonotonic bool `json:"non_monotonic_warning"`
			}
			Boundary struct {
				FeasibleMax struct{ Value int } `json:"feasible_max"`
			} `json:"boundary_summary"`
			Reason string `json:"convergence_reason"`
		}
		b, err := os.ReadFile(filepath.Join(work, "out", "search_history.json"))
		if err == nil {
			err = json.Unmarshal(b, &history)
		}
		if err != nil {
			t.Fatal(err)
		}
		var steps []int
		for _, it := range history.Iterations {
			steps = append(steps, it.Values["phases.profiling.concurrency"])
			if !it.Feasible || it.NonMonotonic {
				t.Errorf("step at concurrency %d: feasible %v, non-monotonic %v", steps[len(steps)-1], it.Feasible, it.NonMonotonic)
			}
		}
		if want := []int{1, 1, 2, 2, 4, 4}; !slices.Equal(steps, want) || history.Reason != "monotonic_no_failure_in_range" || history.Boundary.FeasibleMax.Value != 4 {
			t.Errorf("steps %v ending %q at %d; want %v ending monotonic_no_failure_in_range at 4", steps, history.Reason, history.Boundary.FeasibleMax.Value, want)
		}
		if got, want := e.served(), len(steps)*requests; got != want {
			t.Errorf("the server served %d requests, want %d", got, want)
		}
	})
}
