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

// TestSyntheticSequenceDistribution: each request's (input, output) pair is
// drawn by its percent, the pair kept together, as AIPerf's --seq-dist.
func TestSyntheticSequenceDistribution(t *testing.T) {
	s := NewSynthetic(scenarios.Synthetic{SequenceDistribution: []scenarios.SequencePair{
		{InputTokens: scenarios.Lengths{Mean: 64}, OutputTokens: scenarios.Lengths{Mean: 32}, Percent: 70},
		{InputTokens: scenarios.Lengths{Mean: 256, Stddev: 10}, OutputTokens: scenarios.Lengths{Mean: 128}, Percent: 30},
	}}, 7, "p")
	const n = 4000
	small := 0
	for range n {
		p := s.Next()
		switch {
		case p.InputTokens == 64 && p.OutputTokens == 32:
			small++
		case p.OutputTokens == 128 && p.InputTokens > 200 && p.InputTokens < 320:
		default:
			t.Fatalf("lengths %d/%d belong to no pair", p.InputTokens, p.OutputTokens)
		}
	}
	if share := float64(small) / n; math.Abs(share-0.7) > 0.03 {
		t.Errorf("the 70 %% pair drew %.3f of the requests", share)
	}
}

// TestSyntheticRangeRatio: lengths are uniform whole numbers in
// [floor(mean × (1 − r)), ceil(mean × (1 + r))], both ends reached.
func TestSyntheticRangeRatio(t *testing.T) {
	s := NewSynthetic(scenarios.Synthetic{InputTokens: scenarios.Lengths{Mean: 100}, OutputTokens: scenarios.Lengths{Mean: 9},
		RangeRatio: &scenarios.RangeRatio{Input: 0.3, Output: 0.5}}, 7, "p")
	seenIn, seenOut := map[int]bool{}, map[int]bool{}
	for range 4000 {
		p := s.Next()
		if p.InputTokens < 70 || p.InputTokens > 130 || p.OutputTokens < 4 || p.OutputTokens > 14 {
			t.Fatalf("lengths %d/%d outside [70, 130] and [4, 14]", p.InputTokens, p.OutputTokens)
		}
		seenIn[p.InputTokens], seenOut[p.OutputTokens] = true, true
	}
	if len(seenIn) != 61 || len(seenOut) != 11 {
		t.Errorf("%d input and %d output lengths drawn, want every one of the 61 and 11", len(seenIn), len(seenOut))
	}
}
