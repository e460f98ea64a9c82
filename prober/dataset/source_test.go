package dataset

import (
	"reflect"
	"testing"

	"github.com/inferprobe/inferprobe/scenarios"
)

func TestPromptList(t *testing.T) {
	cfg := scenarios.Dataset{Prompts: &scenarios.Prompts{
		Texts:        []string{"one", "two words", "three words here"},
		OutputTokens: scenarios.Lengths{Mean: 9},
	}}
	draw := func(seed uint64) []Prompt {
		src, err := New(cfg, Options{Seed: seed, Component: "p"})
		if err != nil {
			t.Fatal(err)
		}
		var out []Prompt
		for range 60 {
			it, err := src.Next()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, it.Prompt)
		}
		return out
	}
	a := draw(1)
	seen := map[string]int{}
	for _, p := range a {
		seen[p.Text]++
		if n := len(p.Text); p.OutputTokens != 9 || p.Exact || p.InputTokens != map[int]int{3: 1, 9: 2, 16: 3}[n] {
			t.Fatalf("prompt %+v", p)
		}
	}
	if len(seen) != 3 {
		t.Errorf("60 picks used %d of the 3 prompts", len(seen))
	}
	if !reflect.DeepEqual(a, draw(1)) || reflect.DeepEqual(a, draw(2)) {
		t.Error("picks are not a function of the seed")
	}
}
