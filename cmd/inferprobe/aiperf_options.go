package main

// aiperfOptions is every option of AIPerf 0.13's `aiperf profile` (its
// --help is testdata/aiperf-0.13-profile-help.txt, which the test checks
// this list against), in AIPerf's groups and order, and what bench does
// with it. It is the one home of that fact: bench's aliases, the refusal of
// an option it does not support, the note on one it accepts without effect,
// and the option table of docs/bench.md (TestAIPerfOptionsREADME) all come from it.
//
// Making an unsupported option supported is a one-line change: its status
// becomes supported and its flag the bench flag that does it.
var aiperfOptions = []aiperfOption{
	// Endpoint
	{"Endpoint", "--model-names --model -m", supported, "model", ""},
	{"Endpoint", "--model-selection-strategy", unsupported, "", whyOneModel},
	{"Endpoint", "--custom-endpoint --endpoint", supported, "endpoint", ""},
	{"Endpoint", "--endpoint-type", supported, "endpoint-type", ""},
	{"Endpoint", "--streaming", supported, "streaming", ""},
	{"Endpoint", "--url -u", supported, "url", ""},
	{"Endpoint", "--url-strategy", ignored, "", whyOneURL},
	{"Endpoint", "--request-timeout-seconds", supported, "request-timeout-seconds", ""},
	{"Endpoint", "--wait-for-model-timeout", unsupported, "", whyWaitForModel},
	{"Endpoint", "--wait-for-model-mode", unsupported, "", whyWaitForModel},
	{"Endpoint", "--wait-for-model-interval", unsupported, "", whyWaitForModel},
	{"Endpoint", "--reset-kv-cache", unsupported, "", whyControl},
	{"Endpoint", "--reset-kv-cache-timeout-seconds", unsupported, "", whyControl},
	{"Endpoint", "--reset-kv-cache-path", unsupported, "", whyControl},
	{"Endpoint", "--server-profiler", unsupported, "", whyControl},
	{"Endpoint", "--server-profiler-timeout-seconds", unsupported, "", whyControl},
	{"Endpoint", "--server-profiler-start-path", unsupported, "", whyControl},
	{"Endpoint", "--server-profiler-stop-path", unsupported, "", whyControl},
	{"Endpoint", "--api-key", supported, "api-key", ""},
	{"Endpoint", "--transport --transport-type", ignored, "", whyHTTP},
	{"Endpoint", "--use-legacy-max-tokens", supported, "use-legacy-max-tokens", ""},
	{"Endpoint", "--use-server-token-count", supported, "use-server-token-count", ""},
	{"Endpoint", "--per-chunk-usage", unsupported, "", whyPerChunkUsage},
	{"Endpoint", "--connection-reuse-strategy", supported, "connection-reuse-strategy", ""},
	{"Endpoint", "--download-video-content", unsupported, "", whyModality},
	{"Endpoint", "--request-content-type", unsupported, "", whyContentType},
	{"Endpoint", "--session-header", supported, "session-header", ""},
	{"Endpoint", "--uuid-and-strip", unsupported, "", whyModality},

	// Input
	{"Input", "--extra-inputs", supported, "extra-inputs", ""},
	{"Input", "--header -H", supported, "header", ""},
	{"Input", "--input-file", supported, "input-file", ""},
	{"Input", "--public-dataset", unsupported, "", whyDownload},
	{"Input", "--hf-subset", unsupported, "", whyDownload},
	{"Input", "--hf-weka-dataset", unsupported, "", whyDownload},
	{"Input", "--dataset-filter", unsupported, "", whyDownload},
	{"Input", "--custom-dataset-type", supported, "custom-dataset-type", ""},
	{"Input", "--ignore-trace-delays", unsupported, "", whyIgnoreTraceDelays},
	{"Input", "--use-think-time-only", unsupported, "", whyAgentic},
	{"Input", "--max-context-length", unsupported, "", whyTraceFilter},
	{"Input", "--dataset-sampling-strategy", unsupported, "", whySampling},
	{"Input", "--allow-dataset-wrap --no-allow-dataset-wrap", unsupported, "", whyAgentic},
	{"Input", "--random-seed", supported, "random-seed", ""},
	{"Input", "--trace-session-sample-ratio", unsupported, "", whyTraceFilter},
	{"Input", "--config -f", unsupported, "", whyConfig},

	// Fixed Schedule
	{"Fixed Schedule", "--fixed-schedule", supported, "fixed-schedule", ""},
	{"Fixed Schedule", "--no-fixed-schedule", supported, "fixed-schedule", ""},
	{"Fixed Schedule", "--fixed-schedule-auto-offset", supported, "fixed-schedule-auto-offset", ""},
	{"Fixed Schedule", "--fixed-schedule-start-offset", supported, "fixed-schedule-start-offset", ""},
	{"Fixed Schedule", "--fixed-schedule-end-offset", supported, "fixed-schedule-end-offset", ""},

	// Goodput
	{"Goodput", "--goodput", supported, "goodput", ""},

	// Output
	{"Output", "--output-artifact-dir --artifact-dir", supported, "artifact-dir", ""},
	{"Output", "--profile-export-prefix --profile-export-file", unsupported, "", whyExportNames},
	{"Output", "--export-level --profile-export-level", ignored, "", whyExportLevel},
	{"Output", "--slice-duration", supported, "slice-duration", ""},
	{"Output", "--auto-plot --no-auto-plot", supported, "auto-plot", ""},
	{"Output", "--plot-required", supported, "plot-required", ""},
	{"Output", "--export-outputs-json", unsupported, "", whyOutputs},
	{"Output", "--otel-url", unsupported, "", whyTelemetryExport},
	{"Output", "--stream", unsupported, "", whyTelemetryExport},
	{"Output", "--otel-resource-attributes", unsupported, "", whyTelemetryExport},
	{"Output", "--gen-ai-provider", unsupported, "", whyTelemetryExport},
	{"Output", "--mlflow-tracking-uri", unsupported, "", whyTelemetryExport},
	{"Output", "--mlflow-experiment", unsupported, "", whyTelemetryExport},
	{"Output", "--mlflow-run-name", unsupported, "", whyTelemetryExport},
	{"Output", "--mlflow-tag", unsupported, "", whyTelemetryExport},
	{"Output", "--mlflow-parent-run-id", unsupported, "", whyTelemetryExport},
	{"Output", "--mlflow-artifact-glob", unsupported, "", whyTelemetryExport},
	{"Output", "--wandb-project", unsupported, "", whyTelemetryExport},
	{"Output", "--wandb-entity", unsupported, "", whyTelemetryExport},
	{"Output", "--wandb-run-name", unsupported, "", whyTelemetryExport},
	{"Output", "--wandb-tag", unsupported, "", whyTelemetryExport},

	// HTTP Trace
	{"HTTP Trace", "--export-http-trace", ignored, "", whyHTTPTrace},
	{"HTTP Trace", "--show-trace-timing", unsupported, "", whyTraceTiming},

	// Tokenizer
	{"Tokenizer", "--tokenizer", supported, "tokenizer", ""},
	{"Tokenizer", "--tokenizer-revision", supported, "tokenizer-revision", ""},
	{"Tokenizer", "--tokenizer-trust-remote-code", ignored, "", whyNoTokenizerCode},
	{"Tokenizer", "--apply-chat-template", unsupported, "", whyChatTemplate},

	// Load Generator
	{"Load Generator", "--benchmark-duration", supported, "benchmark-duration", ""},
	{"Load Generator", "--benchmark-grace-period", supported, "benchmark-grace-period", ""},
	{"Load Generator", "--concurrency", supported, "concurrency", ""},
	{"Load Generator", "--prefill-concurrency", supported, "prefill-concurrency", ""},
	{"Load Generator", "--request-rate", supported, "request-rate", ""},
	{"Load Generator", "--arrival-pattern --request-rate-mode", supported, "arrival-pattern", ""},
	{"Load Generator", "--arrival-smoothness --vllm-burstiness", supported, "arrival-smoothness", ""},
	{"Load Generator", "--request-count --num-requests", supported, "request-count", ""},
	{"Load Generator", "--concurrency-ramp-duration", supported, "concurrency-ramp-duration", ""},
	{"Load Generator", "--prefill-concurrency-ramp-duration", supported, "prefill-concurrency-ramp-duration", ""},
	{"Load Generator", "--request-rate-ramp-duration", supported, "request-rate-ramp-duration", ""},
	{"Load Generator", "--request-rate-series", supported, "request-rate-series", ""},
	{"Load Generator", "--failed-request-threshold", supported, "failed-request-threshold", ""},
	{"Load Generator", "--trajectory-start-min-ratio", unsupported, "", whyAgentic},
	{"Load Generator", "--trajectory-start-max-ratio", unsupported, "", whyAgentic},
	{"Load Generator", "--burst-phase-starts", unsupported, "", whyAgentic},
	{"Load Generator", "--trace-idle-gap-cap-seconds", unsupported, "", whyAgentic},
	{"Load Generator", "--system-idle-gap-cap-seconds", unsupported, "", whyAgentic},

	// Scenario
	{"Scenario", "--scenario", unsupported, "", whyScenarioLock},
	{"Scenario", "--unsafe-override", unsupported, "", whyScenarioLock},

	// Warmup
	{"Warmup", "--warmup-request-count --num-warmup-requests", supported, "warmup-request-count", ""},
	{"Warmup", "--warmup-duration", supported, "warmup-duration", ""},
	{"Warmup", "--agentic-cache-warmup-duration", unsupported, "", whyAgentic},
	{"Warmup", "--agentic-warmup-grace-period", unsupported, "", whyAgentic},
	{"Warmup", "--num-warmup-sessions", supported, "num-warmup-sessions", ""},
	{"Warmup", "--warmup-concurrency", supported, "warmup-concurrency", ""},
	{"Warmup", "--warmup-prefill-concurrency", supported, "warmup-prefill-concurrency", ""},
	{"Warmup", "--warmup-request-rate", supported, "warmup-request-rate", ""},
	{"Warmup", "--warmup-arrival-pattern", supported, "warmup-arrival-pattern", ""},
	{"Warmup", "--warmup-grace-period", supported, "warmup-grace-period", ""},
	{"Warmup", "--warmup-concurrency-ramp-duration", supported, "warmup-concurrency-ramp-duration", ""},
	{"Warmup", "--warmup-prefill-concurrency-ramp-duration", supported, "warmup-prefill-concurrency-ramp-duration", ""},
	{"Warmup", "--warmup-request-rate-ramp-duration", supported, "warmup-request-rate-ramp-duration", ""},

	// User-Centric Rate
	{"User-Centric Rate", "--user-centric-rate", supported, "user-centric-rate", ""},
	{"User-Centric Rate", "--num-users", supported, "num-users", ""},

	// Request Cancellation
	{"Request Cancellation", "--request-cancellation-rate", supported, "request-cancellation-rate", ""},
	{"Request Cancellation", "--request-cancellation-delay", supported, "request-cancellation-delay", ""},

	// Conversation Input
	{"Conversation Input", "--conversation-num --num-conversations --num-sessions", supported, "conversation-num", ""},
	{"Conversation Input", "--num-dataset-entries --num-prompts", supported, "num-dataset-entries", ""},
	{"Conversation Input", "--conversation-turn-mean --session-turns-mean", supported, "conversation-turn-mean", ""},
	{"Conversation Input", "--conversation-turn-stddev --session-turns-stddev", supported, "conversation-turn-stddev", ""},
	{"Conversation Input", "--conversation-turn-delay-mean --session-turn-delay-mean", supported, "conversation-turn-delay-mean", ""},
	{"Conversation Input", "--conversation-turn-delay-stddev --session-turn-delay-stddev", supported, "conversation-turn-delay-stddev", ""},
	{"Conversation Input", "--conversation-turn-delay-ratio --session-delay-ratio", supported, "conversation-turn-delay-ratio", ""},
	{"Conversation Input", "--inter-turn-delay-cap-seconds", unsupported, "", whyTraceReplayKnob},
	{"Conversation Input", "--max-idle-gap-cap-seconds", unsupported, "", whyTraceReplayKnob},
	{"Conversation Input", "--replay-speedup", supported, "replay-speedup", ""},
	{"Conversation Input", "--open-loop-replay --no-open-loop-replay", unsupported, "", whyTraceReplayKnob},
	{"Conversation Input", "--open-loop-strict", unsupported, "", whyTraceReplayKnob},
	{"Conversation Input", "--omit-kv-hints", unsupported, "", whyTraceReplayKnob},
	{"Conversation Input", "--force-min-tokens --no-force-min-tokens", unsupported, "", whyTraceReplayKnob},

	// Input Sequence Length (ISL)
	{"Input Sequence Length (ISL)", "--prompt-input-tokens-mean --synthetic-input-tokens-mean --isl", supported, "synthetic-input-tokens-mean", ""},
	{"Input Sequence Length (ISL)", "--prompt-input-tokens-stddev --synthetic-input-tokens-stddev --isl-stddev", supported, "synthetic-input-tokens-stddev", ""},
	{"Input Sequence Length (ISL)", "--prompt-input-tokens-block-size --synthetic-input-tokens-block-size --isl-block-size", supported, "prompt-input-tokens-block-size", ""},
	{"Input Sequence Length (ISL)", "--seq-dist --sequence-distribution", supported, "sequence-distribution", ""},
	{"Input Sequence Length (ISL)", "--random-range-ratio", supported, "random-range-ratio", ""},
	{"Input Sequence Length (ISL)", "--random-corpus-style", unsupported, "", whyCorpus},

	// Output Sequence Length (OSL)
	{"Output Sequence Length (OSL)", "--prompt-output-tokens-mean --output-tokens-mean --osl", supported, "output-tokens-mean", ""},
	{"Output Sequence Length (OSL)", "--prompt-output-tokens-stddev --output-tokens-stddev --osl-stddev", supported, "output-tokens-stddev", ""},

	// Prompt
	{"Prompt", "--prompt-batch-size --batch-size-text --batch-size -b", unsupported, "", whyBatch},
	{"Prompt", "--prompt-corpus", unsupported, "", whyCorpus},

	// Prefix Prompt
	{"Prefix Prompt", "--system-prompt", supported, "system-prompt", ""},
	{"Prefix Prompt", "--system-prompt-file", supported, "system-prompt-file", ""},
	{"Prefix Prompt", "--prompt-prefix-pool-size --prefix-prompt-pool-size --num-prefix-prompts", supported, "prompt-prefix-pool-size", ""},
	{"Prefix Prompt", "--prompt-prefix-length --prefix-prompt-length", supported, "prompt-prefix-length", ""},
	{"Prefix Prompt", "--shared-system-prompt-length", supported, "shared-system-prompt-length", ""},
	{"Prefix Prompt", "--user-context-prompt-length", supported, "user-context-prompt-length", ""},

	// Cache Bust
	{"Cache Bust", "--cache-bust", unsupported, "", whyCacheBust},

	// Rankings
	{"Rankings", "--rankings-passages-mean", supported, "rankings-passages-mean", ""},
	{"Rankings", "--rankings-passages-stddev", supported, "rankings-passages-stddev", ""},
	{"Rankings", "--rankings-passages-prompt-token-mean", supported, "rankings-passages-prompt-token-mean", ""},
	{"Rankings", "--rankings-passages-prompt-token-stddev", supported, "rankings-passages-prompt-token-stddev", ""},
	{"Rankings", "--rankings-query-prompt-token-mean", supported, "rankings-query-prompt-token-mean", ""},
	{"Rankings", "--rankings-query-prompt-token-stddev", supported, "rankings-query-prompt-token-stddev", ""},

	// Synthesis
	{"Synthesis", "--synthesis-speedup-ratio", unsupported, "", whySynthesis},
	{"Synthesis", "--synthesis-prefix-len-multiplier", unsupported, "", whySynthesis},
	{"Synthesis", "--synthesis-prefix-root-multiplier", unsupported, "", whySynthesis},
	{"Synthesis", "--synthesis-prompt-len-multiplier", unsupported, "", whySynthesis},
	{"Synthesis", "--synthesis-output-len-multiplier", unsupported, "", whySynthesis},
	{"Synthesis", "--synthesis-max-isl", unsupported, "", whySynthesis},
	{"Synthesis", "--synthesis-max-osl", unsupported, "", whySynthesis},

	// Audio Input
	{"Audio Input", "--audio-batch-size --batch-size-audio", supported, "audio-batch-size", ""},
	{"Audio Input", "--audio-length-mean", supported, "audio-length-mean", ""},
	{"Audio Input", "--audio-length-stddev", supported, "audio-length-stddev", ""},
	{"Audio Input", "--audio-format", supported, "audio-format", "an mp3 clip is digital silence of the drawn length, where AIPerf's LAME encodes Gaussian noise: Go has no well-kept pure-Go MP3 encoder"},
	{"Audio Input", "--audio-depths", supported, "audio-depths", ""},
	{"Audio Input", "--audio-sample-rates", supported, "audio-sample-rates", ""},
	{"Audio Input", "--audio-num-channels", supported, "audio-num-channels", ""},

	// Image Input
	{"Image Input", "--image-width-mean", supported, "image-width-mean", ""},
	{"Image Input", "--image-width-stddev", supported, "image-width-stddev", ""},
	{"Image Input", "--image-height-mean", supported, "image-height-mean", ""},
	{"Image Input", "--image-height-stddev", supported, "image-height-stddev", ""},
	{"Image Input", "--image-batch-size --batch-size-image", supported, "image-batch-size", ""},
	{"Image Input", "--image-format", supported, "image-format", ""},
	{"Image Input", "--image-source", supported, "image-source", ""},
	{"Image Input", "--image-source-sampling", supported, "image-source-sampling", ""},

	// Video Input
	{"Video Input", "--video-batch-size --batch-size-video", unsupported, "", whyModality},
	{"Video Input", "--video-duration", unsupported, "", whyModality},
	{"Video Input", "--video-fps", unsupported, "", whyModality},
	{"Video Input", "--video-width", unsupported, "", whyModality},
	{"Video Input", "--video-height", unsupported, "", whyModality},
	{"Video Input", "--video-synth-type", unsupported, "", whyModality},
	{"Video Input", "--video-format", unsupported, "", whyModality},
	{"Video Input", "--video-codec", unsupported, "", whyModality},
	{"Video Input", "--video-audio-sample-rate", unsupported, "", whyModality},
	{"Video Input", "--video-audio-num-channels", unsupported, "", whyModality},
	{"Video Input", "--video-audio-codec", unsupported, "", whyModality},
	{"Video Input", "--video-audio-depth", unsupported, "", whyModality},

	// Service
	{"Service", "--log-level", supported, "log-level", ""},
	{"Service", "--verbose -v", supported, "verbose", ""},
	{"Service", "--extra-verbose -vv", supported, "extra-verbose", ""},
	{"Service", "--record-processor-service-count --record-processors", ignored, "", whyRecords},
	{"Service", "--api-port", unsupported, "", whyAPI},
	{"Service", "--api-host", unsupported, "", whyAPI},
	{"Service", "--stats-interval", ignored, "", whyStatsInterval},

	// Server Metrics
	{"Server Metrics", "--server-metrics", supported, "server-metrics", ""},
	{"Server Metrics", "--no-server-metrics", supported, "server-metrics", ""},
	{"Server Metrics", "--server-metrics-formats", supported, "server-metrics-formats", ""},

	// Network Latency
	{"Network Latency", "--network-latency-automatic", unsupported, "", whyNetworkLatency},
	{"Network Latency", "--network-latency-mean", unsupported, "", whyNetworkLatency},
	{"Network Latency", "--network-latency-ping-interval", unsupported, "", whyNetworkLatency},

	// GPU Telemetry
	{"GPU Telemetry", "--gpu-telemetry", supported, "gpu-telemetry", ""},
	{"GPU Telemetry", "--no-gpu-telemetry", supported, "gpu-telemetry", ""},

	// UI
	{"UI", "--ui-type --ui", supported, "ui-type", ""},

	// Workers
	{"Workers", "--workers-max --max-workers", supported, "workers", ""},

	// ZMQ Communication
	{"ZMQ Communication", "--zmq-host", ignored, "", whyZMQ},
	{"ZMQ Communication", "--zmq-ipc-path", ignored, "", whyZMQ},
	{"ZMQ Communication", "--zmq-dual-bind", ignored, "", whyZMQ},

	// Accuracy
	{"Accuracy", "--accuracy-benchmark", unsupported, "", whyAccuracy},
	{"Accuracy", "--accuracy-tasks", unsupported, "", whyAccuracy},
	{"Accuracy", "--accuracy-n-shots", unsupported, "", whyAccuracy},
	{"Accuracy", "--accuracy-enable-cot --accuracy-no-enable-cot", unsupported, "", whyAccuracy},
	{"Accuracy", "--accuracy-grader", unsupported, "", whyAccuracy},
	{"Accuracy", "--accuracy-system-prompt", unsupported, "", whyAccuracy},
	{"Accuracy", "--accuracy-verbose", unsupported, "", whyAccuracy},

	// Multi-Run
	{"Multi-Run", "--num-profile-runs", supported, "num-profile-runs", ""},
	{"Multi-Run", "--profile-run-cooldown-seconds", supported, "profile-run-cooldown-seconds", ""},
	{"Multi-Run", "--confidence-level", supported, "confidence-level", ""},
	{"Multi-Run", "--profile-run-disable-warmup-after-first --no-profile-run-disable-warmup-after-first", supported, "profile-run-disable-warmup-after-first", ""},
	{"Multi-Run", "--set-consistent-seed --no-set-consistent-seed", supported, "set-consistent-seed", ""},
	{"Multi-Run", "--vary-seed-per-trial --no-vary-seed-per-trial", supported, "vary-seed-per-trial", ""},
	{"Multi-Run", "--convergence-metric", supported, "convergence-metric", ""},
	{"Multi-Run", "--convergence-stat", supported, "convergence-stat", ""},
	{"Multi-Run", "--convergence-threshold", supported, "convergence-threshold", ""},
	{"Multi-Run", "--convergence-mode", supported, "convergence-mode", ""},
	{"Multi-Run", "--parameter-sweep-cooldown-seconds", unsupported, "", whyMultiRun},
	{"Multi-Run", "--parameter-sweep-same-seed --no-parameter-sweep-same-seed", supported, "parameter-sweep-same-seed", ""},
	{"Multi-Run", "--parameter-sweep-mode", supported, "parameter-sweep-mode", ""},
	{"Multi-Run", "--sweep-type", unsupported, "", whyMultiRun},
	{"Multi-Run", "--no-sweep-table", supported, "sweep-table", ""},
	{"Multi-Run", "--search-space", unsupported, "", whySearchSpace},
	{"Multi-Run", "--search-metric", unsupported, "", whySearchSpace},
	{"Multi-Run", "--search-stat", unsupported, "", whySearchSpace},
	{"Multi-Run", "--search-direction", unsupported, "", whySearchSpace},
	{"Multi-Run", "--search-max-iterations", supported, "search-max-iterations", ""},
	{"Multi-Run", "--search-initial-points", ignored, "", whyDeterministicSearch},
	{"Multi-Run", "--search-random-seed", ignored, "", whyDeterministicSearch},
	{"Multi-Run", "--search-planner", unsupported, "", whySearchSpace},
	{"Multi-Run", "--optuna-sampler", unsupported, "", whySearchSpace},
	{"Multi-Run", "--optuna-acquisition", unsupported, "", whySearchSpace},
	{"Multi-Run", "--optuna-terminator", unsupported, "", whySearchSpace},
	{"Multi-Run", "--search-percentile-pooling", unsupported, "", whySearchSpace},
	{"Multi-Run", "--bo-constraint-mode", unsupported, "", whySearchSpace},
	{"Multi-Run", "--variant --sweep-variant", unsupported, "", whyMultiRun},
	{"Multi-Run", "--search-sla", supported, "search-sla", ""},
	{"Multi-Run", "--search-sla-tier", unsupported, "", whySearchSpace},
	{"Multi-Run", "--search-recipe", supported, "search-recipe", ""},
	{"Multi-Run", "--ttft-sla-ms", supported, "ttft-sla-ms", ""},
	{"Multi-Run", "--isl-osl-pairs", unsupported, "", whyShapeRecipe},
	{"Multi-Run", "--itl-sla-ms", supported, "itl-sla-ms", ""},
	{"Multi-Run", "--tpot-sla-ms", supported, "tpot-sla-ms", ""},
	{"Multi-Run", "--e2e-sla-ms", supported, "e2e-sla-ms", ""},
	{"Multi-Run", "--error-rate-sla", supported, "error-rate-sla", ""},
	{"Multi-Run", "--slo-attainment-fraction", supported, "slo-attainment-fraction", ""},
	{"Multi-Run", "--search-style", supported, "search-style", ""},
	{"Multi-Run", "--degradation-threshold", supported, "degradation-threshold", ""},
	{"Multi-Run", "--degradation-metric-tag", supported, "degradation-metric-tag", ""},
	{"Multi-Run", "--degradation-stat", supported, "degradation-stat", ""},
	{"Multi-Run", "--isl-min", unsupported, "", whyShapeRecipe},
	{"Multi-Run", "--isl-max", unsupported, "", whyShapeRecipe},
	{"Multi-Run", "--isl-steps", unsupported, "", whyShapeRecipe},
	{"Multi-Run", "--concurrency-min", supported, "concurrency-min", ""},
	{"Multi-Run", "--concurrency-max", supported, "concurrency-max", ""},
	{"Multi-Run", "--concurrency-steps", supported, "concurrency-steps", ""},
	{"Multi-Run", "--osl-min", unsupported, "", whyShapeRecipe},
	{"Multi-Run", "--osl-max", unsupported, "", whyShapeRecipe},
	{"Multi-Run", "--osl-steps", unsupported, "", whyShapeRecipe},
}

