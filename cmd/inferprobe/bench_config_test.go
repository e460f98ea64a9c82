package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/scenarios"
)

func TestFlagFor(t *testing.T) {
	sc, err := parseBench(t, "--model", "m", "--request-rate", "5", "--concurrency", "3", "--extra-inputs", "stream:true").scenario()
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{
		"probes.bench.arrival.rate":                          "--request-rate",
		"probes.bench.arrival.max_concurrency":               "--concurrency",
		"probes.bench.dataset.synthetic.input_tokens.stddev": "--synthetic-input-tokens-stddev",
		"probes.bench.params.stream":                         "--extra-inputs.stream",
		"targets.bench.url":                                  "--url",
	} {
		if got := sc.flagFor(field); got != want {
			t.Errorf("flagFor(%q) = %q, want %q", field, got, want)
		}
	}
}

// scenarioYAML builds bench's scenario from args and writes it out,
// failing t unless the YAML holds every string of want.
func scenarioYAML(t *testing.T, args, want []string) (*benchScenario, []byte) {
	t.Helper()
	sc, err := parseBench(t, args...).scenario()
	if err != nil {
		t.Fatal(err)
	}
	yml, err := scenarios.Marshal(sc.cfg, sc.written)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(string(yml), w) {
			t.Errorf("scenario lacks %q:\n%s", w, yml)
		}
	}
	return sc, yml
}

// checkWritten fails t unless the scenario bench built checks and, written
// out as yml, loads again.
func checkWritten(t *testing.T, sc *benchScenario, yml []byte) {
	t.Helper()
	if err := scenarios.Check(sc.cfg, "bench", sc.written); err != nil {
		t.Errorf("scenario does not check: %v\n%s", err, yml)
	}
	if _, err := scenarios.Parse(yml, "bench"); err != nil {
		t.Errorf("scenario written out does not load: %v\n%s", err, yml)
	}
}

// wantScenarioError fails t unless building bench's scenario from args
// fails with an error that says want.
func wantScenarioError(t *testing.T, args []string, want string) {
	t.Helper()
	if _, err := parseBench(t, args...).scenario(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v: error %v, want %q", args, err, want)
	}
}

// parseBench parses args as `inferprobe bench` would.
func parseBench(t *testing.T, args ...string) *benchFlags {
	t.Helper()
	app, f := benchApp()
	if _, err := app.Parse(append([]string{"bench"}, args...)); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	f.args = append([]string{"bench"}, args...)
	return f
}

// The two commands of NVIDIA's AIPerf blog post, less the program name.
var (
	blogStatic = []string{"--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--streaming", "--url", "localhost:8000",
		"--synthetic-input-tokens-mean", "128", "--synthetic-input-tokens-stddev", "0", "--output-tokens-mean", "128",
		"--output-tokens-stddev", "0", "--extra-inputs", "min_tokens:128", "--extra-inputs", "ignore_eos:true"}
	blogPoisson = []string{"--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--streaming", "--url", "localhost:8000",
		"--request-rate", "10", "--arrival-pattern", "poisson", "--synthetic-input-tokens-mean", "512",
		"--synthetic-input-tokens-stddev", "128", "--output-tokens-mean", "128", "--output-tokens-stddev", "32",
		"--random-seed", "42", "--request-count", "200"}
)

