package e2e

import (
	"fmt"
	"maps"
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
	// AIPerf 0.13's README and tutorials (docs/tutorials/NAME.md), as
	// written: those that add to the lines above (docs/testing.md counts
	// them all).
	{"README.md basic usage", `aiperf profile --model "granite4:350m" --streaming --endpoint-type chat --tokenizer ibm-granite/granite-4.0-micro --url http://{url} --request-count 10`, 10, ""},
	{"README.md custom configuration", `aiperf profile --model "granite4:350m" --streaming --endpoint-type chat --tokenizer ibm-granite/granite-4.0-micro --url http://{url} --concurrency 5 --request-count 10`, 10, ""},
	{"tutorial.md", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --endpoint /v1/chat/completions --streaming --request-rate 32 --request-count 64 --url {url}`, 64, ""},
	{"request-rate-concurrency poisson", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --endpoint /v1/chat/completions --streaming --url {url} --concurrency 100 --request-rate 200 --request-rate-mode poisson --random-seed 42 --request-count 500 --synthetic-input-tokens-mean 500 --output-tokens-mean 200`, 500, ""},
	{"ramping concurrency", `aiperf profile --model your-model --url {url} --concurrency 100 --concurrency-ramp-duration 30 --request-count 1000`, 1000, ""},
	{"fixed-schedule auto offset", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --endpoint /v1/chat/completions --streaming --url {url} --input-file precise_schedule.jsonl --custom-dataset-type mooncake_trace --fixed-schedule --fixed-schedule-auto-offset`, 10, ""},
	{"fixed-schedule window", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --endpoint /v1/chat/completions --streaming --url {url} --input-file precise_schedule.jsonl --custom-dataset-type mooncake_trace --fixed-schedule --fixed-schedule-start-offset 2000 --fixed-schedule-end-offset 4000`, 4, ""},
	{"openai-text-endpoints completions file", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type completions --endpoint /v1/completions --input-file inputs.jsonl --custom-dataset-type single_turn --url {url} --request-count 10`, 10, ""},
	{"sequence-distributions", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --endpoint /v1/chat/completions --streaming --url {url} --sequence-distribution "64|10,32|8:70;256|40,128|20:20;1024|100,512|50:10"`, 10, ""},
	{"multi-turn fixed length", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --endpoint /v1/chat/completions --streaming --url {url} --conversation-num 10 --conversation-turn-mean 3 --conversation-turn-stddev 0 --synthetic-input-tokens-mean 200 --output-tokens-mean 150 --concurrency 2 --random-seed 42`, 30, ""},
	{"multi-turn at a request rate", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --endpoint /v1/chat/completions --streaming --url {url} --conversation-num 30 --conversation-turn-mean 4 --request-rate 5 --request-rate-mode poisson --synthetic-input-tokens-mean 200 --output-tokens-mean 150 --random-seed 42`, 120, ""},
	{"embeddings file", `aiperf profile --model BAAI/bge-small-en-v1.5 --endpoint-type embeddings --endpoint /v1/embeddings --input-file inputs.jsonl --custom-dataset-type single_turn --url {url} --request-count 5`, 5, ""},
	{"rankings hf_tei_rankings", `aiperf profile -m BAAI/bge-reranker-base --endpoint-type hf_tei_rankings --url {url} --request-count 10 --rankings-passages-mean 5 --rankings-passages-stddev 1 --rankings-passages-prompt-token-mean 32 --rankings-passages-prompt-token-stddev 8 --rankings-query-prompt-token-mean 16 --rankings-query-prompt-token-stddev 4`, 10, ""},
	{"rankings cohere_rankings file", `aiperf profile -m BAAI/bge-reranker-v2-m3 --endpoint-type cohere_rankings --url {url} --input-file ./rankings.jsonl --custom-dataset-type single_turn --request-count 10`, 10, ""},
	{"huggingface-tgi streaming file", `aiperf profile -m TinyLlama/TinyLlama-1.1B-Chat-v1.0 --endpoint-type huggingface_generate --url {url} --input-file ./inputs.jsonl --custom-dataset-type single_turn --streaming --request-count 10`, 10, ""},
	{"multi-run-confidence", `aiperf profile --model llama-3-8b --endpoint-type chat --url http://{url}/v1/chat/completions --num-profile-runs 5 --confidence-level 0.99 --concurrency 10 --num-prompts 1000`, 10, "Aggregate: "},
	{"custom-dataset random_pool", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --input-file pool.jsonl --custom-dataset-type random_pool --num-conversations 50 --streaming --concurrency 4 --random-seed 42 --url {url}`, 50, ""},
	// The system turn is each request's system message, not a request.
	{"custom-dataset system turn", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --input-file system_prompt.jsonl --custom-dataset-type multi_turn --streaming --url {url} --concurrency 2 --request-count 10`, 10, ""},
	{"custom-dataset system prompt file", `aiperf profile -m Qwen/Qwen3-0.6B --url http://{url} --input-file ./data.jsonl --system-prompt-file ./prod_system.txt`, 10, ""},
	{"openai-responses", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type responses --endpoint /v1/responses --streaming --synthetic-input-tokens-mean 100 --synthetic-input-tokens-stddev 0 --output-tokens-mean 200 --output-tokens-stddev 0 --url {url} --request-count 20`, 20, ""},
	// The template endpoint tutorial's lines, with bodies the simulator
	// serves: its /generate line without --streaming (chat_template.json is
	// a TGI body; the simulator's /generate replies in one JSON body, which
	// bench with --streaming counts an error), and its first line's inline template at /v1/completions
	// instead of /custom-endpoint, with the response_field bench needs.
	{"template file", `aiperf profile --model custom-llm --url http://{url}/generate --endpoint-type template --extra-inputs payload_template:./chat_template.json --extra-inputs response_field:'generated_text' --synthetic-input-tokens-mean 200 --output-tokens-mean 100 --concurrency 10`, 10, ""},
	{"template inline", `aiperf profile --model your-model --url http://{url}/v1/completions --endpoint-type template --extra-inputs payload_template:'{"prompt": {{ text|tojson }}, "model": {{ model|tojson }}, "max_tokens": {{ max_tokens|tojson }}}' --extra-inputs response_field:'choices[0].text' --synthetic-input-tokens-mean 100 --output-tokens-mean 50 --concurrency 4 --request-count 20`, 20, ""},
	// Its two servers are one simulator under two spellings here;
	// TestAIPerfSideBySideURLs compares the share each of two gets.
	{"multi-url-load-balancing", `aiperf profile --model llama --url http://{url} --url {url} --request-rate 20 --request-count 100`, 100, ""},
	// 10, not the tutorial's 5/5: AIPerf 0.13 cycles the five untimed
	// entries to its default request count too.
	{"custom-prompt-benchmarking", `aiperf profile --model Qwen/Qwen3-0.6B --endpoint-type chat --endpoint /v1/chat/completions --streaming --url {url} --input-file production_queries.jsonl --custom-dataset-type mooncake_trace --concurrency 2 --warmup-request-count 1`, 10, ""},
}

// tutorialFiles are the input files AIPerf's tutorials write before their
// command lines, as they write them (inputs.jsonl: the text endpoints'
// tutorial's), and three it names without giving (data.jsonl,
// prod_system.txt, chat_template.json: here a TGI body).
var tutorialFiles = map[string]string{
	"chat_template.json": `{"inputs": {{ text|tojson }}, "parameters": {"max_new_tokens": {{ max_tokens|tojson }}}}`,
	"pool.jsonl": `{"text": "What is machine learning?"}
{"text": "Explain neural networks."}
{"text": "How does backpropagation work?"}
{"text": "What are transformers?"}
{"text": "Define reinforcement learning."}
{"text": "What is transfer learning?"}
{"text": "Explain gradient descent."}
{"text": "What are GANs?"}
`,
	"system_prompt.jsonl": `{"session_id": "chat_1", "turns": [{"role": "system", "text": "You are a terse assistant. Answer in one sentence."}, {"text": "What is machine learning?"}, {"text": "Give me an example."}]}
`,
	"data.jsonl": `{"text": "What is machine learning?"}
{"text": "Explain neural networks."}
`,
	"prod_system.txt": "You are the support desk's assistant.\n",
	"precise_schedule.jsonl": `{"timestamp": 0, "input_length": 100, "hash_ids": [3001]}
{"timestamp": 500, "input_length": 200, "hash_ids": [3002]}
{"timestamp": 750, "input_length": 150, "hash_ids": [3003]}
{"timestamp": 1000, "input_length": 300, "hash_ids": [3004]}
{"timestamp": 1250, "input_length": 180, "hash_ids": [3005]}
{"timestamp": 2000, "input_length": 400, "hash_ids": [3006]}
{"timestamp": 2500, "input_length": 250, "hash_ids": [3007]}
{"timestamp": 3000, "input_length": 350, "hash_ids": [3008]}
{"timestamp": 4000, "input_length": 500, "hash_ids": [3009]}
{"timestamp": 5000, "input_length": 600, "hash_ids": [3010, 3050]}
`,
	"inputs.jsonl": `{"texts": ["Hello!"]}
{"texts": ["Tell me a joke."]}
`,
	"rankings.jsonl": `{"texts":[{"name":"query","contents":["What is AI topic 0?"]},{"name":"passages","contents":["AI passage 0"]}]}
{"texts":[{"name":"query","contents":["What is AI topic 1?"]},{"name":"passages","contents":["AI passage 1"]}]}
{"texts":[{"name":"query","contents":["What is AI topic 2?"]},{"name":"passages","contents":["AI passage 2"]}]}
{"texts":[{"name":"query","contents":["What is AI topic 3?"]},{"name":"passages","contents":["AI passage 3"]}]}
{"texts":[{"name":"query","contents":["What is AI topic 4?"]},{"name":"passages","contents":["AI passage 4"]}]}
`,
	"production_queries.jsonl": `{"text_input": "What is the capital of France?", "output_length": 20}
{"text_input": "Explain quantum computing in simple terms.", "output_length": 100}
{"text_input": "Write a Python function to calculate fibonacci numbers.", "output_length": 150}
{"text_input": "Summarize the main causes of World War II.", "output_length": 200}
{"text_input": "How do neural networks learn?", "output_length": 80}
`,
}

// aiperfRefusals are AIPerf 0.13 command lines that bench cannot run: each
// must be refused with exit status 2 and one line saying why.
var aiperfRefusals = []struct{ command, say string }{
	// AIPerf guesses the reply's text field; bench asks for it.
	{`aiperf profile --model your-model --url http://{url}/custom-endpoint --endpoint-type template --extra-inputs payload_template:'{"text": {{ text|tojson }}}' --synthetic-input-tokens-mean 100 --output-tokens-mean 50 --concurrency 4 --request-count 20`, "give --extra-inputs response_field:PATH"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --public-dataset sharegpt`, "--public-dataset is an AIPerf option that inferprobe does not support: inferprobe downloads no datasets"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --concurrency 1,2 --num-profile-runs 3 --parameter-sweep-cooldown-seconds 5`, "--parameter-sweep-cooldown-seconds is an AIPerf option that inferprobe does not support"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --warmup-request-count 3 --warmup-grace-period 1`, "--warmup-grace-period applies to a --warmup-duration warmup"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --num-users 3`, "--num-users requires --user-centric-rate. Pass --user-centric-rate to enable user-centric mode"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --streaming --prefill-concurrency 2`, "Phase 'profiling': prefill_concurrency must be <= concurrency"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --reset-kv-cache`, "--reset-kv-cache is an AIPerf option that inferprobe does not support"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --endpoint-type image-generation`, "--endpoint-type image-generation is an AIPerf endpoint type that inferprobe does not support"},
	{`aiperf profile -m Qwen/Qwen3-0.6B --url {url} --input-file trace.jsonl --custom-dataset-type bailian-trace`, "--custom-dataset-type bailian-trace is an AIPerf dataset type that inferprobe does not support"},
	// AIPerf's tutorials: ramping twice and user-centric-timing (AIPerf
	// refuses them too).
	{`aiperf profile --model your-model --url {url} --request-rate 100 --request-rate-ramp-duration 60 --duration 120`, "unknown long flag '--duration'"},
	{`aiperf profile --model your-model --url {url} --concurrency 100 --prefill-concurrency 20 --prefill-concurrency-ramp-duration 20 --synthetic-input-tokens-mean 8000`, "(AIPerf: prefill_concurrency requires endpoint.streaming=true)"},
	{`aiperf profile --user-centric-rate 1.0 --num-users 15 --concurrency 15 --model your-model --url {url}`, "User-centric rate mode requires --session-turns-mean >= 2"},
}

// TestBenchAIPerfCommandLines runs AIPerf command lines as bench commands,
// each against a simulator that serves the model it names.
func TestBenchAIPerfCommandLines(t *testing.T) {
	sims := map[string]string{}
	urlFor := func(command string) string {
		model := commandModel(t, command)
		if sims[model] == "" {
			sims[model] = startModelSimulator(t, model)
		}
		return sims[model]
	}
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
	files := map[string]string{"trace.jsonl": trace.String(), "prompts.jsonl": prompts.String(), "series.json": series}
	maps.Copy(files, tutorialFiles)
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	okLine := regexp.MustCompile(`(\d+) ok, 0 errors`)
	for _, tc := range aiperfCommands {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runAIPerfCommand(t, work, tc.command, urlFor(tc.command))
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
		code, out := runAIPerfCommand(t, work, tc.command, urlFor(tc.command))
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

// commandModel is the model an AIPerf command line names (blogModel if
// none).
func commandModel(t *testing.T, command string) string {
	t.Helper()
	words := shellWords(t, command)
	for i, w := range words[:len(words)-1] {
		if w == "--model" || w == "-m" || w == "--model-names" {
			return words[i+1]
		}
	}
	return blogModel
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
