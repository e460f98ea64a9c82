package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// aiperfCommands are AIPerf 0.13 command lines, each with the simulator's
// address for {url}; bench runs each with only the program name changed.
// want is the number of requests that must succeed, and say is text the
// output must hold (a note, an artifact directory). The first two are
// AIPerf's two usual runs: a streaming chat profile and a trace replayed
// on its fixed schedule.
var aiperfCommands = []struct {
	name, command string
	want          int
	say           string
}{
	{"chat streaming profile", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --streaming --url {url} --synthetic-input-tokens-mean 128 --synthetic-input-tokens-stddev 0 --output-tokens-mean 32 --output-tokens-stddev 0 --extra-inputs min_tokens:32 --extra-inputs ignore_eos:true --concurrency 4 --request-count 20 --warmup-request-count 4 --tokenizer Qwen/Qwen3-0.6B`, 20, "--tokenizer Qwen/Qwen3-0.6B: downloaded its tokenizer.json"},
	{"trace fixed schedule", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --streaming --url {url} --input-file trace.jsonl --custom-dataset-type mooncake_trace --fixed-schedule --output-artifact-dir out/trace`, 10, "Artifacts: out/trace"},
	// Endpoint: names, aliases, spellings.
	{"model-names and short names", `aiperf profile --model-names Qwen/Qwen3-0.6B -u {url} --num-requests 6`, 6, ""},
	{"-m", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --request-count 5 --streaming`, 5, ""},
	{"completions", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --endpoint-type completions --streaming --request-count 5 --osl 16`, 5, ""},
	{"full endpoint URL", `aiperf profile -m Qwen/Qwen3-0.6B --url http://{url}/v1/chat/completions --endpoint-type chat --streaming --request-count 5`, 5, ""},
	{"custom endpoint", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --endpoint-type chat --custom-endpoint /v1/chat/completions --request-count 5`, 5, ""},
	{"embeddings, streaming turned off", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --endpoint-type embeddings --streaming --request-count 5`, 5, "--streaming is off: endpoint type embeddings does not stream"},
	{"nim-embeddings", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --endpoint-type nim-embeddings --request-count 5`, 5, ""},
	{"nim-rankings", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --endpoint-type nim-rankings --request-count 5`, 5, ""},
	{"cohere-rankings", `aiperf profile -m Qwen/Qwen3-0.6B --url {url}/v2 --endpoint-type cohere-rankings --request-count 5`, 5, ""},
	{"cohere-rankings, bare host: /v2/rerank as AIPerf", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --endpoint-type cohere-rankings --request-count 5`, 5, ""},
	{"hf-tei-rankings", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --endpoint-type hf-tei-rankings --request-count 5`, 5, ""},
	{"huggingface-generate", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --endpoint-type huggingface-generate --streaming --request-count 5 --osl 16`, 5, ""},
	{"use-server-token-count, connection reuse", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --use-server-token-count --connection-reuse-strategy never --request-count 5`, 5, ""},
	// Input: JSON and list forms, headers, datasets.
	{"extra-inputs JSON", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --extra-inputs '{"temperature": 0.7, "top_p": 0.9, "ignore_eos": true}' --request-count 5`, 5, ""},
	{"extra-inputs several values", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --extra-inputs temperature:0.7 top_p:0.9 ignore_eos:true --request-count 5`, 5, ""},
	{"headers", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --header X-Team:sre -H '{"X-Run": "e2e"}' --request-count 5`, 5, ""},
	{"single-turn file", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --input-file prompts.jsonl --custom-dataset-type single-turn --request-count 4`, 4, ""},
	{"random-pool", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --input-file prompts.jsonl --custom-dataset-type random_pool --request-count 7 --random-seed 42`, 7, ""},
	{"trace replayed without --fixed-schedule", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --input-file trace.jsonl --custom-dataset-type mooncake-trace`, 10, ""},
	{"trace detected without its type", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --input-file trace.jsonl`, 10, "concurrency1"},
	{"trace at a load", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --input-file trace.jsonl --custom-dataset-type mooncake-trace --no-fixed-schedule --concurrency 2`, 10, ""},
	// Sequence lengths, every spelling.
	{"isl/osl", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --isl 64 --isl-stddev 8 --osl 16 --osl-stddev 4 --request-count 5`, 5, ""},
	{"prompt-input/output-tokens", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --prompt-input-tokens-mean 64 --prompt-input-tokens-stddev 8 --prompt-output-tokens-mean 16 --prompt-output-tokens-stddev 4 --request-count 5`, 5, ""},
	{"sequence distribution (AIPerf's tutorial)", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --seq-dist "64|10,32|8:70;256|40,128|20:20;1024|100,512|50:10" --request-count 10`, 10, ""},
	{"random range ratio", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --isl 100 --osl 16 --random-range-ratio 0.5 --request-count 5`, 5, ""},
	{"user context without entries", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --shared-system-prompt-length 20 --user-context-prompt-length 10 --request-count 3`, 3, ""},
	// Load generator and warmup.
	{"request rate, request-rate-mode", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --request-rate 50 --request-rate-mode constant --num-requests 10 --osl 16`, 10, ""},
	{"gamma, vllm-burstiness, capped", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --request-rate 50 --arrival-pattern gamma --vllm-burstiness 2 --concurrency 2 --request-count 10 --osl 16`, 10, ""},
	{"request-rate series", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --request-rate-series series.json --request-rate-mode constant --request-count 10 --osl 16`, 10, ""},
	{"user-centric rate", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --user-centric-rate 20 --num-users 2 --session-turns-mean 2 --request-count 5 --osl 16`, 5, ""},
	{"prefill concurrency, ramped, the warmup's own", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --concurrency 4 --prefill-concurrency 2 --prefill-concurrency-ramp-duration 0.2 --warmup-request-count 2 --warmup-prefill-concurrency 1 --request-count 8 --osl 16`, 8, ""},
	{"benchmark duration", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --concurrency 2 --benchmark-duration 1 --osl 16`, 1, ""},
	{"num-warmup-requests", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --num-warmup-requests 3 --request-count 5`, 5, ""},
	{"warmup at its own rate", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --concurrency 2 --warmup-request-count 4 --warmup-request-rate 50 --warmup-arrival-pattern constant --warmup-concurrency 4 --request-count 5 --osl 16`, 5, ""},
	{"warmup sessions, duration and grace", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --num-warmup-sessions 2 --conversation-turn-mean 2 --warmup-duration 1 --warmup-grace-period 0.5 --warmup-concurrency 2 --warmup-concurrency-ramp-duration 0.2 --request-count 6 --osl 16`, 6, ""},
	// Goodput, both forms.
	{"goodput quoted", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --goodput "time_to_first_token:500 inter_token_latency:50" --request-count 5`, 5, "Goodput"},
	{"goodput several values", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --goodput time_to_first_token:500 request_latency:5000 --request-count 5`, 5, "Goodput"},
	// Service, UI, GPU telemetry, workers.
	{"log level, UI", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --log-level WARNING --ui-type none --request-count 5`, 5, ""},
	{"verbose, simple UI", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming -v --ui simple --request-count 5`, 5, ""},
	{"GPU telemetry off, workers", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --no-gpu-telemetry --no-server-metrics --workers-max 2 --request-count 5`, 5, ""},
	{"GPU telemetry", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --gpu-telemetry --request-count 5`, 5, ""},
	// Multi-run: the runs, then the aggregate across them.
	{"num-profile-runs", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --num-profile-runs 2 --profile-run-cooldown-seconds 0.1 --confidence-level 0.9 --request-count 5 --output-artifact-dir out/multi`, 5, "Aggregate: out/multi/aggregate"},
	{"num-profile-runs over a sweep", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --concurrency 1,2 --num-profile-runs 2 --parameter-sweep-mode independent --request-count 5 --output-artifact-dir out/msweep`, 5, "Sweep summary: out/msweep/sweep_aggregate"},
	// Accepted options that change nothing here, each noted.
	{"no-ops", `aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --url-strategy round-robin --export-level records --request-count 5`, 5, "--url-strategy is an AIPerf option that changes nothing here"},
}