// TestBenchScenario: flags become a scenario that loads, with the fields
// AIPerf's flags mean.
func TestBenchScenario(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of the generated YAML
	}{
		{"blog static", blogStatic, []string{"url: http://localhost:8000/v1", "concurrency: 1", "ignore_eos: true", "min_tokens: 128", "mean: 128"}},
		{"blog poisson", blogPoisson, []string{"pattern: poisson", "rate: 10", "seed: 42", "stddev: 128", "stddev: 32"}},
		{"goodput", []string{"--model", "m", "--goodput", "time_to_first_token:500 inter_token_latency:50"},
			[]string{"time_to_first_token: 500ms", "inter_token_latency: 50ms"}},
		{"goodput per user and first output token", []string{"--model", "m", "--goodput", "output_token_throughput_per_user:600 time_to_first_output_token:250"},
			[]string{"output_token_throughput_per_user: 600", "time_to_first_output_token: 250ms"}},
		{"url with scheme and path", []string{"--model", "m", "--url", "https://api.example.com/openai/v1"}, []string{"url: https://api.example.com/openai/v1"}},
		{"rate and concurrency cap", []string{"--model", "m", "--request-rate", "5", "--concurrency", "3"}, []string{"max_concurrency: 3"}},
		{"trace replay", []string{"--model", "m", "--input-file", "trace.jsonl", "--custom-dataset-type", "mooncake_trace", "--fixed-schedule"},
			[]string{"format: mooncake", "timing: replay", "path: trace.jsonl"}},
		{"trace alone replays, as in AIPerf", []string{"--model", "m", "--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace"},
			[]string{"timing: replay"}},
		{"trace at a concurrency", []string{"--model", "m", "--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace", "--concurrency", "4"},
			[]string{"timing: arrival", "concurrency: 4"}},
		{"replay with a cap", []string{"--model", "m", "--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace", "--fixed-schedule", "--concurrency", "4"},
			[]string{"timing: replay", "max_concurrency: 4"}},
		{"random pool", []string{"--model", "m", "--input-file", "p.jsonl", "--custom-dataset-type", "random_pool", "--request-rate", "2"},
			[]string{"format: random_pool", "timing: arrival", "rate: 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, yml := scenarioYAML(t, tc.args, tc.want)
			if sc.cfg.Probes["bench"].Dataset.File == nil {
				checkWritten(t, sc, yml)
			}
		})
	}
}

func TestBenchSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "m", "--goodput", "ttft:5"}, `--goodput "ttft:5": want tag:value with tag one of inter_token_latency, output_token_throughput_per_user, request_latency, time_to_first_output_token, time_to_first_token`},
		{[]string{"--model", "m", "--goodput", "output_token_throughput_per_user:0"}, `"0" is not a number of tokens per second > 0`},
		{[]string{"--model", "m", "--goodput", "time_to_first_token:-1"}, "not a number of milliseconds > 0"},
		{[]string{"--model", "m", "--fixed-schedule"}, "--fixed-schedule replays the timestamps of an --input-file"},
		{[]string{"--model", "m", "--input-file", "p.jsonl", "--custom-dataset-type", "random_pool", "--fixed-schedule"}, "--fixed-schedule replays timestamps, which a random_pool does not keep"},
		{[]string{"--model", "m", "--extra-inputs", "novalue"}, "want key:value"},
	} {
		wantScenarioError(t, tc.args, tc.want)
	}
}

// TestBenchStallTimeout: the stall timeout defaults to the request timeout,
// so that a long prefill gets through, and is the target's field.
func TestBenchStallTimeout(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		stall time.Duration
	}{
		{[]string{"--request-timeout-seconds", "120"}, 120 * time.Second},
		{[]string{"--request-timeout-seconds", "120", "--stall-timeout-seconds", "45"}, 45 * time.Second},
	} {
		sc, err := parseBench(t, append([]string{"--model", "m"}, tc.args...)...).scenario()
		if err != nil {
			t.Fatal(err)
		}
		if err := scenarios.Check(sc.cfg, "bench", sc.written); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := time.Duration(sc.cfg.Targets["bench"].StallTimeout); got != tc.stall {
			t.Errorf("%v: stall timeout %v, want %v", tc.args, got, tc.stall)
		}
	}
	sc, err := parseBench(t, "--model", "m", "--request-timeout-seconds", "10", "--stall-timeout-seconds", "20").scenario()
	if err != nil {
		t.Fatal(err)
	}
	err = scenarios.Check(sc.cfg, "bench", sc.written)
	var stderr bytes.Buffer
	if sc.usage(&stderr, err); !strings.Contains(stderr.String(), "--stall-timeout-seconds: must be at most timeout (10s)") {
		t.Errorf("a stall timeout over the request timeout: %q", stderr.String())
	}
}

