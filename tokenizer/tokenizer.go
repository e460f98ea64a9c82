// Package tokenizer is a pure-Go, offline implementation of the byte-level
// BPE tokenizers of GPT-2, Llama 3 and Qwen2 and the models built on them,
// loaded from a Hugging Face tokenizer.json file.
//
// Supported tokenizer.json kind (anything else fails at Load with an error that
// names the unsupported part, so counts are never silently wrong):
//
//   - model: type "BPE" with "vocab" and "merges" (merges as "a b" strings or
//     ["a","b"] pairs), no dropout, empty continuing_subword_prefix and
//     end_of_word_suffix, byte_fallback false; every one of the 256 byte-level
//     symbols must be in the vocabulary;
//   - normalizer: null, or NFC (Qwen2);
//   - pre_tokenizer: ByteLevel with use_regex true (the GPT-2 split regex
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+,
//     implemented by hand) and add_prefix_space false; or a Sequence of a
//     Split with Llama 3's or Qwen2's regex (behavior Isolated, not
//     inverted; also implemented by hand) and ByteLevel with use_regex false;
//   - post_processor: null, ByteLevel, TemplateProcessing or a Sequence of
//     them: ids are counted without the special tokens a template adds, as
//     for Hugging Face's encode(text, add_special_tokens=False);
//   - decoder: null or ByteLevel;
//   - added_tokens: matched literally in the input before pre-tokenization,
//     as Hugging Face does by default; lstrip, rstrip and single_word must be
//     false;
//   - truncation and padding: null.
//
// Encode matches Hugging Face's Tokenizer.encode(text, add_special_tokens=False). Decode concatenates the bytes of
// every token, added/special tokens included, so Decode(Encode(s)) == s for any
// valid UTF-8 s. BPE results are kept per pre-tokenized word in a bounded
// cache (two generations of at most 65,536 words of up to 256 bytes), so
// counting long prompts costs mostly the split and a map lookup per word;
// long words use an O(n log n) merge. A Tokenizer is safe for concurrent use.
package tokenizer

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer is a loaded byte-level BPE tokenizer.
type Tokenizer struct {
	vocab   map[string]int // token string (byte-level alphabet) -> id
	idBytes [][]byte       // id -> raw bytes it decodes to
	byteID  [256]int       // id of each single byte
	merges  map[uint64]merge
	added   []addedToken
	cache   wordCache
	// split returns the length of the next pre-tokenized piece of a
	// non-empty string.
	split func(string) int
	nfc   bool // normalize to NFC first
}

type addedToken struct {
	content string
	id      int
}

// VocabSize returns the number of distinct ids (largest id + 1).
func (t *Tokenizer) VocabSize() int { return len(t.idBytes) }

// Count returns the number of tokens Encode(text) would return, without
// building the id slice.
func (t *Tokenizer) Count(text string) int {
	return t.encode(text, nil)
}

// Encode returns the token ids of text.
func (t *Tokenizer) Encode(text string) []int {
	out := make([]int, 0, len(text)/3+1)
	t.encode(text, &out)
	return out
}

// Decode returns the text of ids. Added (special) tokens are rendered as their
// content; ids outside the vocabulary are skipped. Byte sequences that are not
// valid UTF-8 are passed through unchanged.
func (t *Tokenizer) Decode(ids []int) string {
	var sb strings.Builder
	for _, id := range ids {
		if id >= 0 && id < len(t.idBytes) {
			sb.Write(t.idBytes[id])
		}
	}
	return sb.String()
}

// encode splits off added tokens, pre-tokenizes the rest, appends the ids to
// *out when out is non-nil, and returns how many ids there are.
func (t *Tokenizer) encode(text string, out *[]int) int {
	n := 0
	for len(text) > 0 {
		pos, tok := t.nextAdded(text)
		if pos < 0 {
			return n + t.encodeSegment(text, out)
		}
		n += t.encodeSegment(text[:pos], out) + 1
		if out != nil {
			*out = append(*out, tok.id)
		}
		text = text[pos+len(tok.content):]
	}
	return n
}

// nextAdded finds the leftmost (then longest) added token in text.
func (t *Tokenizer) nextAdded(text string) (int, addedToken) {
	best, bestTok := -1, addedToken{}
	for _, a := range t.added {
		i := strings.Index(text, a.content)
		if i < 0 {
			continue
		}
		if best < 0 || i < best || (i == best && len(a.content) > len(bestTok.content)) {
			best, bestTok = i, a
		}
	}
	return best, bestTok
}

func (t *Tokenizer) encodeSegment(s string, out *[]int) int {
	if t.nfc && !norm.NFC.IsNormalString(s) {
		s = norm.NFC.String(s)
	}
	count := 0
	for len(s) > 0 {
		n := t.split(s)
		if n == 1 {
			count++
			if out != nil {
				*out = append(*out, t.byteID[s[0]])
			}
		} else {
			ids := t.word(s[:n])
			count += len(ids)
			if out != nil {
				*out = append(*out, ids...)
			}
		}
		s = s[n:]
	}
	return count
}

// word returns the BPE ids of one pre-tokenized piece (of two or more bytes),
// via the cache. The result is shared and must not be modified.
func (t *Tokenizer) word(w string) []int {
	if ids, ok := t.cache.get(w); ok {
		return ids
	}
	ids := t.bpe(w)
	if len(w) <= maxCachedWordBytes {
		t.cache.put(strings.Clone(w), ids)
	}
	return ids
}
