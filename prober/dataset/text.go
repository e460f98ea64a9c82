package dataset

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/inferprobe/inferprobe/tokenizer"
)

// minWords is the fewest corpus words a tokenizer must keep as single tokens
// for exact lengths: fewer would make prompts too repetitive to mean much.
const minWords = 64

// Text builds prompt text from the corpus, the common-word list in words.go
// (a list of English words, free of any copyright). With a tokenizer every
// word used is one token both alone and after a space, so n words are exactly
// n tokens, and text built word by word counts as the sum of its parts; each
// prompt's count is then checked against the tokenizer. Without one, a word
// is taken as one token, which holds for GPT-2-style tokenizers and is an
// approximation for others.
// A Text is not safe for concurrent use.
type Text struct {
	words []string
	tok   *tokenizer.Tokenizer
	// blocks caches whole hash blocks: traces share them heavily, and
	// drawing a block's words is most of the cost of building a prompt.
	blocks map[blockKey]string
	// order lists the cached blocks oldest first, to evict beyond maxBlocks.
	order []blockKey
}

type blockKey struct {
	seed, pass, id uint64
	size           int
}

// maxBlocks bounds the block cache: 4096 blocks of 512 tokens are about 14 MB.
const maxBlocks = 4096

// NewText returns the text builder for tok, which may be nil (approximate
// lengths).
func NewText(tok *tokenizer.Tokenizer) (*Text, error) {
	if tok == nil {
		return &Text{words: words[:]}, nil
	}
	t := &Text{tok: tok}
	for _, w := range words {
		if tok.Count(w) == 1 && tok.Count(" "+w) == 1 && tok.Count(w+" "+w) == 2 {
			t.words = append(t.words, w)
		}
	}
	if len(t.words) < minWords {
		return nil, fmt.Errorf("the tokenizer keeps only %d of the %d corpus words as single tokens (need %d) so exact prompt lengths cannot be built; remove the target's tokenizer for approximate lengths",
			len(t.words), len(words), minWords)
	}
	return t, nil
}

// Exact reports whether lengths are counted with a tokenizer.
func (t *Text) Exact() bool { return t.tok != nil }

// Count returns the number of tokens in s: the tokenizer's count, or the
// number of words without one.
func (t *Text) Count(s string) int {
	if t.tok != nil {
		return t.tok.Count(s)
	}
	return len(strings.Fields(s))
}

// appendWords appends n words drawn from rng to b, each after a space.
func (t *Text) appendWords(b *strings.Builder, rng *rand.Rand, n int) {
	for range n {
		b.WriteByte(' ')
		b.WriteString(t.words[rng.IntN(len(t.words))])
	}
}

// Words returns n random words separated by spaces: n tokens.
func (t *Text) Words(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n * 7)
	t.appendWords(&b, rng, n)
	return b.String()[min(1, b.Len()):]
}

// blockRNG is the word stream of hash block id in pass: a function of the
// seed, the pass and the id alone, so equal ids give equal blocks.
func blockRNG(seed, pass, id uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^pass*0x9e3779b97f4a7c15, id))
}

// Blocks returns a prompt of n tokens made of hash blocks of size tokens
// each: block i holds the words of ids[i], so two prompts whose first k ids
// are equal share their first k·size tokens. A prompt longer than its blocks
// continues with words from rest; a shorter one ends inside its blocks.
// pass salts the blocks, so a trace replayed again does not hit the cache its
// previous pass filled.
func (t *Text) Blocks(seed, pass uint64, ids []uint64, size, n int, rest *rand.Rand) string {
	var b strings.Builder
	b.Grow(n * 7)
	left := n
	for _, id := range ids {
		if left == 0 {
			break
		}
		k := min(size, left)
		if k == size {
			b.WriteString(t.block(blockKey{seed, pass, id, size}))
		} else {
			t.appendWords(&b, blockRNG(seed, pass, id), k)
		}
		left -= k
	}
	t.appendWords(&b, rest, left)
	// The first word goes without its space: every prompt drops the same
	// byte, so shared blocks stay shared.
	return b.String()[min(1, b.Len()):]
}

// block returns the words of a whole hash block, each after a space.
func (t *Text) block(k blockKey) string {
	if s, ok := t.blocks[k]; ok {
		return s
	}
	var b strings.Builder
	b.Grow(k.size * 7)
	t.appendWords(&b, blockRNG(k.seed, k.pass, k.id), k.size)
	if t.blocks == nil {
		t.blocks = map[blockKey]string{}
	}
	if len(t.order) == maxBlocks {
		delete(t.blocks, t.order[0])
		t.order = t.order[1:]
	}
	t.blocks[k] = b.String()
	t.order = append(t.order, k)
	return b.String()
}
