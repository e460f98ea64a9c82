package prober

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// TestRequestIDsOfRuns checks what a run sends: each request the ID its
// seed, run and place in the whole sequence give, so two runs of one seed
// send the same sequence under IDs of their own, and shards disjoint IDs.
func TestRequestIDsOfRuns(t *testing.T) {
	const arrival = "{rate: 20000}"
	ids := func(seed uint64, shard record.Shard, n int) map[record.RequestID]uint64 {
		p := newProbe(t, probeYAML(seed, arrival, ""), shard)
		reqs, _ := runUntil(t, p, n)
		out := map[record.RequestID]uint64{}
		for _, req := range reqs {
			if want := record.NewRequestID(seed, p.RunID(), "a", req.Seq); req.ID != want {
				t.Fatalf("shard %v: seq %d sent ID %s, want %s", shard, req.Seq, req.ID, want)
			}
			out[req.ID] = req.Seq
		}
		if len(out) != len(reqs) {
			t.Fatalf("shard %v: %d requests sent %d distinct IDs", shard, len(reqs), len(out))
		}
		return out
	}
	first := ids(5, record.Shard{}, 60)
	for _, other := range []map[record.RequestID]uint64{ids(5, record.Shard{}, 60), ids(6, record.Shard{}, 60)} {
		for id := range other {
			if _, ok := first[id]; ok {
				t.Fatalf("another run sent ID %s too", id)
			}
		}
	}
	seen := map[record.RequestID]record.Shard{}
	for i := range 3 {
		shard := record.Shard{Index: i, Count: 3}
		for id := range ids(5, shard, 20) {
			if other, ok := seen[id]; ok {
				t.Fatalf("shards %v and %v both sent ID %s", other, shard, id)
			}
			seen[id] = shard
		}
	}
}

func TestRequestIDHeaders(t *testing.T) {
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":2,"completion_tokens":1}}`))
	}))
	defer srv.Close()
	off := false
	id := record.NewRequestID(1, 1, "a", 3)
	for _, tc := range []struct {
		name                   string
		ids                    *bool
		headers                map[string]string
		requestID, traceparent string
	}{
		{"default", nil, nil, id.String(), id.Traceparent()},
		{"turned off", &off, nil, "", ""},
		{"the target's own header", nil, map[string]string{"x-request-id": "mine"}, "mine", id.Traceparent()},
	} {
		stream := false
		tg, err := NewTarget("t", &scenarios.Target{URL: srv.URL, Endpoint: "chat", Model: "m", Stream: &stream,
			Headers: tc.headers, RequestIDs: tc.ids, Timeout: scenarios.Duration(5 * time.Second), StallTimeout: scenarios.Duration(5 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		req, err := NewRequest(tg, dataset.Prompt{Text: "hello", InputTokens: 2, OutputTokens: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.ID = id
		rec := NewClient().Do(context.Background(), tg, req)
		if rec.Outcome != record.OutcomeOK || rec.ID != id {
			t.Fatalf("%s: record %+v, want ok with ID %s", tc.name, rec, id)
		}
		h := <-got
		if h.Get("X-Request-ID") != tc.requestID || h.Get("traceparent") != tc.traceparent {
			t.Errorf("%s: sent X-Request-ID %q, traceparent %q; want %q, %q", tc.name,
				h.Get("X-Request-ID"), h.Get("traceparent"), tc.requestID, tc.traceparent)
		}
	}
}

// TestRequestIDAllocs pins what the IDs cost a request: nothing to derive,
// and two allocations (one string, one slice) for both header values.
func TestRequestIDAllocs(t *testing.T) {
	var id record.RequestID
	if n := testing.AllocsPerRun(100, func() { id = record.NewRequestID(1, 1, "probe", 9) }); n != 0 {
		t.Errorf("NewRequestID allocates %v times, want 0", n)
	}
	tg := &Target{sendRequestID: true, sendTraceparent: true}
	h := make(http.Header, 8)
	if n := testing.AllocsPerRun(100, func() { tg.setIDHeaders(h, id) }); n > 2 {
		t.Errorf("setting the ID headers allocates %v times, want at most 2", n)
	}
}

func BenchmarkRequestIDHeaders(b *testing.B) {
	tg := &Target{sendRequestID: true, sendTraceparent: true}
	h := make(http.Header, 8)
	b.ReportAllocs()
	var seq uint64
	for b.Loop() {
		tg.setIDHeaders(h, record.NewRequestID(1, 1, "probe", seq))
		seq++
	}
}
