package scenarios

import (
	"strings"
	"testing"
)

// valid is a minimal valid scenario; each case below edits one spot of it.
const valid = `targets:
  qwen:
    url: http://127.0.0.1:8000/v1
    model: Qwen/Qwen3-0.6B
probes:
  steady:
    target: qwen
    arrival: {rate: 0.2}
`

// edit replaces the first old in valid with new, failing when old is absent.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(valid, old) {
		t.Fatalf("%q is not in the valid scenario", old)
	}
	return strings.Replace(valid, old, new, 1)
}

// parseError parses data and returns the error text, failing when there is none.
func parseError(t *testing.T, data string) string {
	t.Helper()
	c, err := Parse([]byte(data), "s.yml")
	if err == nil {
		t.Fatalf("no error; config %+v", c)
	}
	if c != nil {
		t.Errorf("config returned together with an error")
	}
	return err.Error()
}

func TestValid(t *testing.T) {
	if _, err := Parse([]byte(valid), "s.yml"); err != nil {
		t.Fatal(err)
	}
}

func TestValidationErrors(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		// Names.
		{"target name", "  qwen:\n", "  qwen 1:\n", `s.yml:2:3: targets.qwen 1: name "qwen 1" may use only letters, digits, '_', '.' and '-' (it becomes a label value)
s.yml:7:13: probes.steady.target: target "qwen" is not defined; defined targets: qwen 1`},
		{"probe name", "  steady:", "  steady/1:", `s.yml:6:3: probes.steady/1: name "steady/1" may use only letters, digits, '_', '.' and '-' (it becomes a label value)`},

		// Target URL.
		{"url missing", "    url: http://127.0.0.1:8000/v1\n", "", `s.yml:2:3: targets.qwen.url: is required, e.g. url: http://127.0.0.1:8000/v1`},
		{"url without scheme", "http://127.0.0.1:8000/v1", "localhost:8000/v1", `s.yml:3:10: targets.qwen.url: must start with http:// or https://, e.g. url: http://127.0.0.1:8000/v1`},
		{"url ip without scheme", "http://127.0.0.1:8000/v1", "127.0.0.1:8000/v1", `s.yml:3:10: targets.qwen.url: must start with http:// or https://, e.g. url: http://127.0.0.1:8000/v1`},
		{"url scheme", "http://127.0.0.1:8000/v1", "grpc://127.0.0.1:8000", `s.yml:3:10: targets.qwen.url: must start with http:// or https://, e.g. url: http://127.0.0.1:8000/v1`},
		{"url unparsable", "http://127.0.0.1:8000/v1", "http://127.0.0.1:x/v1", `s.yml:3:10: targets.qwen.url: is not a valid URL: invalid port ":x" after host`},
		{"url host", "http://127.0.0.1:8000/v1", "http:///v1", `s.yml:3:10: targets.qwen.url: has no host, e.g. url: http://127.0.0.1:8000/v1`},
		{"url credentials", "http://127.0.0.1:8000/v1", "http://admin:hunter2@127.0.0.1:8000/v1", `s.yml:3:10: targets.qwen.url: must not hold a user or password; put the key in api_key_file or api_key_env`},
		{"url query", "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1?key=1", `s.yml:3:10: targets.qwen.url: must not have a query (?...) or fragment (#...); write only the API base, e.g. url: http://127.0.0.1:8000/v1`},
		{"url fragment", "http://127.0.0.1:8000/v1", `"http://127.0.0.1:8000/v1#x"`, `s.yml:3:10: targets.qwen.url: must not have a query (?...) or fragment (#...); write only the API base, e.g. url: http://127.0.0.1:8000/v1`},
		{"url endpoint path", "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions/", `s.yml:3:10: targets.qwen.url: is the API base, so leave out "/chat/completions": endpoint "chat" adds its own path`},

		// Target fields.
		{"server_metrics", "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n    server_metrics: 127.0.0.1:8000\n", `s.yml:5:21: targets.qwen.server_metrics: must be "off" or an http(s) URL without a password, e.g. server_metrics: http://10.0.0.5:8000/metrics`},
		{"endpoint", "    model:", "    endpoint: chats\n    model:", `s.yml:4:15: targets.qwen.endpoint: must be one of chat, cohere_rerank, completions, embeddings, messages, nim_ranking, responses, tei_rerank, template, tgi, not "chats"`},
		{"model missing", "    model: Qwen/Qwen3-0.6B\n", "", `s.yml:2:3: targets.qwen.model: is required, e.g. model: Qwen/Qwen3-0.6B (a name the server lists at GET /v1/models)`},
		{"model empty", "    model: Qwen/Qwen3-0.6B\n", "    model:\n", `s.yml:4:5: targets.qwen.model: is required, e.g. model: Qwen/Qwen3-0.6B (a name the server lists at GET /v1/models)`},
		{"timeout zero", "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n    timeout: 0s\n", `s.yml:5:14: targets.qwen.timeout: must be > 0, e.g. timeout: 120s`},
		{"timeout negative", "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n    timeout: -1s\n", `s.yml:5:14: targets.qwen.timeout: must be > 0, e.g. timeout: 120s`},
		{"stall_timeout zero", "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n    stall_timeout: 0s\n", `s.yml:5:20: targets.qwen.stall_timeout: must be > 0, e.g. stall_timeout: 30s`},
		{"stall_timeout above timeout", "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n    timeout: 10s\n    stall_timeout: 30s\n", `s.yml:6:20: targets.qwen.stall_timeout: must be at most timeout (10s)`},
		{"stall_timeout above default timeout", "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n    stall_timeout: 5m\n", `s.yml:5:20: targets.qwen.stall_timeout: must be at most timeout (2m0s)`},
		{"header name", "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n    headers: {\"X Team\": infra}\n", `s.yml:5:15: targets.qwen.headers.X Team: "X Team" is not a valid header name; use letters, digits and !#$%&'*+-.^_` + "`" + `|~`},
		{"header value", "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n    headers: {X-Team: \"a\\nb\"}\n", `s.yml:5:23: targets.qwen.headers.X-Team: value has a line break or control character; a header value is one line of text`},

		// Probe fields.
		{"probe target missing", "    target: qwen\n", "", `s.yml:6:3: probes.steady.target: is required; defined targets: qwen`},
		{"probe target undefined", "target: qwen", "target: qwn", `s.yml:7:13: probes.steady.target: target "qwn" is not defined; defined targets: qwen`},

		// Arrival: every wrong combination says what to write instead.
		{"pattern", "{rate: 0.2}", "{pattern: burst, rate: 0.2}", `s.yml:8:24: probes.steady.arrival.pattern: must be poisson, constant, gamma, concurrency or user_centric, not "burst"`},
		{"user_centric without users", "{rate: 0.2}\n", "{pattern: user_centric, rate: 0.2}\n    dataset: {synthetic: {conversation: {turns: {mean: 3}}}}\n", `s.yml:8:5: probes.steady.arrival.users: must be >= 1, e.g. users: 8 (each sends a turn every users/rate seconds)`},
		{"user_centric without conversations", "{rate: 0.2}", "{pattern: user_centric, rate: 0.2, users: 4}", `s.yml:6:3: probes.steady.dataset.synthetic.conversation.turns.mean: must be >= 2 for pattern user_centric, whose users each send a conversation (for single-turn requests, use pattern poisson)`},
		{"user_centric series", "{rate: 0.2}", "{pattern: user_centric, users: 4, series: [{rate: 1}]}", `s.yml:6:3: probes.steady.dataset.synthetic.conversation.turns.mean: must be >= 2 for pattern user_centric, whose users each send a conversation (for single-turn requests, use pattern poisson)
s.yml:8:5: probes.steady.arrival.rate: must be > 0, e.g. rate: 2 (requests per second, shared by the users)
s.yml:8:48: probes.steady.arrival.series: does not apply to pattern user_centric, whose users share a steady rate; remove it`},
		{"max_prefill_concurrency above concurrency", "{rate: 0.2}", "{pattern: concurrency, concurrency: 2, max_prefill_concurrency: 3}", `s.yml:8:78: probes.steady.arrival.max_prefill_concurrency: must be at most the requests in flight (2): only requests in flight wait for a first token`},
		{"max_prefill_concurrency zero", "{rate: 0.2}", "{rate: 0.2, max_prefill_concurrency: 0}", `s.yml:8:51: probes.steady.arrival.max_prefill_concurrency: must be >= 1; leave it out for no cap`},
		{"max_prefill_concurrency_ramp_over alone", "{rate: 0.2}", "{rate: 0.2, max_prefill_concurrency_ramp_over: 5s}", `s.yml:8:61: probes.steady.arrival.max_prefill_concurrency_ramp_over: ramps the cap max_prefill_concurrency from 1; set max_prefill_concurrency, e.g. max_prefill_concurrency: 4`},
		{"users without user_centric", "{rate: 0.2}", "{rate: 0.2, users: 4}", `s.yml:8:33: probes.steady.arrival.users: applies only to pattern user_centric; remove it, or write pattern: user_centric`},
		{"gamma without smoothness", "{rate: 0.2}", "{pattern: gamma, rate: 0.2}", `s.yml:8:5: probes.steady.arrival.smoothness: must be > 0, e.g. smoothness: 0.5 (below 1 burstier than poisson, 1 poisson, above 1 smoother)`},
		{"gamma smoothness zero", "{rate: 0.2}", "{pattern: gamma, rate: 0.2, smoothness: 0}", `s.yml:8:54: probes.steady.arrival.smoothness: must be > 0, e.g. smoothness: 0.5 (below 1 burstier than poisson, 1 poisson, above 1 smoother)`},
		{"gamma smoothness negative", "{rate: 0.2}", "{pattern: gamma, rate: 0.2, smoothness: -1}", `s.yml:8:54: probes.steady.arrival.smoothness: must be > 0, e.g. smoothness: 0.5 (below 1 burstier than poisson, 1 poisson, above 1 smoother)`},
		{"smoothness without gamma", "{rate: 0.2}", "{rate: 0.2, smoothness: 2}", `s.yml:8:38: probes.steady.arrival.smoothness: applies only to pattern gamma; remove it, or write pattern: gamma`},
		{"smoothness with concurrency", "{rate: 0.2}", "{pattern: concurrency, concurrency: 4, smoothness: 2}", `s.yml:8:65: probes.steady.arrival.smoothness: applies only to pattern gamma; remove it, or write pattern: gamma`},
		{"concurrency with open loop", "{rate: 0.2}", "{rate: 0.2, concurrency: 4}", `s.yml:8:39: probes.steady.arrival.concurrency: applies only to pattern concurrency; write pattern: concurrency for a closed loop, or max_concurrency: 4 to cap the requests poisson has in flight`},
		{"max_concurrency zero", "{rate: 0.2}", "{rate: 0.2, max_concurrency: 0}", `s.yml:8:43: probes.steady.arrival.max_concurrency: must be >= 1; leave it out for no cap`},
		{"max_concurrency fraction", "{rate: 0.2}", "{rate: 0.2, max_concurrency: 1.5}", `s.yml:8:43: probes.steady.arrival.max_concurrency: must be a whole number, not 1.5`},
		{"series with rate", "{rate: 0.2}", "{rate: 0.2, series: [{rate: 1}]}", `s.yml:8:21: probes.steady.arrival.rate: cannot be used with series, whose steps set the rate; remove it, or write the rates as steps`},
		{"series with ramp", "{rate: 0.2}", "{series: [{rate: 1}], ramp_to: 2, ramp_over: 1m}", `s.yml:8:45: probes.steady.arrival.ramp_to: cannot be used with series, whose steps set the rate; remove it, or write the rates as steps
s.yml:8:59: probes.steady.arrival.ramp_over: cannot be used with series, whose steps set the rate; remove it, or write the rates as steps`},
		{"series empty", "{rate: 0.2}", "{series: []}", `s.yml:8:15: probes.steady.arrival.series: must list at least one step, e.g. series: [{rate: 1, duration: 5m}, {rate: 4}]`},
		{"series step without rate", "{rate: 0.2}", "{series: [{duration: 1m}, {rate: 1}]}", `s.yml:8:24: probes.steady.arrival.series[0].rate: must be >= 0 (0 pauses), e.g. rate: 1`},
		{"series step rate negative", "{rate: 0.2}", "{series: [{rate: -1, duration: 1m}, {rate: 1}]}", `s.yml:8:31: probes.steady.arrival.series[0].rate: must be >= 0 (0 pauses), e.g. rate: 1`},
		{"series last rate zero", "{rate: 0.2}", "{series: [{rate: 1, duration: 1m}, {rate: 0}]}", `s.yml:8:56: probes.steady.arrival.series[1].rate: must be > 0 in the last step, whose rate holds to the end, e.g. rate: 1`},
		{"series last with duration", "{rate: 0.2}", "{series: [{rate: 1, duration: 1m}, {rate: 2, duration: 1m}]}", `s.yml:8:69: probes.steady.arrival.series[1].duration: is not allowed in the last step, whose rate holds to the end; remove it`},
		{"series step without duration", "{rate: 0.2}", "{series: [{rate: 1}, {rate: 2}]}", `s.yml:8:24: probes.steady.arrival.series[0].duration: must be > 0 in every step but the last, e.g. duration: 5m`},
		{"series step duration zero", "{rate: 0.2}", "{series: [{rate: 1, duration: 0s}, {rate: 2}]}", `s.yml:8:44: probes.steady.arrival.series[0].duration: must be > 0 in every step but the last, e.g. duration: 5m`},
		{"series not a list", "{rate: 0.2}", "{series: {rate: 1}}", `s.yml:8:23: probes.steady.arrival.series: must be a list, not a mapping`},
		{"series step not a mapping", "{rate: 0.2}", "{series: [1]}", `s.yml:8:24: probes.steady.arrival.series[0]: must be a mapping with the fields rate, duration, not 1`},
		{"ramp_to without ramp_over", "{rate: 0.2}", "{rate: 0.2, ramp_to: 2}", `s.yml:8:5: probes.steady.arrival.ramp_over: is required with ramp_to: the time the ramp takes, e.g. ramp_over: 10m`},
		{"ramp_over without ramp_to", "{rate: 0.2}", "{rate: 0.2, ramp_over: 10m}", `s.yml:8:5: probes.steady.arrival.ramp_to: is required with ramp_over: the rate the ramp reaches, e.g. ramp_to: 2`},
		{"ramp_to zero", "{rate: 0.2}", "{rate: 0.2, ramp_to: 0, ramp_over: 10m}", `s.yml:8:35: probes.steady.arrival.ramp_to: must be > 0 (the rate held after the ramp), e.g. ramp_to: 2`},
		{"ramp_over zero", "{rate: 0.2}", "{rate: 0.2, ramp_to: 2, ramp_over: 0s}", `s.yml:8:49: probes.steady.arrival.ramp_over: must be > 0 (the time the ramp takes), e.g. ramp_over: 10m`},
		{"ramp without rate", "{rate: 0.2}", "{ramp_to: 2, ramp_over: 1m}", `s.yml:8:5: probes.steady.arrival.rate: must be >= 0 when ramping (the rate the ramp starts from), e.g. rate: 0.2`},
		{"ramp rate negative", "{rate: 0.2}", "{rate: -1, ramp_to: 2, ramp_over: 1m}", `s.yml:8:21: probes.steady.arrival.rate: must be >= 0 when ramping (the rate the ramp starts from), e.g. rate: 0.2`},
		{"concurrency missing", "{rate: 0.2}", "{pattern: concurrency}", `s.yml:8:5: probes.steady.arrival.concurrency: must be >= 1, e.g. concurrency: 8 (requests kept in flight)`},
		{"concurrency zero", "{rate: 0.2}", "{pattern: concurrency, concurrency: 0}", `s.yml:8:50: probes.steady.arrival.concurrency: must be >= 1, e.g. concurrency: 8 (requests kept in flight)`},
		{"concurrency with rate", "{rate: 0.2}", "{pattern: concurrency, concurrency: 4, rate: 0.2}", `s.yml:8:59: probes.steady.arrival.rate: does not apply to pattern concurrency, which sends the next request as one finishes; remove it (for a rate with a cap on requests in flight, write pattern: poisson with max_concurrency)`},
		{"concurrency with series", "{rate: 0.2}", "{pattern: concurrency, concurrency: 4, series: [{rate: 1}]}", `s.yml:8:53: probes.steady.arrival.series: does not apply to pattern concurrency; ramp the requests in flight with ramp_to and ramp_over instead`},
		{"concurrency with max_concurrency", "{rate: 0.2}", "{pattern: concurrency, concurrency: 4, max_concurrency: 8}", `s.yml:8:70: probes.steady.arrival.max_concurrency: does not apply to pattern concurrency, which keeps exactly concurrency requests in flight; remove it`},
		{"concurrency ramp_to fraction", "{rate: 0.2}", "{pattern: concurrency, concurrency: 1, ramp_to: 2.5, ramp_over: 1m}", `s.yml:8:62: probes.steady.arrival.ramp_to: must be a whole number >= 1 (the requests in flight held after the ramp), e.g. ramp_to: 32`},
		{"concurrency ramp from negative", "{rate: 0.2}", "{pattern: concurrency, concurrency: -1, ramp_to: 8, ramp_over: 1m}", `s.yml:8:50: probes.steady.arrival.concurrency: must be >= 0 when ramping (the requests in flight the ramp starts from), e.g. concurrency: 1`},
		{"concurrency fraction", "{rate: 0.2}", "{pattern: concurrency, concurrency: 2.5}", `s.yml:8:50: probes.steady.arrival.concurrency: must be a whole number, not 2.5`},
		{"concurrency ramp incomplete", "{rate: 0.2}", "{pattern: concurrency, ramp_to: 8}", `s.yml:8:5: probes.steady.arrival.concurrency: must be >= 0 when ramping (the requests in flight the ramp starts from), e.g. concurrency: 1
s.yml:8:5: probes.steady.arrival.ramp_over: is required with ramp_to: the time the ramp takes, e.g. ramp_over: 10m`},
		{"rate missing", "    arrival: {rate: 0.2}\n", "", `s.yml:6:3: probes.steady.arrival.rate: must be > 0, e.g. rate: 0.2 (requests per second)`},
		{"rate zero", "rate: 0.2", "rate: 0", `s.yml:8:21: probes.steady.arrival.rate: must be > 0, e.g. rate: 0.2 (requests per second)`},
		{"rate negative", "rate: 0.2", "rate: -1", `s.yml:8:21: probes.steady.arrival.rate: must be > 0, e.g. rate: 0.2 (requests per second)`},
		{"rate infinite", "rate: 0.2", "rate: .inf", `s.yml:8:21: probes.steady.arrival.rate: must be at most 100,000 requests/s (arrival rate: 0 to 100,000 requests/s), not +Inf`},
		{"rate nan", "rate: 0.2", "rate: .nan", `s.yml:8:21: probes.steady.arrival.rate: must be > 0, e.g. rate: 0.2 (requests per second)`},
		{"dataset without source", "{rate: 0.2}\n", "{rate: 0.2}\n    dataset: {}\n", `s.yml:9:5: probes.steady.dataset: must set exactly one source (synthetic, prompts or file), e.g. synthetic: {input_tokens: {mean: 128}, output_tokens: {mean: 64}}`},
		{"input mean", "{rate: 0.2}\n", "{rate: 0.2}\n    dataset: {synthetic: {input_tokens: {mean: 0}}}\n", `s.yml:9:48: probes.steady.dataset.synthetic.input_tokens.mean: must be >= 1, e.g. mean: 128`},
		{"output mean", "{rate: 0.2}\n", "{rate: 0.2}\n    dataset: {synthetic: {output_tokens: {mean: 0.5}}}\n", `s.yml:9:49: probes.steady.dataset.synthetic.output_tokens.mean: must be >= 1 (or 0, with stddev 0, to send no max_tokens), e.g. mean: 64`},
		{"stddev", "{rate: 0.2}\n", "{rate: 0.2}\n    dataset: {synthetic: {input_tokens: {stddev: -1}}}\n", `s.yml:9:50: probes.steady.dataset.synthetic.input_tokens.stddev: must be >= 0 (0 sends exactly mean tokens)`},
		{"slo negative", "{rate: 0.2}\n", "{rate: 0.2}\n    slo: {time_to_first_token: -1ms}\n", `s.yml:9:32: probes.steady.slo.time_to_first_token: must be >= 0 (0 or absent means no SLO), not -1ms`},
		{"slo per-user throughput NaN", "{rate: 0.2}\n", "{rate: 0.2}\n    slo: {output_token_throughput_per_user: .nan}\n", `s.yml:9:45: probes.steady.slo.output_token_throughput_per_user: must be a number of tokens per second >= 0 (0 or absent means no SLO), not NaN`},

		// Params.
		{"param model", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {model: x}\n", `s.yml:9:14: probes.steady.params.model: is set by inferprobe: the model comes from the target; set targets.qwen.model`},
		{"param messages", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {messages: []}\n", `s.yml:9:14: probes.steady.params.messages: is set by inferprobe: prompts come from the dataset; set dataset`},
		{"param prompt", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {prompt: hi}\n", `s.yml:9:14: probes.steady.params.prompt: is set by inferprobe: prompts come from the dataset; set dataset`},
		{"param stream", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {stream: false}\n", `s.yml:9:14: probes.steady.params.stream: is set by inferprobe: streaming comes from the target; set targets.qwen.stream`},
		{"param stream_options", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {stream_options: {include_usage: true}}\n", `s.yml:9:14: probes.steady.params.stream_options: is set by inferprobe: inferprobe always asks for usage in the stream; remove it`},
		{"param max_tokens", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {max_tokens: 5}\n", `s.yml:9:14: probes.steady.params.max_tokens: is set by inferprobe: output length comes from dataset.synthetic.output_tokens; set it there`},
		{"param max_completion_tokens", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {max_completion_tokens: 5}\n", `s.yml:9:14: probes.steady.params.max_completion_tokens: is set by inferprobe: output length comes from dataset.synthetic.output_tokens; set it there`},
		{"min_tokens negative", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {min_tokens: -1}\n", `s.yml:9:26: probes.steady.params.min_tokens: must be a whole number >= 0, e.g. min_tokens: 64`},
		{"min_tokens fraction", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {min_tokens: 1.5}\n", `s.yml:9:26: probes.steady.params.min_tokens: must be a whole number >= 0, e.g. min_tokens: 64`},
		{"min_tokens string", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {min_tokens: \"5\"}\n", `s.yml:9:26: probes.steady.params.min_tokens: must be a whole number >= 0, e.g. min_tokens: 64`},
		{"ignore_eos", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {ignore_eos: \"true\"}\n", `s.yml:9:26: probes.steady.params.ignore_eos: must be true or false`},
		{"param nan", "{rate: 0.2}\n", "{rate: 0.2}\n    params: {logit_bias: {\"42\": [1, .nan]}}\n", `s.yml:9:37: probes.steady.params.logit_bias.42[1]: .nan cannot be sent: JSON has no NaN or infinity`},

		// Sections.
		{"no targets", "targets:\n  qwen:\n    url: http://127.0.0.1:8000/v1\n    model: Qwen/Qwen3-0.6B\n", "targets: {}\n", `s.yml:1:1: targets: at least one target is required, e.g. targets: {vllm: {url: http://127.0.0.1:8000/v1, model: Qwen/Qwen3-0.6B}}
s.yml:4:13: probes.steady.target: target "qwen" is not defined; defined targets: (none)`},
		{"no probes", "probes:\n  steady:\n    target: qwen\n    arrival: {rate: 0.2}\n", "", `s.yml:1:1: probes: at least one probe or burst is required, e.g. probes: {steady: {target: qwen, arrival: {rate: 0.2}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseError(t, edit(t, tc.old, tc.new)); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
