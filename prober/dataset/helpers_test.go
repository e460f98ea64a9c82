package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/tokenizer"
)

// shared finds shared/data/rel by walking up from the package directory, and
// skips the test when it is absent.
func shared(tb testing.TB, rel string) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", "data", rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skipf("shared/data/%s not found above the package directory; skipping", rel)
		}
		dir = parent
	}
}

var (
	gpt2Once sync.Once
	gpt2Tok  *tokenizer.Tokenizer
	gpt2Err  error
)

// gpt2 is the GPT-2 tokenizer from shared/data.
func gpt2(tb testing.TB) *tokenizer.Tokenizer {
	tb.Helper()
	p := shared(tb, "tokenizers/gpt2/tokenizer.json")
	gpt2Once.Do(func() { gpt2Tok, gpt2Err = tokenizer.Load(p) })
	if gpt2Err != nil {
		tb.Fatal(gpt2Err)
	}
	return gpt2Tok
}

// load opens data as a dataset file of format, named "f" in errors.
func load(format, timing string, speedup float64, data []byte, tok *tokenizer.Tokenizer) (*fileSource, error) {
	text, err := NewText(tok)
	if err != nil {
		return nil, err
	}
	cfg := scenarios.File{Path: "f", Format: format, Timing: timing, Speedup: speedup, BlockSize: 4, OutputTokens: scenarios.Lengths{Mean: 64}}
	return newFileSource(cfg, bytes.NewReader(data), "f", text, Options{Seed: 1, Component: "p"})
}
