package simulator

import (
	"strconv"

	"github.com/alecthomas/kingpin/v2"
)

// AddFlags registers the simulator's --sim.* flags on cmd and returns the
// Config they fill when the command line is parsed. Pass it to New after
// parsing; New validates it.
func AddFlags(cmd *kingpin.CmdClause) *Config {
	c := &Config{}
	p := &c.Profile
	cmd.Flag("sim.ttft", "Base time to first token, counted from when a request gets a decode slot (time spent queued for one, see --sim.max-concurrency, comes on top). Drawn per request from --sim.distribution.").
		Default("100ms").DurationVar(&p.TTFT)
	cmd.Flag("sim.prefill-per-token", "Extra time to first token per prompt token, so long prompts start later, as prefill does on a GPU (e.g. 50us: 2,000 prompt tokens add 100ms). The simulator counts one token per whitespace-separated word.").
		Default("0s").DurationVar(&p.PrefillPerToken)
	cmd.Flag("sim.prefill-per-image", "Extra time to first token per image a chat request carries (image_url content parts), as a vision encoder adds (e.g. 20ms).").
		Default("0s").DurationVar(&c.PrefillPerImage)
	cmd.Flag("sim.prefill-per-audio-second", "Extra time to first token per second of WAV or MP3 audio a chat request carries (input_audio content parts; an MP3's length from its frame headers), as an audio encoder adds (e.g. 10ms).").
		Default("0s").DurationVar(&c.PrefillPerAudioSecond)
	cmd.Flag("sim.itl", "Mean inter-token latency: the time between output tokens, one decode step.").
		Default("10ms").DurationVar(&p.ITL)
	cmd.Flag("sim.distribution", "How TTFT and each inter-token gap are drawn around their means: constant (exactly the mean), normal (symmetric, clamped at 0) or lognormal (right-skewed with a long tail, like real servers).").
		Default(Constant).EnumVar(&p.Distribution, distributions...)
	cmd.Flag("sim.jitter", "Spread of normal and lognormal draws as a coefficient of variation (stddev/mean): 0.2 means a typical deviation of 20% of the mean. Ignored for constant.").
		Default("0.2").Float64Var(&p.Jitter)
	cmd.Flag("sim.error-rate", "Fraction of requests (0 to 1) answered with HTTP 500 and an OpenAI error body instead of a completion, e.g. 0.01 for 1%.").
		Default("0").Float64Var(&p.ErrorRate)
	cmd.Flag("sim.stall-rate", "Fraction of streams (0 to 1) that go silent once, somewhere mid-stream, for --sim.stall-duration and then carry on.").
		Default("0").Float64Var(&p.StallRate)
	cmd.Flag("sim.stall-duration", "How long a stalled stream stays silent. Make it longer than the prober's stall_timeout to see stall errors, shorter to see only a latency spike.").
		Default("5s").DurationVar(&p.StallDuration)
	cmd.Flag("sim.seed", "Seed for every random choice: the same seed and the same request order give the same output lengths, text and latencies.").
		Default("42").Uint64Var(&c.Seed)
	cmd.Flag("sim.model", "Model name served: listed on /v1/models; requests naming another model get a 404, as from vLLM.").
		Default(DefaultModel).StringVar(&c.Model)
	cmd.Flag("sim.max-concurrency", "Sequences decoded at once, like a server's batch limit (vLLM --max-num-seqs). Further requests wait in a FIFO queue and the wait adds to their TTFT. 0 = unlimited.").
		Default("256").IntVar(&c.MaxConcurrency)
	cmd.Flag("sim.default-max-tokens", "Output cap for requests that set neither max_completion_tokens nor max_tokens.").
		Default(strconv.Itoa(defaultMaxTokens)).IntVar(&c.DefaultMaxTokens)
	cmd.Flag("sim.natural-tokens", "Mean output length at which generation stops by itself (EOS, finish_reason \"stop\"); lengths are geometric around it, raised to min_tokens and cut at the cap. Requests with ignore_eos get exactly the cap.").
		Default(strconv.Itoa(defaultNaturalTokens)).IntVar(&c.NaturalTokens)
	cmd.Flag("sim.tokens-per-chunk", "Output tokens per SSE content chunk. 1 is one event per token; larger values mimic servers that batch tokens into chunks (vLLM --stream-interval), which clients must not count as one token each.").
		Default(strconv.Itoa(defaultTokensPerChunk)).IntVar(&c.TokensPerChunk)
	cmd.Flag("sim.ignore-min-tokens", "Ignore min_tokens and ignore_eos: outputs stop at their natural length, as on a server that does not support them, so probes that pin the length see inferprobe_output_length_mismatches_total rise.").
		BoolVar(&c.IgnoreMinTokens)
	cmd.Flag("sim.reasoning-tokens", "Output tokens at the start of each chat and completions reply sent as reasoning, as a reasoning model does: chat's delta.reasoning_content, completions' reasoning_content beside an empty text, counted in usage's completion_tokens_details.reasoning_tokens. Clients must count them for TTFT and ITL but not for the time to first output token.").
		Default("0").IntVar(&c.ReasoningTokens)
	cmd.Flag("sim.omit-usage", "Never send usage on chat and completions, even when asked (stream_options.include_usage), as servers without it do: clients must count tokens themselves.").
		BoolVar(&c.OmitUsage)
	return c
}
