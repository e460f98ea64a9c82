package simulator

import (
	"errors"
	"fmt"
	"time"
)

// Defaults applied by New to zero fields of Config.
const (
	DefaultModel          = "inferprobe-simulator"
	defaultMaxTokens      = 256
	defaultNaturalTokens  = 128
	defaultTokensPerChunk = 1
)

// Config configures a Server. Zero values take the defaults documented on
// each field.
type Config struct {
	Profile          Profile
	Seed             uint64 // all randomness derives from it
	Model            string // served model name, default "inferprobe-simulator"
	MaxConcurrency   int    // sequences decoded at once; further requests queue (FIFO); 0 = unlimited
	DefaultMaxTokens int    // output cap when the request gives none; default 256
	NaturalTokens    int    // mean length at which generation stops by itself (EOS) unless ignore_eos; default 128
	TokensPerChunk   int    // tokens per SSE content chunk; default 1 (multi-token chunks are what some servers send); a chunk leaves when its last token is due
	IgnoreMinTokens  bool   // ignore min_tokens and ignore_eos, stopping early as a server that does not support them does
	OmitUsage        bool   // never send usage on chat and completions, as servers without it do
	// ReasoningTokens makes the first this many output tokens of chat and
	// completions replies reasoning, as a reasoning model's parser emits
	// them: chat's delta.reasoning_content, or completions' choice
	// reasoning_content beside an empty text; usage counts them in
	// completion_tokens_details.reasoning_tokens. 0 for none.
	ReasoningTokens int
	// PrefillPerImage and PrefillPerAudioSecond add to a chat request's
	// time to first token for each image (image_url part) and each second
	// of WAV or MP3 audio (input_audio part) it carries, as a multimodal model's
	// encoders do before prefill. 0 for none.
	PrefillPerImage, PrefillPerAudioSecond time.Duration
}

// withDefaults validates c and fills in its zero fields.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"max concurrency", c.MaxConcurrency}, {"default max tokens", c.DefaultMaxTokens}, {"natural tokens", c.NaturalTokens}, {"tokens per chunk", c.TokensPerChunk}, {"reasoning tokens", c.ReasoningTokens}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %d", f.name, f.v))
		}
	}
	if c.PrefillPerImage < 0 || c.PrefillPerAudioSecond < 0 {
		errs = append(errs, fmt.Errorf("prefill per image and per audio second must not be negative, got %s and %s", c.PrefillPerImage, c.PrefillPerAudioSecond))
	}
	if err := c.Profile.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("invalid simulator config: %w", err)
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.DefaultMaxTokens == 0 {
		c.DefaultMaxTokens = defaultMaxTokens
	}
	if c.NaturalTokens == 0 {
		c.NaturalTokens = defaultNaturalTokens
	}
	if c.TokensPerChunk == 0 {
		c.TokensPerChunk = defaultTokensPerChunk
	}
	c.Profile = c.Profile.normalized()
	return c, nil
}