// TestBenchKeepAlive: --[no-]keep-alive is the target's keep_alive.
func TestBenchKeepAlive(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, true}, {[]string{"--keep-alive"}, true}, {[]string{"--no-keep-alive"}, false}} {
		sc, err := parseBench(t, append([]string{"--model", "m"}, tc.args...)...).scenario()
		if err != nil {
			t.Fatal(err)
		}
		if err := scenarios.Check(sc.cfg, "bench", sc.written); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := sc.cfg.Targets["bench"].KeepsAlive(); got != tc.want {
			t.Errorf("%v: keep-alive %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestBenchSessionHeader: --session-header names the header of a session's
// id, as AIPerf's does.
func TestBenchSessionHeader(t *testing.T) {
	sc, err := parseBench(t, "--model", "m", "--session-header", "X-Conversation").scenario()
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.cfg.Targets["bench"].SessionHeaderName(); got != "X-Conversation" || sc.flagFor("targets.bench.session_header") != "--session-header" {
		t.Errorf("session header %q from %s, want X-Conversation from --session-header", got, sc.flagFor("targets.bench.session_header"))
	}
}

func TestBenchTokenizer(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A Hugging Face cache holding Qwen/Qwen3-0.6B, read offline.
	const commit = "0123456789abcdef0123456789abcdef01234567"
	cache := t.TempDir()
	snap := filepath.Join(cache, "models--Qwen--Qwen3-0.6B", "snapshots", commit, "tokenizer.json")
	for p, data := range map[string]string{snap: "{}", filepath.Join(cache, "models--Qwen--Qwen3-0.6B", "refs", "main"): commit} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "1")
	for _, tc := range []struct {
		args   []string
		target string
		notes  int
	}{
		{[]string{"--tokenizer", file}, file, 0},                               // a local file goes to targets.bench.tokenizer
		{[]string{"--tokenizer", file, "--tokenizer-revision", "v1"}, file, 1}, // a revision does nothing to a file, and is said so
		{[]string{"--tokenizer", "Qwen/Qwen3-0.6B"}, snap, 1},                  // a model name: its file in the cache, and which
		{[]string{"--tokenizer", "builtin"}, "", 1},                            // AIPerf's tiktoken: accepted, ignored, said
	} {
		sc, err := parseBench(t, append([]string{"--model", "m"}, tc.args...)...).scenario()
		if err != nil {
			t.Fatal(err)
		}
		got := sc.cfg.Targets["bench"].Tokenizer
		if got != tc.target || len(sc.notes) != tc.notes {
			t.Errorf("%v: target tokenizer %q, notes %q; want %q and %d notes", tc.args, got, sc.notes, tc.target, tc.notes)
		}
	}
	// A path that holds no tokenizer is bad flags (exit 2), not a note.
	empty := t.TempDir()
	for _, path := range []string{filepath.Join(empty, "nope", "tokenizer.json"), empty, "./tok", "tokenizer.json", "../models/qwen"} {
		var stderr bytes.Buffer
		if code := runBench(nil, io.Discard, &stderr, parseBench(t, "--model", "m", "--url", "127.0.0.1:1", "--tokenizer", path), nil, nil); code != 2 ||
			!strings.Contains(stderr.String(), "--tokenizer "+path+": no tokenizer.json there") {
			t.Errorf("--tokenizer %s: exit %d, stderr %q; want 2 naming the flag", path, code, stderr.String())
		}
	}
}

// TestBenchTokenizerHub: a model name not in the cache is downloaded from
// the Hub (HF_ENDPOINT, here a server of the Hub's file API) into the cache,
// and the next run takes it from there; a refusal is bad flags (exit 2) and
// says what to do, no network is a run that could not start (exit 1).
func TestBenchTokenizerHub(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	tok, err := os.ReadFile(filepath.Join("..", "..", "tokenizer", "testdata", "tiny_tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		switch r.URL.Path {
		case "/Org/Tiny/resolve/main/tokenizer.json", "/Org/Tiny/resolve/v2/tokenizer.json":
			w.Header().Set("X-Repo-Commit", commit)
			_, _ = w.Write(tok)
		case "/Org/Gated/resolve/main/tokenizer.json":
			http.Error(w, "gated", http.StatusUnauthorized)
		default:
			http.Error(w, "not found", http.StatusNotFound)
		}
	}))
	defer hub.Close()
	cache := t.TempDir()
	t.Setenv("HF_ENDPOINT", hub.URL)
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_TOKEN", "")
	want := filepath.Join(cache, "models--Org--Tiny", "snapshots", commit, "tokenizer.json")
	for i, say := range []string{"downloaded its tokenizer.json from " + hub.URL, "its tokenizer.json from the Hugging Face cache"} {
		sc, err := parseBench(t, "--model", "m", "--tokenizer", "Org/Tiny").scenario()
		if err != nil {
			t.Fatal(err)
		}
		if got := sc.cfg.Targets["bench"].Tokenizer; got != want || len(sc.notes) != 1 || !strings.Contains(sc.notes[0], say) {
			t.Errorf("run %d: tokenizer %q, notes %q; want %s and a note saying %q", i+1, got, sc.notes, want, say)
		}
	}
	if len(asked) != 1 {
		t.Errorf("the Hub was asked %v; want once, the second run reading the cache", asked)
	}
	// --tokenizer-revision asks for that revision, and the artifacts say so.
	f := parseBench(t, "--model", "m", "--tokenizer", "Org/Tiny", "--tokenizer-revision", "v2")
	sc, err := f.scenario()
	if err != nil || asked[len(asked)-1] != "/Org/Tiny/resolve/v2/tokenizer.json" {
		t.Fatalf("--tokenizer-revision v2: %v, asked %v", err, asked)
	}
	if c := f.exportConfig(prober.Limit{}, prober.Limit{}, sc.cfg); c.Tokenizer != "Org/Tiny" || c.TokenizerRevision != "v2" {
		t.Errorf("artifacts' tokenizer %q revision %q; want Org/Tiny and v2, as given", c.Tokenizer, c.TokenizerRevision)
	}

	for _, tc := range []struct {
		name, model, offline string
		exit                 int
		say                  string
	}{
		{"offline, not cached", "Org/Other", "1", exitUsage, "HF_HUB_OFFLINE forbids downloading it"},
		{"no such model", "Org/Nope", "", exitUsage, "404 Not Found: check the model name"},
		{"gated", "Org/Gated", "", exitUsage, "set HF_TOKEN"},
	} {
		t.Setenv("HF_HUB_OFFLINE", tc.offline)
		var stderr bytes.Buffer
		code := runBench(nil, io.Discard, &stderr, parseBench(t, "--model", "m", "--url", "127.0.0.1:1", "--tokenizer", tc.model), nil, nil)
		if code != tc.exit || !strings.Contains(stderr.String(), "--tokenizer "+tc.model+": ") || !strings.Contains(stderr.String(), tc.say) {
			t.Errorf("%s: exit %d, stderr %q; want %d saying %q", tc.name, code, stderr.String(), tc.exit, tc.say)
		}
	}
	t.Setenv("HF_HUB_OFFLINE", "")
	hub.Close()
	var stderr bytes.Buffer
	if code := runBench(nil, io.Discard, &stderr, parseBench(t, "--model", "m", "--url", "127.0.0.1:1", "--tokenizer", "Org/Other"), nil, nil); code != exitCannotRun ||
		!strings.Contains(stderr.String(), "check the network") {
		t.Errorf("no network: exit %d, stderr %q; want %d saying to check the network", code, stderr.String(), exitCannotRun)
	}
}

