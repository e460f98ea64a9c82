package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

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
