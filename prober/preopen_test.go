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
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// slowDial is how long each dial of the tests below takes: the cost that
// connections opened ahead keep off the first requests.
// Long enough that a loaded machine's scheduling delay (56 ms seen under the race detector among
// CI's parallel packages) cannot pass for one.
const slowDial = 200 * time.Millisecond

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

func (s *stopAfter) Observe(rec *record.Record) {
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
	p := newProbe(t, yml, record.Shard{Count: 1})
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
	// The 4 go to the first requests to ask for a connection. Which ones those are is the
	// scheduler's: the server answers at once, so a request after the first 4 may ask before
	// one of them, and the first 4 to end have not yet handed their connections back.
	ahead := 0
	for _, r := range recs {
		if r.Outcome != record.OutcomeOK {
			t.Fatalf("seq %d: %s %s", r.Seq, r.Reason, r.Err)
		}
		if r.Phases.Conn != record.ConnOpenedAhead {
			continue
		}
		ahead++
		if r.Phases.Connect > 0 {
			t.Errorf("seq %d: a connection opened ahead, with a connect of %s in its setup", r.Seq, r.Phases.Connect)
		}
		if lag := r.Sent.Sub(r.Scheduled); lag >= slowDial {
			t.Errorf("seq %d: on a connection opened ahead, schedule lag %s, want under a dial's %s", r.Seq, lag, slowDial)
		}
	}
	// More may: spares opened once requests had to dial (Client.topUp).
	if ahead < 4 {
		t.Errorf("%d requests went out on a connection opened ahead, want the 4 at least", ahead)
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
	r := client.Do(context.Background(), tg, req)
	if r.Outcome != record.OutcomeOK || r.ConnRetried {
		t.Fatalf("after the server closed the connections opened ahead: %s %s (retried %v), want a request on a new one",
			r.Reason, r.Err, r.ConnRetried)
	}
	// (The spares opened after it got its connection come later.)
	if n := dials.countBefore(r.Sent); n != 3 {
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

// TestSparesOpenedAhead: once a request had to have a new connection, the
// next requests that need one find it opened ahead (spareConns of them),
// not dialled on their schedule's time.
func TestSparesOpenedAhead(t *testing.T) {
	release := make(chan struct{})
	var held sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Hold") != "" {
			held.Done()
			<-release
		}
		chatStream(w, r)
	}))
	defer srv.Close()
	keepAlive := true
	tg, err := NewTarget("t", &scenarios.Target{URL: srv.URL + "/v1", Endpoint: EndpointChat, Model: "m", KeepAlive: &keepAlive,
		Timeout: scenarios.Duration(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	client := NewClient()
	send := func(hold bool) *record.Record {
		req, err := NewRequest(tg, dataset.Prompt{Text: "p", InputTokens: 1, OutputTokens: 1}, nil)
		if err != nil {
			t.Error(err)
			return &record.Record{}
		}
		h := tg.header
		if hold {
			tg2 := *tg
			tg2.header = h.Clone()
			tg2.header.Set("X-Hold", "1")
			return client.Do(context.Background(), &tg2, req)
		}
		return client.Do(context.Background(), tg, req)
	}
	if r := send(false); r.Outcome != record.OutcomeOK || r.Phases.Conn != record.ConnDialled {
		t.Fatalf("first request: %s %s on a %v connection, want ok on a dialled one", r.Reason, r.Err, r.Phases.Conn)
	}
	addr, _ := preopenAddr(tg)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		client.mu.Lock()
		n := len(client.opened[addr])
		client.mu.Unlock()
		if n == spareConns {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spare connections opened, want %d", n, spareConns)
		}
	}
	time.Sleep(2 * keepAliveProbation) // the first connection is reused from now on
	// As many at once as there are spares and the first connection: none dials.
	n := spareConns + 1
	held.Add(n)
	recs := make(chan *record.Record, n)
	for range n {
		go func() { recs <- send(true) }()
	}
	held.Wait()
	close(release)
	for range n {
		if r := <-recs; r.Outcome != record.OutcomeOK || r.Phases.Conn == record.ConnDialled {
			t.Errorf("%s %s on a %v connection, want one reused or opened ahead", r.Reason, r.Err, r.Phases.Conn)
		}
	}
}