// TestSaveScenarioOfSeveralURLs: a scenario's target is one server, so a
// run of several --url is not saved (rather than saved with the first only).
func TestSaveScenarioOfSeveralURLs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "burst.yml")
	f := parseBench(t, "--model", "m", "--url", "h1:8000", "h2:8000", "--save-scenario", path)
	sc, err := f.scenario()
	if err != nil {
		t.Fatal(err)
	}
	if err := saveScenario(f, sc, &finite.Plan{Limit: f.limit()}); err == nil || !strings.Contains(err.Error(), "several --url") {
		t.Errorf("saving a run of two --url: %v, want a refusal", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a scenario was written")
	}
}

// TestSaveScenario: the saved file loads as a scenario, with the run as an
// on-demand burst, and carries no secret.
func TestSaveScenario(t *testing.T) {
	t.Setenv("INFERPROBE_API_KEY", "sk-from-env")
	path := filepath.Join(t.TempDir(), "burst.yml")
	f := parseBench(t, append(blogPoisson, "--api-key", "sk-flag-secret", "-H", "Authorization: Bearer sk-header-secret",
		"--goodput", "time_to_first_token:500", "--warmup-request-count", "5", "--save-scenario", path)...)
	sc, err := f.scenario()
	if err != nil {
		t.Fatal(err)
	}
	plan := &finite.Plan{Limit: f.limit(), WarmupLimit: prober.Limit{Requests: uint64(f.warmupRequests)}}
	if err := saveScenario(f, sc, plan); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("secret")) {
		t.Errorf("saved scenario holds a secret:\n%s", b)
	}
	// The header is REDACTED, and a scenario may not set Authorization with a key.
	b = bytes.ReplaceAll(b, []byte("Authorization: REDACTED"), []byte("X-Team: sre"))
	cfg, err := scenarios.Parse(b, path)
	if err != nil {
		t.Fatalf("saved scenario does not load: %v\n%s", err, b)
	}
	burst := cfg.Bursts["bench"]
	if burst == nil || !burst.OnDemand || burst.Requests != 200 || burst.Arrival.Rate != 10 || burst.Warmup.Requests != 5 ||
		time.Duration(burst.SLO.TimeToFirstToken) != 500*time.Millisecond {
		t.Errorf("burst = %+v\n%s", burst, b)
	}
	if len(cfg.Probes) != 0 {
		t.Errorf("saved scenario has probes %v; it should hold only the run, as a burst", cfg.Probes)
	}
}

