// Package scenarios defines the scenario file: what to probe, how often and with
// which traffic. Load decodes strictly and validates fully, so a Config that Load
// returns can be used without further checks.
//
// The field comments below are the configuration reference; example.yml shows
// every field with its default, and bounds.go the upper end of every length,
// count, rate, duration and worker number.
package scenarios

import "time"

// Config is one scenario file.
type Config struct {
	Global Global `yaml:"global"`
	// Targets are the servers to probe, by name; at least one. Names may use
	// letters, digits, '_', '.' and '-', as they become label values.
	Targets map[string]*Target `yaml:"targets"`
	// Probes are the never-ending request streams, by name (same rules as
	// target names). The name is the scenario label. A file needs at least
	// one probe or burst.
	Probes map[string]*Probe `yaml:"probes"`
	// Bursts are finite, heavier runs started on a schedule or through the
	// API, by name (same rules as probe names, and the scenario label of
	// their requests). Optional.
	Bursts map[string]*Burst `yaml:"bursts"`

	// src locates the fields in the file the config was read from, for
	// problems found after loading (Problems).
	src *loader
}

// Global holds settings shared by every probe.
type Global struct {
	// Seed makes every random choice reproducible. Default 1.
	Seed uint64 `yaml:"seed"`
	// Workers is the number of worker processes that send the requests,
	// read at start-up; the --workers flag, when given, wins. >= 0; 0 or
	// absent means the --workers default, the number of CPUs.
	Workers int `yaml:"workers"`
}

// Target is one inference server endpoint.
type Target struct {
	// URL is the API base, e.g. http://127.0.0.1:8000/v1; the endpoint path is
	// appended to it. Required; http or https, with a host, and without
	// credentials, query or fragment.
	URL string `yaml:"url"`
	// MoreURLs are further API bases of the same model, set by bench's
	// several --url (AIPerf's load balancing): each session goes to the next
	// of URL, MoreURLs... in turn, and keeps it. Not a scenario field: a
	// daemon's target is one server, whose metrics and alerts are its own.
	MoreURLs []string `yaml:"-"`
	// Endpoint is the API the target speaks, one of EndpointNames: chat,
	// completions, responses, embeddings, nim_ranking, cohere_rerank,
	// tei_rerank, messages (Anthropic), tgi or template. Default chat.
	Endpoint string `yaml:"endpoint"`
	// Model is sent in every request and used as the model label. Required.
	Model string `yaml:"model"`
	// APIKeyFile or APIKeyEnv supply a key sent as "Authorization: Bearer KEY"
	// (endpoint messages: "x-api-key: KEY"); at most one may be set. The
	// file holds only the key (surrounding whitespace is trimmed); a relative path is relative to the scenario
	// file's directory, and Load rewrites it to the resolved path. The
	// environment variable must be set and non-empty.
	APIKeyFile string `yaml:"api_key_file"`
	APIKeyEnv  string `yaml:"api_key_env"`
	// Headers are added to every request. The header that carries the API
	// key may not be set together with one.
	Headers map[string]string `yaml:"headers"`
	// Stream asks for SSE streaming. Default true.
	Stream *bool `yaml:"stream"`
	// Timeout bounds a whole request. Default 120s; > 0.
	Timeout Duration `yaml:"timeout"`
	// StallTimeout bounds the silence between two chunks of a stream.
	// Default 30s, or Timeout if that is shorter; > 0 and at most Timeout.
	StallTimeout Duration `yaml:"stall_timeout"`
	// SessionHeader names the header that carries a multi-turn session's id,
	// so that a router keeps the session on one replica (sticky sessions).
	// Sent only with requests that belong to a session. Default X-Session-ID.
	SessionHeader string `yaml:"session_header"`
	// MaxTokensField is the body field that carries the output length on
	// endpoint chat: max_tokens (default; what vLLM, SGLang and most servers
	// read) or max_completion_tokens (OpenAI's newer name).
	MaxTokensField string `yaml:"max_tokens_field"`
	// Tokenizer is a Hugging Face tokenizer.json (byte-level BPE of the
	// GPT-2, Llama 3 or Qwen2 kind; checked at load) used to count tokens
	// when the server reports no usage, and to count prompts exactly. A
	// relative path is relative to the scenario file's directory, like
	// api_key_file. A model name that is no file (Qwen/Qwen3-0.6B) is that
	// model's tokenizer.json from the Hugging Face cache, downloaded into it
	// from the Hub the first time (docs/configuration.md).
	// Default none: counts then come from the server's usage, else from
	// content chunks, and reports say which.
	Tokenizer string `yaml:"tokenizer"`
	// TLS configures https connections.
	TLS TLS `yaml:"tls"`
	// HTTP2 uses HTTP/2 when an https server offers it (ALPN); plain http
	// always uses HTTP/1.1. Default true.
	HTTP2 *bool `yaml:"http2"`
	// KeepAlive reuses connections between requests. Default true; false
	// opens a connection per request (setup is still not billed to TTFT).
	KeepAlive *bool `yaml:"keep_alive"`
	// RequestIDs sends each request's ID in X-Request-ID and W3C
	// traceparent headers, so that the server's logs and traces join
	// inferprobe's records. Default true; a header of the same name in
	// Headers is sent instead of that one.
	RequestIDs *bool `yaml:"request_ids"`
	// ServerMetrics is where a burst run reads the server's own Prometheus
	// metrics for its report: a URL, or "off". Default the URL's origin +
	// /metrics, where vLLM, SGLang, llama-server and TGI serve them.
	ServerMetrics string `yaml:"server_metrics"`
	// Template describes the request and the reply of endpoint template,
	// and is required there and refused elsewhere.
	Template *Template `yaml:"template"`

	// APIKey is resolved from APIKeyFile or APIKeyEnv at load time. Never logged.
	APIKey string `yaml:"-"`
}

