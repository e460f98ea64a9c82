// Package scenarios defines the scenario file: what to probe, how often and with
// which traffic. Load decodes strictly and validates fully, so a Config that Load
// returns can be used without further checks.
//
// The field comments below are the configuration reference; example.yml shows
// every field with its default.
package scenarios

import "time"

// Config is one scenario file.
type Config struct {
	Global Global `yaml:"global"`
	// Targets are the servers to probe, by name; at least one. Names may use
	// letters, digits, '_', '.' and '-', as they become label values.
	Targets map[string]*Target `yaml:"targets"`
	// Probes are the request streams, by name (same rules as target names); at
	// least one. The name is the scenario label.
	Probes map[string]*Probe `yaml:"probes"`
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

// Endpoint types the prober speaks.
const (
	EndpointChat        = "chat"
	EndpointCompletions = "completions"
)

// Target is one inference server endpoint.
type Target struct {
	// URL is the API base, e.g. http://127.0.0.1:8000/v1; the endpoint path is
	// appended to it. Required; http or https, with a host, and without
	// credentials, query or fragment.
	URL string `yaml:"url"`
	// Endpoint is chat (/chat/completions) or completions (/completions).
	// Default chat.
	Endpoint string `yaml:"endpoint"`
	// Model is sent in every request and used as the model label. Required.
	Model string `yaml:"model"`
	// APIKeyFile or APIKeyEnv supply a key sent as "Authorization: Bearer KEY";
	// at most one may be set. The file holds only the key (surrounding
	// whitespace is trimmed); a relative path is relative to the scenario
	// file's directory, and Load rewrites it to the resolved path. The
	// environment variable must be set and non-empty.
	APIKeyFile string `yaml:"api_key_file"`
	APIKeyEnv  string `yaml:"api_key_env"`
	// Headers are added to every request. Authorization may not be set
	// together with an API key.
	Headers map[string]string `yaml:"headers"`
	// Stream asks for SSE streaming. Default true.
	Stream *bool `yaml:"stream"`
	// Timeout bounds a whole request. Default 120s; > 0.
	Timeout Duration `yaml:"timeout"`
	// StallTimeout bounds the silence between two chunks of a stream.
	// Default 30s, or Timeout if that is shorter; > 0 and at most Timeout.
	StallTimeout Duration `yaml:"stall_timeout"`

	// APIKey is resolved from APIKeyFile or APIKeyEnv at load time. Never logged.
	APIKey string `yaml:"-"`
}

// Streaming reports whether requests to t ask for a stream.
func (t *Target) Streaming() bool { return t.Stream == nil || *t.Stream }

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
)

// Arrival says when requests are sent: open-loop at a rate (poisson, constant,
// gamma), which may ramp or step through a series, or closed-loop with a number
// of requests kept in flight (concurrency), which may ramp.
type Arrival struct {
	// Pattern is poisson (exponential gaps, like many independent users),
	// constant (equal gaps), gamma (gaps shaped by smoothness) or concurrency
	// (closed loop: the next request goes the moment one finishes).
	// Default poisson.
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
	// MaxConcurrency caps the requests an open-loop pattern has in flight: a
	// request due while the cap is full waits for a slot, and the wait is
	// exported as inferprobe_concurrency_wait_seconds, not counted in TTFT or
	// schedule lag. >= 1; default no cap.
	MaxConcurrency int `yaml:"max_concurrency"`
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
	// the last, and not allowed there: the last step holds.
	Duration Duration `yaml:"duration"`
}

// Dataset says what the requests contain. Exactly one source must be set
// when dataset is written.
type Dataset struct {
	Synthetic *Synthetic `yaml:"synthetic"`
}

// Synthetic generates prompts of drawn lengths.
type Synthetic struct {
	// InputTokens is the prompt length. Default mean 128, stddev 0.
	InputTokens Lengths `yaml:"input_tokens"`
	// OutputTokens is sent as max_tokens. Default mean 64, stddev 0.
	OutputTokens Lengths `yaml:"output_tokens"`
}

// Lengths is a normal distribution of token counts, truncated to at least 1.
type Lengths struct {
	// Mean is >= 1.
	Mean float64 `yaml:"mean"`
	// Stddev is >= 0; 0 pins every request to Mean.
	Stddev float64 `yaml:"stddev"`
}

// SLO thresholds; a request is good when it succeeded and met every one that is
// set. Each is >= 0; 0 or absent means not set.
type SLO struct {
	TimeToFirstToken  Duration `yaml:"time_to_first_token"`
	InterTokenLatency Duration `yaml:"inter_token_latency"`
	RequestLatency    Duration `yaml:"request_latency"`
}

// Duration is a time.Duration written as in Go ("500ms", "1m30s").
type Duration time.Duration
