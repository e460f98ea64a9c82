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
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

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

type merge struct {
	rank int32
	id   int32
}

type addedToken struct {
	content string
	id      int
}

// Load reads and validates a Hugging Face tokenizer.json file.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return t, nil
}

type component struct {
	Type           string `json:"type"`
	AddPrefixSpace *bool  `json:"add_prefix_space"`
	UseRegex       *bool  `json:"use_regex"`
	// Sequence
	Pretokenizers []component `json:"pretokenizers"`
	Processors    []component `json:"processors"`
	// Split
	Pattern struct {
		Regex *string `json:"Regex"`
	} `json:"pattern"`
	Behavior string `json:"behavior"`
	Invert   bool   `json:"invert"`
}

// Split regexes implemented by hand, by the pattern as tokenizer.json
// writes it.
const (
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwen2Pattern  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// splitter returns the split function of a pre_tokenizer, or why it is not supported.
func splitter(pre *component) (func(string) int, error) {
	switch {
	case pre == nil:
		return nil, errors.New("unsupported: pre_tokenizer is null (only ByteLevel, or a Split and ByteLevel Sequence, is supported)")
	case pre.Type == "Sequence":
		if len(pre.Pretokenizers) != 2 || pre.Pretokenizers[0].Type != "Split" || pre.Pretokenizers[1].Type != "ByteLevel" {
			return nil, errors.New("unsupported pre_tokenizer Sequence (only [Split, ByteLevel] is supported)")
		}
		sp, bl := &pre.Pretokenizers[0], &pre.Pretokenizers[1]
		switch {
		case bl.AddPrefixSpace != nil && *bl.AddPrefixSpace:
			return nil, errors.New("unsupported: pre_tokenizer ByteLevel with add_prefix_space=true")
		case bl.UseRegex == nil || *bl.UseRegex:
			return nil, errors.New("unsupported: pre_tokenizer ByteLevel after Split with use_regex=true")
		case sp.Behavior != "Isolated" || sp.Invert:
			return nil, fmt.Errorf("unsupported: pre_tokenizer Split with behavior %q, invert %v (only Isolated, not inverted)", sp.Behavior, sp.Invert)
		case sp.Pattern.Regex == nil:
			return nil, errors.New("unsupported: pre_tokenizer Split on a string, not a regex")
		}
		switch *sp.Pattern.Regex {
		case llama3Pattern:
			return func(s string) int { return splitLlama(s, 3) }, nil
		case qwen2Pattern:
			return func(s string) int { return splitLlama(s, 1) }, nil
		}
		return nil, fmt.Errorf("unsupported pre_tokenizer Split regex %q (only GPT-2's, Llama 3's and Qwen2's are implemented)", *sp.Pattern.Regex)
	case pre.Type != "ByteLevel":
		return nil, fmt.Errorf("unsupported pre_tokenizer %q (only ByteLevel, or a Split and ByteLevel Sequence, is supported)", pre.Type)
	case pre.AddPrefixSpace != nil && *pre.AddPrefixSpace:
		return nil, errors.New("unsupported: pre_tokenizer ByteLevel with add_prefix_space=true")
	case pre.UseRegex != nil && !*pre.UseRegex:
		return nil, errors.New("unsupported: pre_tokenizer ByteLevel with use_regex=false")
	}
	return splitNext, nil
}

// checkPost accepts post-processors that leave the ids of
// encode(text, add_special_tokens=False) as they are.
func checkPost(post *component) error {
	if post == nil {
		return nil
	}
	switch post.Type {
	case "ByteLevel", "TemplateProcessing":
		return nil
	case "Sequence":
		for i := range post.Processors {
			if err := checkPost(&post.Processors[i]); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unsupported post_processor %q (only null, ByteLevel, TemplateProcessing or a Sequence of them is supported)", post.Type)
}

type fileFormat struct {
	Truncation    json.RawMessage `json:"truncation"`
	Padding       json.RawMessage `json:"padding"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	AddedTokens   []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
	} `json:"added_tokens"`
	Model struct {
		Type                    string            `json:"type"`
		Dropout                 *float64          `json:"dropout"`
		ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
		ByteFallback            bool              `json:"byte_fallback"`
		Vocab                   map[string]int    `json:"vocab"`
		Merges                  []json.RawMessage `json:"merges"`
	} `json:"model"`
}

func isNull(m json.RawMessage) bool {
	s := strings.TrimSpace(string(m))
	return s == "" || s == "null"
}

// parseComponent decodes an optional component; it returns nil for null.
func parseComponent(name string, m json.RawMessage) (*component, error) {
	if isNull(m) {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(m, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &c, nil
}

func parse(data []byte) (*Tokenizer, error) {
	var f fileFormat
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parsing tokenizer.json: %w", err)
	}
	if !isNull(f.Truncation) {
		return nil, errors.New("unsupported: truncation is set (only null is supported)")
	}
	if !isNull(f.Padding) {
		return nil, errors.New("unsupported: padding is set (only null is supported)")
	}
	norm, err := parseComponent("normalizer", f.Normalizer)
	if err != nil {
		return nil, err
	}
	if norm != nil && norm.Type != "NFC" {
		return nil, fmt.Errorf("unsupported normalizer %q (only null or NFC is supported)", norm.Type)
	}
	pre, err := parseComponent("pre_tokenizer", f.PreTokenizer)
	if err != nil {
		return nil, err
	}
	split, err := splitter(pre)
	if err != nil {
		return nil, err
	}
	post, err := parseComponent("post_processor", f.PostProcessor)
	if err != nil {
		return nil, err
	}
	if err := checkPost(post); err != nil {
		return nil, err
	}
	dec, err := parseComponent("decoder", f.Decoder)
	if err != nil {
		return nil, err
	}
	if dec != nil && dec.Type != "ByteLevel" {
		return nil, fmt.Errorf("unsupported decoder %q (only null or ByteLevel is supported)", dec.Type)
	}

	m := &f.Model
	switch {
	case m.Type != "BPE":
		return nil, fmt.Errorf("unsupported model type %q (only BPE is supported)", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, errors.New("unsupported: BPE dropout")
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return nil, errors.New("unsupported: BPE continuing_subword_prefix")
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, errors.New("unsupported: BPE end_of_word_suffix")
	case m.ByteFallback:
		return nil, errors.New("unsupported: BPE byte_fallback")
	case len(m.Vocab) == 0:
		return nil, errors.New("model has an empty vocab")
	}

	t := &Tokenizer{vocab: m.Vocab, merges: make(map[uint64]merge, len(m.Merges)), split: split, nfc: norm != nil}
	maxID := -1
	for s, id := range m.Vocab {
		if id < 0 {
			return nil, fmt.Errorf("vocab token %q has negative id %d", s, id)
		}
		maxID = max(maxID, id)
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("added token %q has negative id %d", a.Content, a.ID)
		}
		maxID = max(maxID, a.ID)
	}
	t.idBytes = make([][]byte, maxID+1)
	for s, id := range m.Vocab {
		b, ok := symbolsToBytes(s)
		if !ok {
			return nil, fmt.Errorf("vocab token %q is not in the byte-level alphabet", s)
		}
		t.idBytes[id] = b
	}
	for b := 0; b < 256; b++ {
		id, ok := m.Vocab[string(byteToRune[b])]
		if !ok {
			return nil, fmt.Errorf("vocab lacks the byte-level symbol for byte 0x%02x", b)
		}
		t.byteID[b] = id
	}
	for rank, raw := range m.Merges {
		a, b, err := parseMerge(raw)
		if err != nil {
			return nil, fmt.Errorf("merge %d: %w", rank, err)
		}
		ia, oka := m.Vocab[a]
		ib, okb := m.Vocab[b]
		im, okm := m.Vocab[a+b]
		if !oka || !okb || !okm {
			return nil, fmt.Errorf("merge %d (%q %q) refers to tokens not in the vocab", rank, a, b)
		}
		key := uint64(ia)<<32 | uint64(ib)
		if _, dup := t.merges[key]; !dup { // first (lowest) rank wins
			t.merges[key] = merge{rank: int32(rank), id: int32(im)}
		}
	}
	for _, a := range f.AddedTokens {
		if a.SingleWord || a.LStrip || a.RStrip {
			return nil, fmt.Errorf("unsupported: added token %q uses single_word/lstrip/rstrip", a.Content)
		}
		if a.Content == "" {
			continue
		}
		t.added = append(t.added, addedToken{content: a.Content, id: a.ID})
		t.idBytes[a.ID] = []byte(a.Content)
	}
	t.cache.init(defaultCacheEntries)
	return t, nil
}

func parseMerge(raw json.RawMessage) (a, b string, err error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		var ok bool
		a, b, ok = strings.Cut(s, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return "", "", fmt.Errorf("malformed merge %q", s)
		}
		return a, b, nil
	}
	var pair []string
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return "", "", fmt.Errorf("malformed merge %s", raw)
	}
	return pair[0], pair[1], nil
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

// heapBPEMinBytes is the word length from which bpe switches from the simple
// quadratic scan to the O(n log n) priority-queue merge.
const heapBPEMinBytes = 48

// bpe applies merges by rank (lowest first, leftmost on ties), as Hugging
// Face's BPE model does.
func (t *Tokenizer) bpe(w string) []int {
	if len(w) >= heapBPEMinBytes {
		return t.bpeHeap(w)
	}
	return t.bpeScan(w)
}

// bpeScan is bpe for short words: repeatedly scan for the best pair.
func (t *Tokenizer) bpeScan(w string) []int {
	syms := make([]int, len(w))
	for i := 0; i < len(w); i++ {
		syms[i] = t.byteID[w[i]]
	}
	for len(syms) > 1 {
		bestRank, bestAt := int32(-1), -1
		var bestID int32
		for i := 0; i+1 < len(syms); i++ {
			m, ok := t.merges[uint64(syms[i])<<32|uint64(syms[i+1])]
			if ok && (bestAt < 0 || m.rank < bestRank) {
				bestRank, bestAt, bestID = m.rank, i, m.id
			}
		}
		if bestAt < 0 {
			break
		}
		syms[bestAt] = int(bestID)
		syms = append(syms[:bestAt+1], syms[bestAt+2:]...)
	}
	return syms
}

// candidate is a possible merge of the symbol at pos with its right neighbour.
type candidate struct {
	rank, pos, id int32
}

func (a candidate) less(b candidate) bool {
	return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos
}

type candHeap []candidate

func (h *candHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *candHeap) pop() candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s[l].less(s[m]) {
			m = l
		}
		if l+1 < len(s) && s[l+1].less(s[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// bpeHeap is bpe for long words: symbols form a linked list and candidate
// merges sit in a min-heap ordered by (rank, position), with stale entries
// discarded when popped. Same result as the quadratic scan.
func (t *Tokenizer) bpeHeap(w string) []int {
	n := len(w)
	ids := make([]int32, n)
	next := make([]int32, n)
	prev := make([]int32, n)
	alive := make([]bool, n)
	for i := 0; i < n; i++ {
		ids[i] = int32(t.byteID[w[i]])
		next[i], prev[i], alive[i] = int32(i+1), int32(i-1), true
	}
	next[n-1] = -1
	h := make(candHeap, 0, n)
	try := func(pos int32) {
		nx := next[pos]
		if nx < 0 {
			return
		}
		if m, ok := t.merges[uint64(ids[pos])<<32|uint64(ids[nx])]; ok {
			h.push(candidate{rank: m.rank, pos: pos, id: m.id})
		}
	}
	for i := 0; i+1 < n; i++ {
		try(int32(i))
	}
	for len(h) > 0 {
		c := h.pop()
		nx := next[c.pos]
		if !alive[c.pos] || nx < 0 {
			continue
		}
		m, ok := t.merges[uint64(ids[c.pos])<<32|uint64(ids[nx])]
		if !ok || m.rank != c.rank {
			continue // stale: one side changed since this was pushed
		}
		ids[c.pos] = c.id
		alive[nx] = false
		next[c.pos] = next[nx]
		if next[nx] >= 0 {
			prev[next[nx]] = c.pos
		}
		if p := prev[c.pos]; p >= 0 {
			try(p)
		}
		try(c.pos)
	}
	out := make([]int, 0, n/2)
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, int(ids[i]))
	}
	return out
}

// Character classes of the GPT-2 split regex.
const (
	clsOther = iota // [^\s\p{L}\p{N}]
	clsLetter
	clsNumber
	clsSpace
)

func classOf(r rune) int {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case unicode.IsLetter(r):
		return clsLetter
	case unicode.IsNumber(r):
		return clsNumber
	case unicode.IsSpace(r): // same set as Oniguruma's Unicode \s
		return clsSpace
	}
	return clsOther // includes invalid UTF-8 (RuneError)
}

var asciiClass = func() (c [utf8.RuneSelf]int) {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		switch {
		case 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
			c[r] = clsLetter
		case '0' <= r && r <= '9':
			c[r] = clsNumber
		case r == ' ' || '\t' <= r && r <= '\r':
			c[r] = clsSpace
		default:
			c[r] = clsOther
		}
	}
	return
}()

func decode(s string) (rune, int) {
	if s[0] < utf8.RuneSelf {
		return rune(s[0]), 1
	}
	return utf8.DecodeRuneInString(s)
}

// runOf returns the byte length of the prefix of s whose runes are all of class cls.
func runOf(s string, cls int) int {
	i := 0
	for i < len(s) {
		r, n := decode(s[i:])
		if classOf(r) != cls {
			break
		}
		i += n
	}
	return i
}

// splitNext returns the byte length of the first match of the GPT-2 regex
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// at the start of the non-empty s (the regex matches every position, so
// repeated calls tokenize the whole string).
func splitNext(s string) int {
	if s[0] == '\'' && len(s) > 1 {
		switch s[1] {
		case 's', 't', 'm', 'd':
			return 2
		case 'r', 'v', 'l':
			if len(s) > 2 && (s[1:3] == "re" || s[1:3] == "ve" || s[1:3] == "ll") {
				return 3
			}
		}
	}
	r, n := decode(s)
	cls := classOf(r)
	if r == ' ' && len(s) > 1 {
		r2, _ := decode(s[1:])
		if c2 := classOf(r2); c2 != clsSpace {
			return 1 + runOf(s[1:], c2)
		}
	}
	if cls != clsSpace {
		return n + runOf(s[n:], cls)
	}
	// Whitespace: \s+(?!\S) takes the run, minus its last character when a
	// non-space follows; a single space before a non-space falls to \s+.
	end := runOf(s, clsSpace)
	if end == len(s) {
		return end
	}
	_, lastLen := utf8.DecodeLastRuneInString(s[:end])
	if end-lastLen > 0 {
		return end - lastLen
	}
	return end
}

// byteToRune is GPT-2's reversible byte -> printable-unicode mapping.
var byteToRune, runeToByte = func() (b2r [256]rune, r2b map[rune]byte) {
	r2b = make(map[rune]byte, 256)
	n := 0
	for b := 0; b < 256; b++ {
		if '!' <= b && b <= '~' || 0xA1 <= b && b <= 0xAC || 0xAE <= b && b <= 0xFF {
			b2r[b] = rune(b)
		} else {
			b2r[b] = rune(256 + n)
			n++
		}
		r2b[b2r[b]] = byte(b)
	}
	return
}()

func symbolsToBytes(s string) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		b, ok := runeToByte[r]
		if !ok {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}

const (
	defaultCacheEntries = 1 << 16
	maxCachedWordBytes  = 256
)

// wordCache is a size-capped, two-generation cache: when the current
// generation fills it becomes the previous one (the older one is dropped),
// and hits in the previous generation are promoted. Memory is bounded by
// 2*limit entries of at most maxCachedWordBytes each.
type wordCache struct {
	mu        sync.RWMutex
	limit     int
	cur, prev map[string][]int
}

func (c *wordCache) init(limit int) {
	c.limit = limit
	c.cur = make(map[string][]int)
}

func (c *wordCache) get(w string) ([]int, bool) {
	c.mu.RLock()
	ids, ok := c.cur[w]
	c.mu.RUnlock()
	if ok {
		return ids, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ids, ok := c.cur[w]; ok {
		return ids, true
	}
	if ids, ok := c.prev[w]; ok {
		c.putLocked(strings.Clone(w), ids)
		return ids, true
	}
	return nil, false
}

func (c *wordCache) put(w string, ids []int) {
	c.mu.Lock()
	c.putLocked(w, ids)
	c.mu.Unlock()
}

func (c *wordCache) putLocked(w string, ids []int) {
	if len(c.cur) >= c.limit {
		c.prev, c.cur = c.cur, make(map[string][]int, c.limit/4)
	}
	c.cur[w] = ids
}

// splitLlama returns the byte length of the first match of Llama 3's split
// regex (Qwen2's when maxDigits is 1: it splits numbers digit by digit)
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// at the start of the non-empty s, trying the alternatives in order as the
// regex does.
func splitLlama(s string, maxDigits int) int {
	if s[0] == '\'' && len(s) > 1 {
		switch lower(s[1]) {
		case 's', 't', 'm', 'd':
			return 2
		case 'r', 'v', 'l':
			if len(s) > 2 {
				switch string([]byte{lower(s[1]), lower(s[2])}) {
				case "re", "ve", "ll":
					return 3
				}
			}
		}
	}
	r, n := decode(s)
	cls := classOf(r)
	switch {
	case cls == clsLetter:
		return n + runOf(s[n:], clsLetter)
	case cls != clsNumber && r != '\r' && r != '\n' && len(s) > n:
		// One character that is not a letter, digit or line break, before letters.
		if r2, n2 := decode(s[n:]); classOf(r2) == clsLetter {
			return n + n2 + runOf(s[n+n2:], clsLetter)
		}
	}
	if cls == clsNumber {
		end := n
		for d := 1; d < maxDigits && end < len(s); d++ {
			r2, n2 := decode(s[end:])
			if classOf(r2) != clsNumber {
				break
			}
			end += n2
		}
		return end
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	start := -1
	switch {
	case cls == clsOther:
		start = 0
	case r == ' ' && len(s) > 1:
		if r2, _ := decode(s[1:]); classOf(r2) == clsOther {
			start = 1
		}
	}
	if start >= 0 {
		end := start + runOf(s[start:], clsOther)
		for end < len(s) && (s[end] == '\r' || s[end] == '\n') {
			end++
		}
		return end
	}
	// Whitespace. \s*[\r\n]+ takes the run up to its last line break;
	// \s+(?!\S) the run, less its last character when a non-space follows;
	// \s+ a single space before a non-space.
	end := runOf(s, clsSpace)
	if nl := strings.LastIndexAny(s[:end], "\r\n"); nl >= 0 {
		return nl + 1
	}
	if end == len(s) {
		return end
	}
	if _, lastLen := utf8.DecodeLastRuneInString(s[:end]); end-lastLen > 0 {
		return end - lastLen
	}
	return end
}

// lower folds an ASCII letter to lower case.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
