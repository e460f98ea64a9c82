// Package simulator is inferprobe's built-in OpenAI-compatible LLM server
// simulator: the default target of `inferprobe simulate` and `inferprobe demo`,
// and the stand-in for a GPU server in tests and benchmarks.
//
// It serves POST /v1/chat/completions and POST /v1/completions (SSE streams
// and plain JSON, shaped like vLLM's), GET /v1/models, GET /health and
// GET/PUT /admin/profile, which changes the latency and fault profile at run
// time (how an end-to-end test injects a regression). It also speaks enough
// of the other APIs inferprobe probes to test them: OpenAI's
// POST /v1/responses and POST /v1/embeddings, Anthropic's POST /v1/messages
// (typed events; anthropic-version required), TGI's POST /generate_stream and
// POST /generate, and reranking as NIM (POST /v1/ranking), Cohere
// (POST /v2/rerank) and text-embeddings-inference (POST /rerank) serve it.
// Embeddings and reranking answer after the time to first token.
//
// Faults for clients' token accounting: IgnoreMinTokens stops outputs at
// their natural length whatever min_tokens and ignore_eos say, and
// OmitUsage never sends usage on chat and completions. ReasoningTokens makes
// chat and completions replies open with reasoning, as reasoning models'
// do.
//
// Timing follows a GPU server's shape: requests wait in a FIFO queue for one
// of MaxConcurrency decode slots; the first token comes TTFT plus
// PrefillPerToken per prompt token after admission; output tokens follow one
// ITL apart, on absolute times so the mean does not drift. Under a closed
// loop this makes the time to first token a known function of the
// concurrency (the capacity model, capacity.go): Config.Capacity is the
// highest concurrency within a TTFT SLO, the answer a capacity search is
// tested against.
//
// Tokenizer: the simulator counts one token per whitespace-separated word of
// the prompt, and emits one word per output token. inferprobe's synthetic
// prompts are built from words that are single GPT-2 tokens, so the counts
// agree with what a real server would report for them.
//
// All randomness derives from Config.Seed: the same seed and the same request
// order give the same lengths, text and latencies.
package simulator
