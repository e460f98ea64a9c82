package export

import (
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/report"
)

// TestTokenSource: a run where nothing succeeded counted no tokens, and
// says so rather than crediting the server's usage.
func TestTokenSource(t *testing.T) {
	for _, tc := range []struct {
		s    report.Summary
		want string
	}{
		{report.Summary{Failed: 3}, "none"},
		{report.Summary{OK: 2}, "usage"},
		{report.Summary{OK: 2, TokensFromChunks: true}, "chunks"},
		{report.Summary{OK: 2, TokensFromTokenizer: true}, "tokenizer"},
	} {
		if got := tokenSource(tc.s); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%+v: %q, want %s", tc.s, got, tc.want)
		}
	}
}
