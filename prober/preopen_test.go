package prober

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

// slowDial is how long each dial of the tests below takes: the cost that
// connections opened ahead keep off the first requests.
const slowDial = 50 * time.Millisecond

// dialLog is a dial function that takes slowDial and notes when each dial
// ended.
type dialLog struct {
	mu    sync.Mutex
	dials []time.Time
}

func (d *dialLog) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	time.Sleep(slowDial)
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	d.mu.Lock()
	d.dials = append(d.dials, time.Now())
	d.mu.Unlock()
	return c, err
}

// countBefore returns how many dials ended before at.
func (d *dialLog) countBefore(at time.Time) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, t := range d.dials {
		if t.Before(at) {
			n++
		}
	}
	return n
}

func chatStream(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
}

// stopAfter is a recorder that ends its probe's sending after n records.
type stopAfter struct {
	recorder
	n    int
	stop context.CancelFunc
}

func (s *stopAfter) Observe(rec *Record) {
	s.recorder.Observe(rec)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.records) >= s.n {
		s.stop()
	}
}

// TestPreopenedConnections: a closed loop at concurrency 4 over a reused
// connection policy opens its 4 connections before its timeline starts, so
// that its first requests' schedule lag holds no dial.
func TestPreopenedConnections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(chatStream))
	defer srv.Close()
	yml := fmt.Sprintf(`targets:
  t: {url: %s/v1, model: m, keep_alive: true}
probes:
  a: {target: t, arrival: {pattern: concurrency, concurrency: 4}, dataset: {synthetic: {input_tokens: {mean: 8}, output_tokens: {mean: 4}}}}
`, srv.URL)
	p := newProbe(t, yml, Shard{Count: 1})
	client, dials := NewClient(), &dialLog{}
	client.dial = dials.dial
	ctx, stop := context.WithTimeout(context.Background(), patience)
	defer stop()
	rec := &stopAfter{n: 12, stop: stop}
	p.Run(ctx, context.Background(), client, rec)
	recs := rec.bySeq()
	if len(recs) < 4 {
		t.Fatalf("%d records, want at least 4", len(recs))
	}
	if n := dials.countBefore(recs[0].Scheduled); n != 4 {
		t.Errorf("%d connections opened before the first scheduled send, want 4", n)
	}
	for _, r := range recs[:4] {
		if r.Outcome != OutcomeOK {
			t.Fatalf("seq %d: %s %s", r.Seq, r.Reason, r.Err)
		}
		if lag := r.Sent.Sub(r.Scheduled); lag >= slowDial {
			t.Errorf("seq %d: schedule lag %s, want under a dial's %s", r.Seq, lag, slowDial)
		}
	}
}

// TestPreopenedSafely: a connection opened ahead that the server has closed
// since is not sent on, and none is opened to a server known to close
// after every response, nor where connections are not reused.
func TestPreopenedSafely(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(chatStream))
	accepted := make(chan struct{}, 8)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()
	newT := func(keepAlive bool) *Target {
		st := &scenarios.Target{URL: srv.URL + "/v1", Endpoint: EndpointChat, Model: "m", KeepAlive: &keepAlive,
			Timeout: scenarios.Duration(10 * time.Second)}
		tg, err := NewTarget("t", st)
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	client, dials := NewClient(), &dialLog{}
	client.dial = dials.dial
	tg := newT(true)
	if n := client.Preopen(context.Background(), tg, 2); n != 2 {
		t.Fatalf("opened %d connections, want 2", n)
	}
	<-accepted
	<-accepted // so that the server has both to close
	srv.CloseClientConnections()
	time.Sleep(20 * time.Millisecond) // for the FINs to arrive
	req, err := NewRequest(tg, dataset.Prompt{Text: "p", InputTokens: 1, OutputTokens: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := client.Do(context.Background(), tg, req); r.Outcome != OutcomeOK || r.ConnRetried {
		t.Fatalf("after the server closed the connections opened ahead: %s %s (retried %v), want a request on a new one",
			r.Reason, r.Err, r.ConnRetried)
	}
	if n := dials.countBefore(time.Now()); n != 3 {
		t.Errorf("%d dials, want 3: the 2 opened ahead and 1 in place of those closed", n)
	}
	if n := client.Preopen(context.Background(), newT(false), 2); n != 0 {
		t.Errorf("opened %d connections without keep-alive, want none", n)
	}
	client.peerFor(tg).learn(peerCloses)
	if n := client.Preopen(context.Background(), tg, 2); n != 0 {
		t.Errorf("opened %d connections to a server that closes after every response, want none", n)
	}
}
