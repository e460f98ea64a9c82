package dataset

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/scenarios"
)

func TestSyntheticLengths(t *testing.T) {
	cfg := scenarios.Synthetic{
		InputTokens:  scenarios.Lengths{Mean: 512, Stddev: 128},
		OutputTokens: scenarios.Lengths{Mean: 128},
	}
	s := NewSynthetic(cfg, 42, "probe/p")
	const n = 4000
	var sum, sumSq float64
	for range n {
		p := s.Next()
		if got := len(strings.Fields(p.Text)); got != p.InputTokens {
			t.Fatalf("prompt has %d words, want InputTokens %d", got, p.InputTokens)
		}
		if p.OutputTokens != 128 {
			t.Fatalf("OutputTokens %d with stddev 0, want 128", p.OutputTokens)
		}
		x := float64(p.InputTokens)
		sum += x
		sumSq += x * x
	}
	mean := sum / n
	std := math.Sqrt(sumSq/n - mean*mean)
	if math.Abs(mean-512) > 8 || math.Abs(std-128) > 8 {
		t.Errorf("input lengths mean %.1f std %.1f, want about 512 and 128", mean, std)
	}
}

// An output length of mean 0 asks for no limit, in single prompts and in
// every turn of a conversation.
func TestSyntheticNoOutputLimit(t *testing.T) {
	for _, cfg := range []scenarios.Synthetic{
		{InputTokens: scenarios.Lengths{Mean: 8}},
		{InputTokens: scenarios.Lengths{Mean: 8}, Conversation: &scenarios.Conversation{Turns: scenarios.Lengths{Mean: 3}}},
	} {
		src, err := New(scenarios.Dataset{Synthetic: &cfg}, Options{Seed: 1, Component: "p"})
		if err != nil {
			t.Fatal(err)
		}
		it, err := src.Next()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range append([]Prompt{it.Prompt}, promptsOf(it.Turns)...) {
			if p.OutputTokens != 0 {
				t.Errorf("%+v: OutputTokens %d, want 0 (no limit)", cfg, p.OutputTokens)
			}
		}
	}
}

func promptsOf(turns []Turn) []Prompt {
	var out []Prompt
	for _, t := range turns {
		out = append(out, t.Prompt)
	}
	return out
}

func TestSyntheticTruncatesAtOne(t *testing.T) {
	s := NewSynthetic(scenarios.Synthetic{
		InputTokens:  scenarios.Lengths{Mean: 1, Stddev: 50},
		OutputTokens: scenarios.Lengths{Mean: 1, Stddev: 50},
	}, 1, "p")
	for range 1000 {
		if p := s.Next(); p.InputTokens < 1 || p.OutputTokens < 1 {
			t.Fatalf("got lengths %d/%d, want ≥ 1", p.InputTokens, p.OutputTokens)
		}
	}
}

func TestSyntheticReproducible(t *testing.T) {
	cfg := scenarios.Synthetic{InputTokens: scenarios.Lengths{Mean: 20, Stddev: 5}, OutputTokens: scenarios.Lengths{Mean: 8, Stddev: 2}}
	a, b := NewSynthetic(cfg, 9, "p"), NewSynthetic(cfg, 9, "p")
	for range 50 {
		if !reflect.DeepEqual(a.Next(), b.Next()) {
			t.Fatal("same seed gave different prompts")
		}
	}
	if reflect.DeepEqual(NewSynthetic(cfg, 9, "p").Next(), NewSynthetic(cfg, 9, "q").Next()) {
		t.Fatal("different components gave the same prompt")
	}
}
