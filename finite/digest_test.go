package finite

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
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

// TestRunsHaveTheirOwnRequestIDs: two runs of one spec send the same
// sequence (one digest) under request IDs of their own, each the one its
// run ID, the seed, the probe's name and the request's place give.
func TestRunsHaveTheirOwnRequestIDs(t *testing.T) {
	var mu sync.Mutex
	sent := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent[r.Header.Get(prober.RequestIDHeader)]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":8,"completion_tokens":1}}`))
	}))
	defer srv.Close()
	stream := false
	target, err := prober.NewTarget("t", &scenarios.Target{URL: srv.URL + "/v1", Model: "m", Endpoint: "chat", Stream: &stream, Timeout: scenarios.Duration(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	const requests = 8
	var digests []string
	for range 2 {
		s := spec(t, nil)
		s.Target, s.Limit = target, prober.Limit{Requests: requests}
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		res := New(p, prober.NewClient()).Execute(context.Background(), context.Background())
		for _, q := range res.Report.Requests() {
			if q.Run != p.Main.RunID() || q.ID != record.NewRequestID(s.Seed, q.Run, s.Name, q.Seq) {
				t.Errorf("request %d: run %s, ID %s; want run %s and the ID it gives", q.Seq, q.Run, q.ID, p.Main.RunID())
			}
		}
		digests = append(digests, res.Digest.String())
	}
	if digests[0] != digests[1] {
		t.Errorf("two runs of one spec: digests %s and %s, want one", digests[0], digests[1])
	}
	if len(sent) != 2*requests {
		t.Errorf("two runs of %d requests sent %d distinct request IDs, want %d: %v", requests, len(sent), 2*requests, sent)
	}
}