// aiperfRefusals are AIPerf 0.13 command lines that bench cannot run: each
// must be refused with exit status 2 and one line saying why.
var aiperfRefusals = []struct{ command, say string }{
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --public-dataset sharegpt`, "--public-dataset is an AIPerf option that inferprobe does not support: inferprobe downloads no datasets"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --concurrency 1,2 --num-profile-runs 3 --parameter-sweep-cooldown-seconds 5`, "--parameter-sweep-cooldown-seconds is an AIPerf option that inferprobe does not support"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --warmup-request-count 3 --warmup-grace-period 1`, "--warmup-grace-period applies to a --warmup-duration warmup"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --num-users 3`, "--num-users requires --user-centric-rate. Pass --user-centric-rate to enable user-centric mode"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --prefill-concurrency 2`, "Phase 'profiling': prefill_concurrency must be <= concurrency"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --reset-kv-cache`, "--reset-kv-cache is an AIPerf option that inferprobe does not support"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --endpoint-type image-generation`, "--endpoint-type image-generation is an AIPerf endpoint type that inferprobe does not support"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --input-file trace.jsonl --custom-dataset-type bailian-trace`, "--custom-dataset-type bailian-trace is an AIPerf dataset type that inferprobe does not support"},
}

// TestBenchAIPerfCommandLines runs AIPerf command lines as bench commands
// against the simulator.
func TestBenchAIPerfCommandLines(t *testing.T) {
	url := startBlogSimulator(t)
	work := t.TempDir()
	// --tokenizer Qwen/Qwen3-0.6B comes from a Hub of our own, into a
	// cache of the test's.
	hub, _ := fakeHub(t)
	t.Setenv("HF_ENDPOINT", hub.URL)
	t.Setenv("HF_HUB_CACHE", filepath.Join(work, "hf"))
	t.Setenv("HF_HUB_OFFLINE", "")
	var trace, prompts strings.Builder
	for i := range 10 { // one request every 50 ms
		fmt.Fprintf(&trace, `{"timestamp": %d, "input_length": %d, "output_length": 8, "hash_ids": [%d]}`+"\n", 50*i, 64+i, i%3)
		fmt.Fprintf(&prompts, `{"text": "prompt number %d about the sea", "output_length": 8}`+"\n", i)
	}
	series := `{"points": [{"time_s": 0, "qps": 20}, {"time_s": 0.5, "qps": 60}]}`
	for name, s := range map[string]string{"trace.jsonl": trace.String(), "prompts.jsonl": prompts.String(), "series.json": series} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	okLine := regexp.MustCompile(`(\d+) ok, 0 errors`)
	for _, tc := range aiperfCommands {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runAIPerfCommand(t, work, tc.command, url)
			m := okLine.FindStringSubmatch(out)
			if code != 0 || m == nil {
				t.Fatalf("exit %d, want 0 and no errors:\n%s", code, out)
			}
			if n := atoi(m[1]); n < tc.want || tc.name != "benchmark duration" && n != tc.want {
				t.Errorf("%s requests succeeded, want %d:\n%s", m[1], tc.want, out)
			}
			if !strings.Contains(out, tc.say) {
				t.Errorf("output lacks %q:\n%s", tc.say, out)
			}
		})
	}
	if len(aiperfCommands) < 25 {
		t.Errorf("%d command lines, want at least 25", len(aiperfCommands))
	}
	for _, tc := range aiperfRefusals {
		code, out := runAIPerfCommand(t, work, tc.command, url)
		if code != 2 || strings.Count(strings.TrimSpace(out), "\n") > 0 || !strings.Contains(out, tc.say) {
			t.Errorf("%s: exit %d, output %q; want exit 2 and one line with %q", tc.command, code, out, tc.say)
		}
	}
}

// runAIPerfCommand runs an AIPerf command line as bench in dir: only the
// program name changes, and {url} becomes the simulator's address.
func runAIPerfCommand(t *testing.T, dir, command, url string) (int, string) {
	t.Helper()
	args, ok := strings.CutPrefix(strings.ReplaceAll(command, "{url}", url), "aiperf profile ")
	if !ok {
		t.Fatalf("%q is not an aiperf profile command", command)
	}
	p := inferprobe(t, "inferprobe bench", dir, append([]string{"bench"}, shellWords(t, args)...)...)
	code := p.exitCode(t, 60*time.Second)
	return code, p.out.String()
}

// shellWords splits a command line as a POSIX shell would, for the quoting
// the commands above use: words separated by spaces, '…' and "…" quoted.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var word strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unclosed quote in %q", s)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}