// Streaming reports whether requests to t ask for a stream.
func (t *Target) Streaming() bool { return t.Stream == nil || *t.Stream }

// TLS configures the client side of https connections.
type TLS struct {
	// CAFile is a PEM file of CA certificates that server certificates are
	// checked against instead of the system's. A relative path is relative
	// to the scenario file's directory.
	CAFile string `yaml:"ca_file"`
	// InsecureSkipVerify accepts any server certificate. For tests only: it
	// lets anyone on the path read the prompts and the API key. Default false.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// Template is a user-described endpoint: a request body with placeholders
// and where the reply keeps its text and token counts.
type Template struct {
	// Path is appended to the target's url, e.g. /generate. Required.
	Path string `yaml:"path"`
	// Body is the JSON request body. A string value that is exactly a
	// placeholder becomes the value itself: "{{prompt}}" (string),
	// "{{messages}}" (array of {role, content}), "{{max_tokens}}" (number),
	// "{{model}}" (string), "{{stream}}" (bool). Inside a longer string,
	// {{prompt}}, {{max_tokens}} and {{model}} are replaced as text. Probe
	// params are merged at its top level. Required, and must use
	// {{prompt}} or {{messages}}.
	Body map[string]any `yaml:"body"`
	// TextPath locates the generated text in each streamed event (or in the
	// reply), as dot-separated keys and array indexes, e.g. choices.0.text.
	// Required.
	TextPath string `yaml:"text_path"`
	// OutputTokensPath and InputTokensPath locate the server's token counts
	// (usage) in whichever event carries them, or in the reply, e.g.
	// usage.completion_tokens. Optional; without them the tokenizer or the
	// content chunks count.
	OutputTokensPath string `yaml:"output_tokens_path"`
	InputTokensPath  string `yaml:"input_tokens_path"`
}

// Probe is a never-ending, low-rate stream of requests to one target.
type Probe struct {
	// Target names the target to send to. Required.
	Target  string  `yaml:"target"`
	Arrival Arrival `yaml:"arrival"`
	// Dataset defaults to synthetic with its default lengths.
	Dataset Dataset `yaml:"dataset"`
	// Params are merged into every request body, e.g. temperature, ignore_eos,
	// min_tokens. Nested mappings decode to map[string]any, so the values
	// encode as JSON as written. Keys inferprobe sets itself (model, messages,
	// prompt, stream, stream_options, max_tokens, max_completion_tokens) are
	// refused; min_tokens must be a whole number >= 0 and ignore_eos a bool.
	Params map[string]any `yaml:"params"`
	SLO    SLO            `yaml:"slo"`
}

// Arrival patterns.
const (
	ArrivalPoisson     = "poisson"
	ArrivalConstant    = "constant"
	ArrivalGamma       = "gamma"
	ArrivalConcurrency = "concurrency"
	ArrivalUserCentric = "user_centric"
)

// Arrival says when requests are sent: open-loop at a rate (poisson, constant,
// gamma), which may ramp or step through a series, or closed-loop with a number
// of requests kept in flight (concurrency), which may ramp, or as users
// sharing a rate (user_centric).
type Arrival struct {
	// Pattern is poisson (exponential gaps, like many independent users),
	// constant (equal gaps), gamma (gaps shaped by smoothness), concurrency
	// (closed loop: the next request goes the moment one finishes) or
	// user_centric (AIPerf's user-centric rate: users each send a
	// multi-turn conversation, a turn every users/rate seconds, a new user
	// taking each finished one's place; needs
	// dataset.synthetic.conversation). Default poisson.
	Pattern string `yaml:"pattern"`
	// Rate is the mean number of requests per second of an open-loop pattern;
	// > 0, or >= 0 when ramping (it is then the rate the ramp starts from).
	// Required unless series is set; not used by concurrency.
	Rate float64 `yaml:"rate"`
	// Smoothness is the shape k of gamma gaps, whose coefficient of variation
	// is 1/√k: below 1 is burstier than poisson, 1 is poisson, above 1 is
	// smoother. Required for gamma and used only there; > 0.
	Smoothness float64 `yaml:"smoothness"`
	// Concurrency is the number of requests pattern concurrency keeps in
	// flight. Required for it and used only there; >= 1, or >= 0 when ramping.
	// Replicas run with --shard split it (and max_concurrency) between them.
	Concurrency int `yaml:"concurrency"`
	// Users is the number of users of pattern user_centric, who share rate.
	// Required for it and used only there; >= 1.
	Users int `yaml:"users"`
	// MaxConcurrency caps the requests an open-loop pattern has in flight: a
	// request due while the cap is full waits for a slot, and the wait is
	// exported as inferprobe_concurrency_wait_seconds, not counted in TTFT or
	// schedule lag. >= 1; default no cap.
	MaxConcurrency int `yaml:"max_concurrency"`
	// MaxConcurrencyRampOver raises the cap from 1 to max_concurrency, one
	// request at a time, the steps spread evenly over this long (AIPerf's
	// --concurrency-ramp-duration with a rate). Needs max_concurrency; > 0;
	// default no ramp.
	MaxConcurrencyRampOver Duration `yaml:"max_concurrency_ramp_over"`
	// MaxPrefillConcurrency caps the requests waiting for their first token
	// (AIPerf's --prefill-concurrency): a request holds one of these slots
	// from its send until its first token, or its end without one; one due
	// while they are all held waits, and the wait is exported as the cap's.
	// Any pattern; needs a streaming target; at most concurrency or
	// max_concurrency. >= 1; default no cap.
	MaxPrefillConcurrency int `yaml:"max_prefill_concurrency"`
	// MaxPrefillConcurrencyRampOver raises that cap from 1, one slot at a
	// time, the steps spread evenly over this long. Needs
	// max_prefill_concurrency; > 0; default no ramp.
	MaxPrefillConcurrencyRampOver Duration `yaml:"max_prefill_concurrency_ramp_over"`
	// RampTo and RampOver ramp linearly from rate (for concurrency: from
	// concurrency) to ramp_to over ramp_over, then hold ramp_to. Set both or
	// neither; ramp_to > 0 (for concurrency a whole number >= 1), ramp_over > 0.
	RampTo   float64  `yaml:"ramp_to"`
	RampOver Duration `yaml:"ramp_over"`
	// Series replaces rate with steps of rate, for open-loop patterns. Every
	// step but the last runs for its duration; the last one's rate holds to
	// the end, so a probe never runs out of schedule.
	Series []Step `yaml:"series"`
}

// Step is one step of a rate series.
type Step struct {
	// Rate is requests per second; >= 0 (0 pauses), and > 0 in the last step.
	// Required.
	Rate float64 `yaml:"rate"`
	// Duration is how long the step lasts; > 0. Required in every step but
	// the last, and not allowed there: the last step holds (so a written
	// scenario leaves it out).
	Duration Duration `yaml:"duration,omitempty"`
}

// Dataset says what the requests contain. Exactly one source (synthetic,
// prompts or file) must be set when dataset is written. Prompt lengths are
// exact when the target has a tokenizer, and approximate (one common word
// taken as one token) otherwise.
type Dataset struct {
	Synthetic *Synthetic `yaml:"synthetic"`
	Prompts   *Prompts   `yaml:"prompts"`
	File      *File      `yaml:"file"`
	// Cancel cancels a fraction of the requests client-side; default none.
	Cancel *Cancel `yaml:"cancel"`
	// SystemPrompt is sent verbatim as a system message ahead of every
	// request's turns, whatever the source. Not empty; not with
	// synthetic.shared_system_prompt_length or synthetic.prefix.
	SystemPrompt string `yaml:"system_prompt"`
}

// Synthetic generates prompts of drawn lengths.
type Synthetic struct {
	// InputTokens is the prompt length. Default mean 128, stddev 0.
	InputTokens Lengths `yaml:"input_tokens"`
	// OutputTokens is sent as max_tokens. Default mean 64, stddev 0.
	OutputTokens Lengths `yaml:"output_tokens"`
	// SequenceDistribution, when set, draws each request's lengths from a
	// mix of (input, output) pairs instead of InputTokens and OutputTokens,
	// a pair by its percent of the requests, as AIPerf's --seq-dist: a
	// pair's stddev 0 sends its mean, else a normal draw rounded up.
	SequenceDistribution []SequencePair `yaml:"sequence_distribution"`
	// RangeRatio, when set, draws the input and output lengths uniformly
	// from [floor(mean × (1 − r)), ceil(mean × (1 + r))] instead of
	// normally, as AIPerf's --random-range-ratio (vLLM's style).
	RangeRatio *RangeRatio `yaml:"range_ratio"`
	// The fields below build the prefix-cache and multi-turn workloads, as
	// AIPerf synthesises them (workload.go); every one is off by default.
	// What they share between requests depends on the seed alone, not on
	// the probe, so that a warmup primes what its run then hits.
	//
	// SharedSystemPromptLength is the length in tokens of a generated
	// system message identical in every request (its words are drawn
	// once). 1 to 2^20; not with Prefix or Dataset.SystemPrompt.
	SharedSystemPromptLength int `yaml:"shared_system_prompt_length"`
	// Prefix is a pool of generated prompts, one of which (picked at
	// random, seeded) starts the first user message of each conversation.
	// Not with SharedSystemPromptLength, UserContextLength or
	// Dataset.SystemPrompt.
	Prefix *PrefixPool `yaml:"prefix"`
	// UserContextLength is the length in tokens of a generated user
	// message unique to each pool entry, sent after the system message and
	// before the turns. 1 to 2^20; needs Entries; not with Prefix.
	UserContextLength int `yaml:"user_context_length"`
	// Entries makes the dataset a pool of this many distinct
	// conversations, sent in a seeded shuffled order, reshuffled after each
	// pass, so that requests repeat and a server's prefix cache can hit.
	// 1 to 2^20; default none: every request is new.
	Entries int `yaml:"entries"`
	// Conversation makes each entry a multi-turn session.
	Conversation *Conversation `yaml:"conversation"`
	// Images and Audio attach noise images and audio clips to every
	// request, as content parts after its text (media.go); chat targets
	// only, not with Conversation. What each entry of a pool (Entries, else
	// 100 as AIPerf's dataset) carries is drawn once, before the run, from
	// the seed alone. Default none.
	Images *Images `yaml:"images"`
	Audio  *Audio  `yaml:"audio"`
	// Rankings makes every request a ranking request of a drawn query and
	// passages (rankings.go), as AIPerf synthesises them; input_tokens then
	// does not apply. Ranking endpoints only; of the options above, only
	// entries. Default none: a ranking endpoint splits the prompt into a
	// query and passages.
	Rankings *Rankings `yaml:"rankings"`
}

// SequencePair is one (input, output) shape of a SequenceDistribution.
type SequencePair struct {
	// InputTokens and OutputTokens: means >= 1 and whole, stddevs >= 0.
	InputTokens  Lengths `yaml:"input_tokens"`
	OutputTokens Lengths `yaml:"output_tokens"`
	// Percent is the pair's share of the requests, 0 to 100; the pairs'
	// add up to 100.
	Percent float64 `yaml:"percent"`
}

// RangeRatio is the half-width of a uniform length window, as a fraction
// of the mean: each 0 to below 1.
type RangeRatio struct {
	Input  float64 `yaml:"input"`
	Output float64 `yaml:"output"`
}

// Lengths is a normal distribution of token counts, truncated to at least 1.
type Lengths struct {
	// Mean is >= 1; for an output length, 0 (with Stddev 0) asks for no
	// limit: no max_tokens is sent.
	Mean float64 `yaml:"mean"`
	// Stddev is >= 0; 0 pins every request to Mean.
	Stddev float64 `yaml:"stddev"`
}

// NoLimit reports whether an output length asks for no limit.
func (ln Lengths) NoLimit() bool { return ln.Mean == 0 && ln.Stddev == 0 }

// SLO thresholds; a request is good when it succeeded and met every one that is
// set. Each is >= 0; 0 or absent means not set. The durations are maxima;
// OutputTokenThroughputPerUser (tokens/s, AIPerf's 1/ITL) is a minimum.
type SLO struct {
	TimeToFirstToken             Duration `yaml:"time_to_first_token"`
	TimeToFirstOutputToken       Duration `yaml:"time_to_first_output_token"`
	InterTokenLatency            Duration `yaml:"inter_token_latency"`
	RequestLatency               Duration `yaml:"request_latency"`
	OutputTokenThroughputPerUser float64  `yaml:"output_token_throughput_per_user"`
}

// Duration is a time.Duration written as in Go ("500ms", "1m30s").
type Duration time.Duration
