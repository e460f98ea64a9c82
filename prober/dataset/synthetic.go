// Package dataset produces the prompts a probe sends.
package dataset

import (
	"math"
	"math/rand/v2"

	"github.com/inferprobe/inferprobe/prober/seeded"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Prompt is one request's content and intended lengths. Endpoints turn it into
// their own body: chat-like APIs send Messages when set (a multi-turn session's
// history, ending with this turn's user message), else Text as one user message.
type Prompt struct {
	Text     string
	Messages []Message
	// Session names the multi-turn session the request belongs to; empty for
	// single requests. Sent in the target's sticky-session header.
	Session string
	// InputTokens is the prompt length. Without a tokenizer it is
	// approximate: one word is taken as one token.
	InputTokens int
	// Exact says InputTokens was counted with the target's tokenizer; false
	// marks an approximate length, so reports can say so.
	Exact bool
	// OutputTokens is the output length to ask for (max_tokens); 0 asks
	// for no limit, and the request sends none.
	OutputTokens int
	// Media are the images and audio sent after the last message's text;
	// nil for none. Shared between the requests of a pool entry: read only.
	// Earlier messages carry their own (Message.Media).
	Media *Media
	// Passages, when set, make the prompt a ranking request's: Text is the
	// query, and these the passages to rank against it. InputTokens counts
	// them all.
	Passages []string
}

// Message is one turn of a conversation.
type Message struct {
	Role    string // system, user or assistant
	Content string
	// Media are the images and audio sent after Content, as the request
	// of that turn sent them; nil for none.
	Media *Media
}

// Synthetic draws prompt lengths from normal distributions and fills prompts
// with random common words, so no two prompts share a cacheable prefix.
type Synthetic struct {
	cfg     scenarios.Synthetic
	words   *Text
	lengths *rand.Rand
	text    *rand.Rand
}

// NewSynthetic returns a generator of approximate lengths whose length and
// text choices come from their own seeded streams under component.
func NewSynthetic(cfg scenarios.Synthetic, seed uint64, component string) *Synthetic {
	t, _ := NewText(nil) // never fails without a tokenizer
	return newSynthetic(cfg, seed, component, t)
}

func newSynthetic(cfg scenarios.Synthetic, seed uint64, component string, t *Text) *Synthetic {
	return &Synthetic{
		cfg:     cfg,
		words:   t,
		lengths: seeded.New(seed, component+"/lengths"),
		text:    seeded.New(seed, component+"/text"),
	}
}

// Next returns the next prompt. With a tokenizer, InputTokens is the
// tokenizer's count of the text, which equals the drawn length for
// tokenizers that split words at spaces (GPT-2, Llama 3, Qwen and most BPE
// tokenizers).
func (s *Synthetic) Next() Prompt {
	if r := s.cfg.Rankings; r != nil {
		return s.words.ranking(s.lengths, s.text, *r)
	}
	in, out := drawLengths(s.lengths, s.cfg)
	text := s.words.Words(s.text, in)
	if s.words.Exact() {
		in = s.words.Count(text)
	}
	return Prompt{Text: text, InputTokens: in, Exact: s.words.Exact(), OutputTokens: out}
}

// drawLengths draws a request's input and output lengths: from the
// sequence distribution, the range ratio's windows, or the normal
// distributions of cfg.
func drawLengths(rng *rand.Rand, cfg scenarios.Synthetic) (in, out int) {
	switch {
	case cfg.SequenceDistribution != nil:
		// AIPerf's: the first pair whose cumulative share passes a uniform draw.
		u, cum := rng.Float64()*100, 0.0
		pair := cfg.SequenceDistribution[len(cfg.SequenceDistribution)-1]
		for _, p := range cfg.SequenceDistribution {
			if cum += p.Percent; cum > u {
				pair = p
				break
			}
		}
		return pairLength(rng, pair.InputTokens), pairLength(rng, pair.OutputTokens)
	case cfg.RangeRatio != nil:
		return uniform(rng, cfg.InputTokens.Mean, cfg.RangeRatio.Input), uniform(rng, cfg.OutputTokens.Mean, cfg.RangeRatio.Output)
	}
	return draw(rng, cfg.InputTokens), drawOutput(rng, cfg.OutputTokens)
}

// pairLength is a sequence distribution pair's length: its mean, or with a
// stddev a normal draw rounded up (AIPerf's sample_positive_normal_integer).
func pairLength(rng *rand.Rand, l scenarios.Lengths) int {
	n := int(l.Mean)
	if l.Stddev > 0 {
		n = positiveInteger(rng, l.Mean, l.Stddev)
	}
	return min(n, int(scenarios.TokenBound.Max))
}

// uniform is a whole length drawn uniformly from [floor(mean × (1 − r)),
// ceil(mean × (1 + r))], at least 1, as vLLM's random dataset (and AIPerf's
// --random-range-ratio) draws it.
func uniform(rng *rand.Rand, mean, r float64) int {
	lo := max(int(math.Floor(mean*(1-r))), 1)
	hi := max(int(math.Ceil(mean*(1+r))), lo)
	return min(lo+rng.IntN(hi-lo+1), int(scenarios.TokenBound.Max))
}

// drawOutput is draw for an output length: 0, no limit, for a mean of 0.
func drawOutput(rng *rand.Rand, l scenarios.Lengths) int {
	if l.NoLimit() {
		return 0
	}
	return draw(rng, l)
}

// draw samples a length from N(mean, stddev), rounded and truncated to
// scenarios.TokenBound, which a tail draw could pass.
func draw(rng *rand.Rand, l scenarios.Lengths) int {
	v := l.Mean
	if l.Stddev > 0 {
		v += rng.NormFloat64() * l.Stddev
	}
	return int(min(max(math.Round(v), scenarios.TokenBound.Min), scenarios.TokenBound.Max))
}
