package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

const sharedTokenizer = "shared/data/tokenizers/gpt2/tokenizer.json"

// gpt2Path finds shared/data/tokenizers/gpt2/tokenizer.json by walking up from
// the package directory (it lives beside the repository root, or inside it on
// some machines); it skips the test when the file is absent.
func gpt2Path(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		p := filepath.Join(dir, sharedTokenizer)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skipf("%s not found in any parent of the package directory; skipping GPT-2 tokenizer tests", sharedTokenizer)
		}
		dir = parent
	}
}

var (
	loadOnce sync.Once
	loaded   *Tokenizer
	loadErr  error
)

func gpt2(tb testing.TB) *Tokenizer {
	tb.Helper()
	p := gpt2Path(tb)
	loadOnce.Do(func() { loaded, loadErr = Load(p) })
	if loadErr != nil {
		tb.Fatalf("Load: %v", loadErr)
	}
	return loaded
}

type fixtureCase struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

func loadCases(t *testing.T) []fixtureCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gpt2_cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []fixtureCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d fixture cases", len(cases))
	}
	return cases
}

func TestLoadGPT2(t *testing.T) {
	tok := gpt2(t)
	if got := tok.VocabSize(); got != 50257 {
		t.Errorf("VocabSize = %d, want 50257", got)
	}
	if got := len(tok.merges); got != 50000 {
		t.Errorf("merges = %d, want 50000", got)
	}
}

func TestEncodeMatchesReference(t *testing.T) {
	tok := gpt2(t)
	for _, c := range loadCases(t) {
		name := c.Text
		if len(name) > 40 {
			name = name[:40]
		}
		got := tok.Encode(c.Text)
		if c.IDs == nil {
			c.IDs = []int{}
		}
		if !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", name, got, c.IDs)
			continue
		}
		if n := tok.Count(c.Text); n != len(c.IDs) {
			t.Errorf("Count(%q) = %d, want %d", name, n, len(c.IDs))
		}
		if d := tok.Decode(got); d != c.Text {
			t.Errorf("Decode(Encode(%q)) = %q", name, d)
		}
		// A second pass is served from the word cache and must agree.
		if again := tok.Encode(c.Text); !slices.Equal(again, c.IDs) {
			t.Errorf("cached Encode(%q) differs", name)
		}
	}
}

func TestRoundTripAndConcurrency(t *testing.T) {
	tok := gpt2(t)
	var texts []string
	for _, c := range loadCases(t) {
		texts = append(texts, c.Text)
	}
	texts = append(texts, "invalid utf-8: \xff\xfe\x80 ok", strings.Repeat("ab ", 1000))
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, s := range texts {
				if d := tok.Decode(tok.Encode(s)); d != s {
					t.Errorf("round trip of %q gave %q", s, d)
				}
			}
		}()
	}
	wg.Wait()
}

func TestSplitNext(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello world", []string{"Hello", " world"}},
		{"it's", []string{"it", "'s"}},
		{"we're'll", []string{"we", "'re", "'ll"}},
		{"'S", []string{"'", "S"}},
		{"a  b", []string{"a", " ", " b"}},
		{"a\n\nb", []string{"a", "\n", "\n", "b"}},
		{"a \n b", []string{"a", " \n", " b"}},
		{"x  ", []string{"x", "  "}},
		{"\tx", []string{"\t", "x"}},
		{" 123abc", []string{" 123", "abc"}},
		{" !!x", []string{" !!", "x"}},
		{"\u3000\u3000x", []string{"\u3000", "\u3000", "x"}},
	}
	for _, c := range cases {
		var got []string
		for s := c.in; len(s) > 0; {
			n := splitNext(s)
			got = append(got, s[:n])
			s = s[n:]
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("split(%q) = %q, want %q", c.in, got, c.want)
		}
	}
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

