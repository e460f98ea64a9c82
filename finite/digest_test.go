package finite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

// TestDigestUnchanged: runs that use none of AIPerf's load options (ramps,
// cancellation, replay windows) send the sequence they sent before those
// options existed: the digests are pinned at the commit before them.
func TestDigestUnchanged(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(trace, []byte(`{"timestamp": 3000, "input_length": 20, "output_length": 4, "hash_ids": [1]}
{"timestamp": 3100, "input_length": 20, "output_length": 4, "hash_ids": [1]}
{"timestamp": 3300, "input_length": 30, "output_length": 2, "hash_ids": [1, 2]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		dataset scenarios.Dataset
		arrival scenarios.Arrival
		want    string
	}{
		{"poisson synthetic",
			scenarios.Dataset{Synthetic: &scenarios.Synthetic{InputTokens: scenarios.Lengths{Mean: 32, Stddev: 8}, OutputTokens: scenarios.Lengths{Mean: 4, Stddev: 2}}},
			scenarios.Arrival{Pattern: scenarios.ArrivalPoisson, Rate: 2000},
			"1699edb1709629b88c0337ca392e6a0a53d0025b059e9a56cce22b495dfe9933"},
		{"mooncake replay",
			scenarios.Dataset{File: &scenarios.File{Path: trace, Format: dataset.FormatMooncake, Timing: scenarios.TimingReplay, Speedup: 100, BlockSize: 8}},
			scenarios.Arrival{},
			"06663ce0a39e7b2e786009b5ad5e1c5c0c05624a1d43a87070bf20db0cb53355"},
	} {
		s := spec(t, &scenarios.Probe{Target: "t", Arrival: tc.arrival, Dataset: tc.dataset})
		s.Seed, s.Limit = 42, prober.Limit{Requests: 6}
		if tc.dataset.Synthetic != nil {
			s.Limit.Requests = 50
		}
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		res := New(p, &fakeExec{delay: time.Millisecond}).Execute(context.Background(), context.Background())
		if got := res.Digest.String(); got != tc.want {
			t.Errorf("%s: digest %s, want %s", tc.name, got, tc.want)
		}
	}
}
