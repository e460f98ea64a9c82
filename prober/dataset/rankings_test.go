package dataset

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/tokenizer"
)

// rankingItems draws the first n prompts of synthetic dataset s.
func rankingItems(t *testing.T, s scenarios.Synthetic, tok *tokenizer.Tokenizer, seed uint64, n int) []Prompt {
	t.Helper()
	src, err := New(scenarios.Dataset{Synthetic: &s}, Options{Seed: seed, Component: "probe/p", Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Prompt, n)
	for i := range out {
		it, err := src.Next()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = it.Prompt
	}
	return out
}

// With stddevs 0 every request has the passages and lengths asked for,
// counted exactly with a tokenizer, fresh or from a pool.
func TestRankingsExact(t *testing.T) {
	tok, err := tokenizer.Load("../../tokenizer/testdata/qwen2_tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	r := &scenarios.Rankings{Passages: scenarios.Lengths{Mean: 3}, PassageTokens: scenarios.Lengths{Mean: 32}, QueryTokens: scenarios.Lengths{Mean: 16}}
	for _, entries := range []int{0, 4} {
		s := scenarios.Synthetic{InputTokens: scenarios.Lengths{Mean: 550}, Entries: entries, Rankings: r}
		for _, p := range rankingItems(t, s, tok, 7, 12) {
			if len(p.Passages) != 3 {
				t.Fatalf("entries %d: %d passages, want 3", entries, len(p.Passages))
			}
			if got := tok.Count(p.Text); got != 16 {
				t.Errorf("entries %d: query of %d tokens, want 16: %q", entries, got, p.Text)
			}
			for _, s := range p.Passages {
				if got := tok.Count(s); got != 32 {
					t.Errorf("entries %d: passage of %d tokens, want 32: %q", entries, got, s)
				}
			}
			if !p.Exact || p.InputTokens != 16+3*32 {
				t.Errorf("entries %d: InputTokens %d (exact %v), want 112 exact", entries, p.InputTokens, p.Exact)
			}
		}
	}
}

// With stddevs the counts and lengths are AIPerf's draws: normal, rounded
// up, at least 1, so their means sit about half a unit above the means.
func TestRankingsDistributions(t *testing.T) {
	r := &scenarios.Rankings{Passages: scenarios.Lengths{Mean: 6, Stddev: 2}, PassageTokens: scenarios.Lengths{Mean: 40, Stddev: 10}, QueryTokens: scenarios.Lengths{Mean: 20, Stddev: 5}}
	const n = 3000
	var passages, passageTokens, queryTokens []float64
	for _, p := range rankingItems(t, scenarios.Synthetic{Rankings: r}, nil, 3, n) {
		passages = append(passages, float64(len(p.Passages)))
		queryTokens = append(queryTokens, float64(len(strings.Fields(p.Text))))
		for _, s := range p.Passages {
			passageTokens = append(passageTokens, float64(len(strings.Fields(s))))
		}
	}
	for _, c := range []struct {
		name         string
		xs           []float64
		mean, stddev float64
	}{{"passages", passages, 6.5, 2}, {"passage tokens", passageTokens, 40.5, 10}, {"query tokens", queryTokens, 20.5, 5}} {
		m, sd := meanStddev(c.xs)
		if math.Abs(m-c.mean) > 0.1*c.stddev+0.05 || math.Abs(sd-c.stddev) > 0.1*c.stddev {
			t.Errorf("%s: mean %.2f stddev %.2f, want about %v and %v", c.name, m, sd, c.mean, c.stddev)
		}
		if slices.Min(c.xs) < 1 {
			t.Errorf("%s: a draw of %v, below 1", c.name, slices.Min(c.xs))
		}
	}
}

// The same seed draws the same requests; another seed others.
func TestRankingsSeeded(t *testing.T) {
	s := scenarios.Synthetic{Rankings: &scenarios.Rankings{Passages: scenarios.Lengths{Mean: 4, Stddev: 2}, PassageTokens: scenarios.Lengths{Mean: 8}, QueryTokens: scenarios.Lengths{Mean: 4}}}
	a, b, c := rankingItems(t, s, nil, 1, 20), rankingItems(t, s, nil, 1, 20), rankingItems(t, s, nil, 2, 20)
	for i := range a {
		if a[i].Text != b[i].Text || !slices.Equal(a[i].Passages, b[i].Passages) {
			t.Fatalf("request %d differs between two draws of seed 1", i)
		}
	}
	if a[0].Text == c[0].Text {
		t.Error("seeds 1 and 2 drew the same first query")
	}
}

func meanStddev(xs []float64) (mean, stddev float64) {
	var sum, sumSq float64
	for _, x := range xs {
		sum += x
		sumSq += x * x
	}
	mean = sum / float64(len(xs))
	return mean, math.Sqrt(sumSq/float64(len(xs)) - mean*mean)
}
