package simulator

import (
	"context"
	"math/rand/v2"
	"time"
)

// generation is one request's decode: how many tokens, which words, and
// when each is due. Due times are absolute, each the previous plus one
// ITL draw, so waiting late for one token does not push the rest back.
type generation struct {
	rng    *rand.Rand
	itl    sampler
	tokens int // output length
	// reasoningTokens are the first of them, sent as reasoning; no chunk
	// holds both kinds.
	reasoningTokens int
	perChunk        int
	stallAt         int // the token (1..tokens; tokens means the final chunk) the stall delays; 0 for none
	stall           time.Duration
	emitted         int
	due             time.Time // when the last emitted token is due; the first token's time before any
	// observeITL, when set, is told each gap between two tokens (vLLM's inter-token latency).
	observeITL func(seconds float64)
}

func (g *generation) more() bool { return g.emitted < g.tokens }

// reasoning reports whether the next chunk is reasoning.
func (g *generation) reasoning() bool { return g.emitted < g.reasoningTokens }

// appendChunk appends the next chunk's text, " word" per token, to buf and
// returns it with the chunk's due time: that of its last token, as a
// server that batches tokens into chunks sends a chunk once it is full.
func (g *generation) appendChunk(buf []byte) ([]byte, time.Time) {
	end := min(g.emitted+g.perChunk, g.tokens)
	if g.reasoning() {
		end = min(end, g.reasoningTokens)
	}
	for ; g.emitted < end; g.emitted++ {
		if g.emitted > 0 {
			gap := g.itl.draw(g.rng)
			if g.emitted == g.stallAt {
				gap += g.stall
			}
			g.due = g.due.Add(gap)
			if g.observeITL != nil {
				g.observeITL(gap.Seconds())
			}
		}
		buf = append(buf, ' ')
		buf = append(buf, words[g.rng.IntN(len(words))]...)
	}
	return buf, g.due
}

// finishDue is when the final chunk is due: right after the last token,
// unless the stall falls there.
func (g *generation) finishDue() time.Time {
	if g.stallAt == g.tokens {
		return g.due.Add(g.stall)
	}
	return g.due
}

// clock sleeps a stream until absolute times, reusing one runtime timer.
type clock struct{ t *time.Timer }

func (c *clock) sleepUntil(ctx context.Context, due time.Time) error {
	d := time.Until(due)
	if d <= 0 {
		return ctx.Err()
	}
	if c.t == nil {
		c.t = time.NewTimer(d)
	} else {
		c.t.Reset(d)
	}
	select {
	case <-c.t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *clock) stop() {
	if c.t != nil {
		c.t.Stop()
	}
}