func TestWordCacheBounded(t *testing.T) {
	var c wordCache
	c.init(4)
	for i := 0; i < 100; i++ {
		c.put(strings.Repeat("x", i+2), []int{i})
	}
	if len(c.cur) > 4 || len(c.prev) > 4 {
		t.Fatalf("cache grew past its limit: cur=%d prev=%d", len(c.cur), len(c.prev))
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

// benchPrompt returns a varied prompt of about 2,000 GPT-2 tokens.
func benchPrompt(tb testing.TB, tok *Tokenizer) (string, int) {
	para := "Large language model serving is judged by time to first token and " +
		"time per output token. In 2024, an 8B model on one H100 served ~2,500 tokens/s at batch 64.\n" +
		"def handler(req):\n    if req.stream:\n        return sse(req)  # don't buffer!\n" +
		"Ça a été très élégant — 中文文本测试 🚀 and that's it; we'll see what they've done.\n\n"
	var sb strings.Builder
	for i := 0; tok.Count(sb.String()) < 2000; i++ {
		sb.WriteString(para)
		sb.WriteString(strings.Repeat("x", i%7)) // vary words a little
		sb.WriteString(" ")
	}
	s := sb.String()
	if !utf8.ValidString(s) {
		tb.Fatal("bench prompt not UTF-8")
	}
	return s, tok.Count(s)
}

func BenchmarkCount(b *testing.B) {
	tok := gpt2(b)
	prompt, n := benchPrompt(b, tok)
	b.ReportAllocs()
	b.SetBytes(int64(len(prompt)))
	b.ResetTimer()
	for b.Loop() {
		tok.Count(prompt)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/token")
	b.ReportMetric(float64(n), "tokens/op")
}

// BenchmarkCountCold measures a prompt whose words all miss the cache.
func BenchmarkCountCold(b *testing.B) {
	tok := gpt2(b)
	prompt, n := benchPrompt(b, tok)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tok.cache.init(defaultCacheEntries)
		tok.Count(prompt)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/token")
}

func TestBPEHeapMatchesScan(t *testing.T) {
	tok := gpt2(t)
	words := []string{"ab", " the", " tokenization", "aaaaaaaaaaaaaaaaaaaaaaaaa",
		strings.Repeat("a", 301), strings.Repeat(" ", 200), strings.Repeat("😀", 40),
		" internationalization", strings.Repeat("ab", 77), strings.Repeat("\n", 9)}
	for _, c := range loadCases(t) {
		for s := c.Text; len(s) > 0; {
			n := splitNext(s)
			words = append(words, s[:n])
			s = s[n:]
		}
	}
	for _, w := range words {
		if len(w) < 2 {
			continue
		}
		if a, b := tok.bpeScan(w), tok.bpeHeap(w); !slices.Equal(a, b) {
			t.Errorf("word %q: scan %v, heap %v", w, a, b)
		}
	}
}

// splitSequence is a Llama 3 style pre_tokenizer with the given Split.
func splitSequence(regex, behavior string, invert bool) map[string]any {
	return map[string]any{"type": "Sequence", "pretokenizers": []any{
		map[string]any{"type": "Split", "pattern": map[string]any{"Regex": regex}, "behavior": behavior, "invert": invert},
		map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
	}}
}

// TestLlama3AndQwen2 checks the Split pre-tokenizers against Hugging Face:
// testdata/gen_bpe_cases.py trains small tokenizers of each kind with
// Hugging Face tokenizers (Llama 3's regex and template post-processor;
// Qwen2's regex, which splits numbers digit by digit, and NFC normalizer)
// and records their ids for edge cases and 300 random strings.
func TestLlama3AndQwen2(t *testing.T) {
	for _, name := range []string{"llama3", "qwen2"} {
		t.Run(name, func(t *testing.T) {
			tok, err := Load(filepath.Join("testdata", name+"_tokenizer.json"))
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join("testdata", name+"_cases.json"))
			if err != nil {
				t.Fatal(err)
			}
			var cases []fixtureCase
			if err := json.Unmarshal(data, &cases); err != nil {
				t.Fatal(err)
			}
			if len(cases) < 300 {
				t.Fatalf("only %d cases", len(cases))
			}
			for _, c := range cases {
				if c.IDs == nil {
					c.IDs = []int{}
				}
				if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
					t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
					continue
				}
				if n := tok.Count(c.Text); n != len(c.IDs) {
					t.Errorf("Count(%q) = %d, want %d", c.Text, n, len(c.IDs))
				}
			}
		})
	}
}

func TestSplitLlama(t *testing.T) {
	cases := []struct {
		in        string
		maxDigits int
		want      []string
	}{
		{"I'LL go", 3, []string{"I", "'LL", " go"}},
		{" 12345", 3, []string{" ", "123", "45"}},
		{" 12345", 1, []string{" ", "1", "2", "3", "4", "5"}},
		{"\tx!!\n\ny", 3, []string{"\tx", "!!\n\n", "y"}},
		{"a \n \n  b", 3, []string{"a", " \n \n", " ", " b"}},
		{"(x) =  y  ", 3, []string{"(x", ")", " =", " ", " y", "  "}},
	}
	for _, c := range cases {
		var got []string
		for s := c.in; len(s) > 0; {
			n := splitLlama(s, c.maxDigits)
			got = append(got, s[:n])
			s = s[n:]
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("split(%q, %d) = %q, want %q", c.in, c.maxDigits, got, c.want)
		}
	}
}
