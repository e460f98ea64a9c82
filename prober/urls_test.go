package prober

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

func TestTargetURLs(t *testing.T) {
	tg, err := NewTarget("t", &scenarios.Target{URL: "http://a:8000/v1", MoreURLs: []string{"http://b:8000/v1/", "http://c:9000"}, Model: "m", Endpoint: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://a:8000/v1/chat/completions", "http://b:8000/v1/chat/completions", "http://c:9000/chat/completions", "http://a:8000/v1/chat/completions"}
	for i, w := range want {
		if got := tg.ForURL(i).url; got != w {
			t.Errorf("ForURL(%d) calls %s, want %s", i, got, w)
		}
	}
	if n := tg.URLs(); n != 3 {
		t.Errorf("URLs() = %d, want 3", n)
	}
	if tg.ForURL(1).header.Get("Content-Type") != "application/json" || tg.ForURL(1).Model != "m" {
		t.Error("the target at its second URL lost the target's settings")
	}
	one, err := NewTarget("t", &scenarios.Target{URL: "http://a:8000/v1", Model: "m", Endpoint: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	if one.URLs() != 1 || one.ForURL(3) != one {
		t.Errorf("a target of one URL: URLs() = %d, ForURL(3) another target", one.URLs())
	}
}

// countingServers are httptest servers that answer a chat stream and note
// each request's session (X-Session-ID; "" for a single request).
type countingServers struct {
	mu       sync.Mutex
	sessions []map[string]int // per server: requests per session
	srvs     []*httptest.Server
}

func newCountingServers(t *testing.T, n int) *countingServers {
	c := &countingServers{}
	for i := range n {
		c.sessions = append(c.sessions, map[string]int{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			c.mu.Lock()
			c.sessions[i][r.Header.Get("X-Session-ID")]++
			c.mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}`+"\n\n")
			io.WriteString(w, "data: [DONE]\n\n")
		}))
		t.Cleanup(srv.Close)
		c.srvs = append(c.srvs, srv)
	}
	return c
}

// multiURLProbe is probe "a" with arrival and dataset on a target whose
// URLs are srvs', in order.
func multiURLProbe(t *testing.T, srvs []*httptest.Server, arrival, dataset string) *Probe {
	t.Helper()
	y := fmt.Sprintf("targets:\n  t: {url: %s/v1, model: m, timeout: 10s}\nprobes:\n  a:\n    target: t\n    arrival: %s\n    dataset: %s\n", srvs[0].URL, arrival, dataset)
	cfg, err := scenarios.Parse([]byte(y), filepath.Join(t.TempDir(), "s.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srvs[1:] {
		cfg.Targets["t"].MoreURLs = append(cfg.Targets["t"].MoreURLs, s.URL+"/v1")
	}
	tg, err := NewTarget("t", cfg.Targets["t"])
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProbe("a", cfg.Probes["a"], tg, 1, record.Shard{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSessionsTakeURLsInTurn: with several URLs, each session (a single
// request is one) takes the next URL in the order sessions start, from the
// first, and all its turns go there, as AIPerf's round robin over several
// --url; a probe after a warmup goes on from where the warmup left off.
func TestSessionsTakeURLsInTurn(t *testing.T) {
	conv := filepath.Join(t.TempDir(), "conv.jsonl")
	turns := []int{3, 1, 2, 1, 3, 2, 1} // sessions s0..s6
	var lines []string
	for s, n := range turns {
		var ts []string
		for i := range n {
			ts = append(ts, fmt.Sprintf(`{"text": "q%d"}`, i))
		}
		lines = append(lines, fmt.Sprintf(`{"session_id": "s%d", "turns": [%s]}`, s, strings.Join(ts, ", ")))
	}
	if err := os.WriteFile(conv, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range turns {
		total += n
	}
	for _, tc := range []struct {
		arrival string
		start   uint64
	}{
		{"{pattern: concurrency, concurrency: 3}", 0},
		{"{pattern: constant, rate: 200}", 0},
		{"{pattern: constant, rate: 200}", 4}, // after a warmup of 4 sessions
	} {
		t.Run(fmt.Sprintf("%s from %d", tc.arrival, tc.start), func(t *testing.T) {
			c := newCountingServers(t, 3)
			p := multiURLProbe(t, c.srvs, tc.arrival, "{file: {path: "+conv+", format: multi_turn}}")
			p.SetURLStart(tc.start)
			p.SetLimit(Limit{Requests: uint64(total)})
			rec := &recorder{}
			p.Run(context.Background(), context.Background(), NewClient(), rec)
			if len(rec.records) != total {
				t.Fatalf("%d requests recorded, want %d", len(rec.records), total)
			}
			if got := p.Started(); got != uint64(len(turns)) {
				t.Errorf("Started() = %d, want the %d sessions", got, len(turns))
			}
			for s, n := range turns {
				url := (int(tc.start) + s) % 3
				id := fmt.Sprintf("s%d", s)
				for i, m := range c.sessions {
					if want := map[bool]int{true: n}[i == url]; m[id] != want {
						t.Errorf("session %s sent %d of its %d turns to server %d, want %d", id, m[id], n, i, want)
					}
				}
			}
			for _, r := range rec.records {
				if r.Outcome != record.OutcomeOK {
					t.Errorf("request %d: %v %v", r.Seq, r.Outcome, r.Err)
				}
				s := 0
				fmt.Sscanf(r.Session, "s%d", &s)
				if want := (int(tc.start) + s) % 3; r.URL != want {
					t.Errorf("request %d of session %s recorded URL %d, want %d", r.Seq, r.Session, r.URL, want)
				}
			}
		})
	}
}

// TestSingleRequestsTakeURLsInTurn: a request of no session is a session of
// its own, so requests take the URLs in turn.
func TestSingleRequestsTakeURLsInTurn(t *testing.T) {
	c := newCountingServers(t, 2)
	p := multiURLProbe(t, c.srvs, "{pattern: concurrency, concurrency: 2}", "{synthetic: {input_tokens: {mean: 4}}}")
	p.SetLimit(Limit{Requests: 7})
	rec := &recorder{}
	p.Run(context.Background(), context.Background(), NewClient(), rec)
	if c.sessions[0][""] != 4 || c.sessions[1][""] != 3 {
		t.Errorf("servers got %d and %d of 7 requests, want 4 and 3", c.sessions[0][""], c.sessions[1][""])
	}
	for _, r := range rec.bySeq() {
		if want := int(r.Seq % 2); r.URL != want {
			t.Errorf("request %d recorded URL %d, want %d", r.Seq, r.URL, want)
		}
	}
}
