package dataset

import (
	"math/rand/v2"

	"github.com/inferprobe/inferprobe/scenarios"
)

// ranking draws a ranking request as AIPerf's synthetic rankings composer
// does: the passage count, then the query's length and each passage's, all
// from lengths; the words from text. Every count and length is a
// positiveInteger, truncated to its bound, which a tail draw could pass.
func (t *Text) ranking(lengths, text *rand.Rand, r scenarios.Rankings) Prompt {
	draw := func(l scenarios.Lengths, b *scenarios.Bound) int {
		return min(positiveInteger(lengths, l.Mean, l.Stddev), int(b.Max))
	}
	n := draw(r.Passages, &scenarios.PassageBound)
	p := Prompt{Text: t.Words(text, draw(r.QueryTokens, &scenarios.TokenBound)), Passages: make([]string, n), Exact: t.Exact()}
	p.InputTokens = t.Count(p.Text)
	for i := range n {
		p.Passages[i] = t.Words(text, draw(r.PassageTokens, &scenarios.TokenBound))
		p.InputTokens += t.Count(p.Passages[i])
	}
	return p
}