func TestBaseURL(t *testing.T) {
	for _, tc := range []struct{ raw, endpoint, want string }{
		{"localhost:8000", "chat", "http://localhost:8000/v1"},
		{"http://h:8000/", "completions", "http://h:8000/v1"},
		{"https://h/api/v2", "cohere_rerank", "https://h/api/v2"},
		{"localhost:8080", "tgi", "http://localhost:8080"},
		{"http://tei:80", "tei_rerank", "http://tei:80"},
		// Cohere's API is versioned /v2: AIPerf sends a bare host to /v2/rerank.
		{"localhost:8000", "cohere_rerank", "http://localhost:8000/v2"},
		{"http://h:8000/", "cohere_rerank", "http://h:8000/v2"},
		// A full endpoint URL, as AIPerf's docs write it, is called as written.
		{"http://localhost:8000/v1/chat/completions", "chat", "http://localhost:8000/v1"},
		{"localhost:8000/v1/completions/", "completions", "http://localhost:8000/v1"},
		{"http://h/openai/chat/completions", "chat", "http://h/openai"},
		{"http://h/chat/completions", "chat", "http://h"},
		{"http://tgi:8080/generate_stream", "tgi", "http://tgi:8080"},
		{"http://tgi:8080/generate", "tgi", "http://tgi:8080"},
		{"http://h/v2/rerank", "cohere_rerank", "http://h/v2"},
	} {
		got, err := baseURL(tc.raw, tc.endpoint)
		if err != nil || got != tc.want {
			t.Errorf("baseURL(%q, %s) = %q, %v; want %q", tc.raw, tc.endpoint, got, err, tc.want)
		}
	}
}
