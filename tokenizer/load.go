package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

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
