package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
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

func TestMergeClientBound(t *testing.T) {
	files := []*report.ShardFile{
		{Shard: record.Shard{Index: 0, Count: 3}, End: &report.ShardEnd{Finished: true}},
		{Shard: record.Shard{Index: 1, Count: 3}, End: &report.ShardEnd{Finished: true, ClientBound: "schedule lag p99 40ms"}},
		{Shard: record.Shard{Index: 2, Count: 3}},
	}
	if got, want := clientBound(files), "shard 1/3: schedule lag p99 40ms"; got != want {
		t.Errorf("clientBound = %q, want %q", got, want)
	}
}