// aiperfOption is one option of `aiperf profile`.
type aiperfOption struct {
	group string
	// names are AIPerf's, as its help lists them: the option's name first,
	// then its aliases ("--request-count --num-requests").
	names  string
	status optionStatus
	// flag is, for a supported option, the bench flag that does it; its
	// other names are hidden aliases of it.
	flag string
	// why is, for an unsupported option, why and what to use instead; for
	// an ignored one, why it changes nothing; for a supported one, if any,
	// what bench does differently from AIPerf.
	why string
}

type optionStatus int

const (
	unsupported optionStatus = iota // refused: one line says why and what to use instead
	supported                       // a bench flag does what AIPerf does
	ignored                         // accepted with a note: it would change nothing here
)

// Why an option is not supported, and what to use instead.
const (
	whyOneModel          = "bench benchmarks one model per run; run it once per model, or give inferprobe serve one probe per model"
	whyWaitForModel      = "bench does not wait for the model to load; start it when the server answers (e.g. curl --retry 30 --retry-all-errors URL/models), and a run against a server that is not ready fails with each error's reason"
	whyPerChunkUsage     = "bench does not ask for continuous usage stats; token counts come from the final usage, and inter-token latency from the chunks' arrival times"
	whyModality          = "bench sends text, and images and audio (--image-* and --audio-*, or an --input-file entry's image and audio fields); video inputs and outputs are not generated or measured"
	whyContentType       = "bench sends JSON bodies; describe another API with a template endpoint in a scenario file (inferprobe serve)"
	whyDownload          = "inferprobe downloads no datasets; download the dataset and give it as --input-file FILE --custom-dataset-type (ShareGPT's JSON is sharegpt)"
	whyIgnoreTraceDelays = "give the trace a load instead: with --no-fixed-schedule and --concurrency or --request-rate, its requests are sent at that load and its timestamps ignored"
	whyTraceFilter       = "bench sends every entry of --input-file; filter or sample the file first (e.g. with jq or duckdb)"
	whySampling          = "bench sends --input-file in order; --custom-dataset-type random-pool draws single-turn entries at random, with replacement"
	whyAgentic           = "bench has no agentic (trajectory) replay; a trace is replayed at its timestamps with --fixed-schedule, or at a load with --concurrency or --request-rate"
	whyConfig            = "inferprobe's configuration file is a scenario (inferprobe serve --config.file FILE); bench --save-scenario FILE writes one from these flags"
	whyExportNames       = "the artifacts have fixed names in --output-artifact-dir; choose the directory instead"
	whyOutputs           = "bench keeps no generated text; profile_export.jsonl has each request's metrics"
	whyHTTPTrace         = "profile_export.jsonl always has each request's http_req_* timings, as AIPerf's does; the raw trace (timestamps, headers, socket) is not written"
	whyTraceTiming       = "the console shows no HTTP timing table; profile_export_aiperf.json and .csv summarise the http_req_* timings, and profile_export.jsonl has each request's"
	whyChatTemplate      = "bench counts the prompt as sent, and the server's usage.prompt_tokens (chat template included) when it reports usage"
	whyScenarioLock      = "bench has no locked submission scenarios; --save-scenario writes the run as a scenario file to keep and rerun"
	whyTraceReplayKnob   = "bench's trace replay has no such knob; --fixed-schedule replays a trace at its timestamps, --no-fixed-schedule at --concurrency or --request-rate"
	whyCorpus            = "bench's synthetic prompts come from its one built-in corpus"
	whyBatch             = "bench sends one input per request"
	whyCacheBust         = "bench injects no cache-bust markers; every synthetic prompt is unique unless a prefix is shared"
	whySynthesis         = "bench does not synthesize traces; replay a recorded one with --input-file and --fixed-schedule"
	whyAPI               = "bench serves no API; inferprobe serve has /metrics and the burst API"
	whyControl           = "bench sends no control requests to the server; call the endpoint yourself before the run (e.g. curl -X POST URL/reset_prefix_cache)"
	whyNetworkLatency    = "bench does not subtract network latency; run it next to the server, or compare with a run against the built-in simulator (inferprobe simulate)"
	whyAccuracy          = "bench measures performance, not accuracy; use an evaluation harness (e.g. lm-evaluation-harness)"
	whyMultiRun          = "bench sweeps --concurrency and --request-rate lists, repeats one run or such a sweep with --num-profile-runs and searches with --search-recipe; for other sweeps, run it once per setting (a shell loop) and compare runs with --compare"
	whySearchSpace       = "bench runs no free or Bayesian search (it would not repeat); its capacity searches are AIPerf's deterministic recipes: --search-recipe max-concurrency-under-sla (or max-goodput-under-slo, concurrency-ramp) with --search-style smooth_isotonic, monotonic or grid"
	whyShapeRecipe       = "bench runs the concurrency recipes (max-concurrency-under-sla, max-goodput-under-slo, concurrency-ramp), not those that sweep prompt or output lengths; run bench once per --isl/--osl instead"
	whyTelemetryExport   = "bench uploads nothing; its artifacts are files in --output-artifact-dir, and inferprobe serve's metrics are Prometheus series"
)

// Why an accepted option changes nothing.
const (
	whyOneURL              = "bench gives each new session the next --url in turn, from the first, which is round_robin, AIPerf's only strategy"
	whyHTTP                = "bench sends HTTP, as AIPerf does"
	whyExportLevel         = "bench always writes the summary and per-request records, and keeps no raw bodies"
	whyNoTokenizerCode     = "inferprobe runs no tokenizer code"
	whyRecords             = "bench's workers compute each request's record as it ends"
	whyStatsInterval       = "the progress line is rewritten every second on a terminal, else printed every 5 s"
	whyZMQ                 = "bench's worker processes talk over pipes, not ZMQ"
	whyDeterministicSearch = "bench's search styles are deterministic: there is nothing random to seed or sample first"
)
