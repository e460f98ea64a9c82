package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadGPT2(t *testing.T) {
	tok := gpt2(t)
	if got := tok.VocabSize(); got != 50257 {
		t.Errorf("VocabSize = %d, want 50257", got)
	}
	if got := len(tok.merges); got != 50000 {
		t.Errorf("merges = %d, want 50000", got)
	}
}

func TestLoadRejectsUnsupported(t *testing.T) {
	// Base: a valid file whose parts we replace one at a time.
	vocab := map[string]int{}
	for b := 0; b < 256; b++ {
		vocab[string(byteToRune[b])] = b
	}
	vocab["ab"] = 256
	base := func() map[string]any {
		return map[string]any{
			"version": "1.0", "truncation": nil, "padding": nil, "added_tokens": []any{},
			"normalizer":     nil,
			"pre_tokenizer":  map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
			"post_processor": map[string]any{"type": "ByteLevel"},
			"decoder":        map[string]any{"type": "ByteLevel"},
			"model":          map[string]any{"type": "BPE", "vocab": vocab, "merges": []any{"a b"}},
		}
	}
	write := func(t *testing.T, m map[string]any) string {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "tokenizer.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	tok, err := Load(write(t, base()))
	if err != nil {
		t.Fatalf("valid minimal file: %v", err)
	}
	if got := tok.Encode("ab a"); !slices.Equal(got, []int{256, 32, 'a'}) {
		t.Errorf("minimal Encode = %v", got)
	}
	pair := base()
	pair["model"].(map[string]any)["merges"] = []any{[]string{"a", "b"}}
	if _, err := Load(write(t, pair)); err != nil {
		t.Errorf("merges as pairs: %v", err)
	}

	cases := []struct {
		name, want string
		edit       func(m map[string]any)
	}{
		{"wordpiece", `model type "WordPiece"`, func(m map[string]any) { m["model"].(map[string]any)["type"] = "WordPiece" }},
		{"normalizer", `normalizer "Lowercase"`, func(m map[string]any) { m["normalizer"] = map[string]any{"type": "Lowercase"} }},
		{"metaspace", `pre_tokenizer "Metaspace"`, func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "Metaspace"} }},
		{"sequence", `pre_tokenizer Sequence (only [Split, ByteLevel]`, func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "Sequence"} }},
		{"other split regex", `Split regex "\\s+" (only GPT-2's, Llama 3's and Qwen2's`, func(m map[string]any) { m["pre_tokenizer"] = splitSequence(`\s+`, "Isolated", false) }},
		{"split removed", `Split with behavior "Removed"`, func(m map[string]any) { m["pre_tokenizer"] = splitSequence(llama3Pattern, "Removed", false) }},
		{"split inverted", "invert true", func(m map[string]any) { m["pre_tokenizer"] = splitSequence(llama3Pattern, "Isolated", true) }},
		{"no pre", "pre_tokenizer is null", func(m map[string]any) { m["pre_tokenizer"] = nil }},
		{"prefix space", "add_prefix_space=true", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": true}
		}},
		{"roberta", `post_processor "RobertaProcessing"`, func(m map[string]any) {
			m["post_processor"] = map[string]any{"type": "Sequence", "processors": []any{map[string]any{"type": "RobertaProcessing"}}}
		}},
		{"decoder", `decoder "Metaspace"`, func(m map[string]any) { m["decoder"] = map[string]any{"type": "Metaspace"} }},
		{"byte fallback", "byte_fallback", func(m map[string]any) { m["model"].(map[string]any)["byte_fallback"] = true }},
		{"dropout", "dropout", func(m map[string]any) { m["model"].(map[string]any)["dropout"] = 0.1 }},
		{"truncation", "truncation", func(m map[string]any) { m["truncation"] = map[string]any{"max_length": 8} }},
		{"lstrip", "lstrip", func(m map[string]any) {
			m["added_tokens"] = []any{map[string]any{"id": 257, "content": "<x>", "lstrip": true}}
		}},
		{"missing byte", "byte-level symbol", func(m map[string]any) {
			v := map[string]int{"a": 0, "b": 1, "ab": 2}
			m["model"].(map[string]any)["vocab"] = v
		}},
		{"bad merge", "not in the vocab", func(m map[string]any) { m["model"].(map[string]any)["merges"] = []any{"a q"} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := base()
			c.edit(m)
			_, err := Load(write(t, m))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load error = %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

// splitSequence is a Llama 3 style pre_tokenizer with the given Split.
func splitSequence(regex, behavior string, invert bool) map[string]any {
	return map[string]any{"type": "Sequence", "pretokenizers": []any{
		map[string]any{"type": "Split", "pattern": map[string]any{"Regex": regex}, "behavior": behavior, "invert": invert},
		map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
	}}
}

func TestByteMapping(t *testing.T) {
	seen := map[rune]bool{}
	for b := 0; b < 256; b++ {
		r := byteToRune[b]
		if seen[r] || runeToByte[r] != byte(b) {
			t.Fatalf("byte %d maps to %q, not a bijection", b, r)
		}
		seen[r] = true
	}
	if byteToRune[' '] != 'Ġ' || byteToRune['\n'] != 'Ċ' {
		t.Errorf("space/newline map to %q/%q, want Ġ/Ċ", byteToRune[' '], byteToRune['\n'])
	}
}
