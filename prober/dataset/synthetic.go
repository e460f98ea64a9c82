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
}

// Message is one turn of a conversation.
type Message struct {
	Role    string // system, user or assistant
	Content string
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
	in := draw(s.lengths, s.cfg.InputTokens)
	out := drawOutput(s.lengths, s.cfg.OutputTokens)
	text := s.words.Words(s.text, in)
	if s.words.Exact() {
		in = s.words.Count(text)
	}
	return Prompt{Text: text, InputTokens: in, Exact: s.words.Exact(), OutputTokens: out}
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
