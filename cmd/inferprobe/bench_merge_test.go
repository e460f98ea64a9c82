package main

import (
	"slices"
	"strings"
	"testing"
)

func TestBenchMergeArgs(t *testing.T) {
	for in, want := range map[string]string{
		"bench merge a b":                    "bench-merge a b",
		"--log.level=debug bench merge a":    "--log.level=debug bench-merge a",
		"bench --model m":                    "bench --model m",
		"bench --extra-inputs merge:1 --x y": "bench --extra-inputs merge:1 --x y",
	} {
		if got := strings.Join(benchMergeArgs(strings.Fields(in)), " "); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	if args := []string{"bench", "merge"}; !slices.Equal(benchMergeArgs(args), []string{"bench-merge"}) || args[1] != "merge" {
		t.Error("benchMergeArgs must not change its argument")
	}
}
