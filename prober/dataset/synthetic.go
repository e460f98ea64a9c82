// Package dataset produces the prompts a probe sends.
package dataset

import (
	"math"
	"math/rand/v2"
	"strings"

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
	// InputTokens is the intended prompt length. Without a tokenizer it is
	// approximate: one word is taken as one token.
	InputTokens int
	// OutputTokens is the output length to ask for (max_tokens).
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
	lengths *rand.Rand
	text    *rand.Rand
}

// NewSynthetic returns a generator whose length and text choices come from their
// own seeded streams under component.
func NewSynthetic(cfg scenarios.Synthetic, seed uint64, component string) *Synthetic {
	return &Synthetic{
		cfg:     cfg,
		lengths: seeded.New(seed, component+"/lengths"),
		text:    seeded.New(seed, component+"/text"),
	}
}

// Next returns the next prompt.
func (s *Synthetic) Next() Prompt {
	in := draw(s.lengths, s.cfg.InputTokens)
	out := draw(s.lengths, s.cfg.OutputTokens)
	var b strings.Builder
	b.Grow(in * 7)
	for i := range in {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[s.text.IntN(len(words))])
	}
	return Prompt{Text: b.String(), InputTokens: in, OutputTokens: out}
}

// draw samples a length from N(mean, stddev), rounded and truncated to ≥ 1.
func draw(rng *rand.Rand, l scenarios.Lengths) int {
	v := l.Mean
	if l.Stddev > 0 {
		v += rng.NormFloat64() * l.Stddev
	}
	return max(1, int(math.Round(v)))
}
