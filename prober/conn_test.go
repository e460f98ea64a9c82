package prober

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
)

// keepAliveServer is a raw HTTP/1.1 server that advertises keep-alive on
// every streamed response, as llama.cpp's server does. after decides, per
// connection and request number (0 first), what happens once the request
// is read: "answer" and keep the connection, "answer-close" (answer, then
// close at once: the llama.cpp behaviour), "close" (FIN, no answer) or
// "reset" (RST, no answer). With a gate, "answer-close" waits for it
// before closing and closes gate.closed after. It returns the base URL and
// the bodies of every request it read.
func keepAliveServer(t *testing.T, after func(n int) string, gate *closeGate) (string, func() []string) {
	var (
		mu     sync.Mutex
		bodies []string
	)
	const resp = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5, max=100\r\nTransfer-Encoding: chunked\r\n\r\n"
	events := chat("a") + chat(" b") + `data: {"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":2}}` + "\n\n" + done
	url := tcpServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			body, _ := io.ReadAll(req.Body)
			mu.Lock()
			bodies = append(bodies, string(body))
			mu.Unlock()
			switch after(n) {
			case "close":
				return
			case "reset":
				_ = c.(*net.TCPConn).SetLinger(0)
				return
			}
			fmt.Fprintf(c, "%s%x\r\n%s\r\n0\r\n\r\n", resp, len(events), events)
			if after(n) == "answer-close" {
				if gate != nil {
					gate.once.Do(func() {
						select {
						case <-gate.close:
						case <-time.After(faultWait):
						}
						c.Close()
						close(gate.closed)
					})
				}
				return
			}
		}
	})
	return url, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), bodies...)
	}
}

// closeGate holds a server's first close until the client is about to
// write.
type closeGate struct {
	close, closed chan struct{}
	once          sync.Once
}

// lateFINConn reads a connection's end of stream only once the client has
// written again: it makes deterministic the race a stale keep-alive
// connection loses, where the server's FIN is already there but the
// transport has not read it when it hands the connection to the next
// request. With a gate, its second write first has the server close and
// waits for the FIN to arrive: the FIN then crosses the request.
type lateFINConn struct {
	*net.TCPConn
	gate      *closeGate
	gateOnce  sync.Once
	answered  atomic.Bool // a response has been read
	writes    atomic.Int64
	wrote     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *lateFINConn) Write(p []byte) (int, error) {
	if c.gate != nil && c.answered.Load() {
		c.gateOnce.Do(func() {
			c.gate.close <- struct{}{}
			<-c.gate.closed
			time.Sleep(20 * time.Millisecond) // the FIN arrives
		})
	}
	n, err := c.TCPConn.Write(p)
	c.writes.Add(1)
	select {
	case c.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (c *lateFINConn) Read(p []byte) (int, error) {
	before := c.writes.Load()
	n, err := c.TCPConn.Read(p)
	if n > 0 {
		c.answered.Store(true)
		if c.gate == nil {
			// The server closes right after its answer; the client must not
			// get ahead of that close, or its next request could reach the
			// server before the close and be reset, not refused unwritten.
			c.awaitPeerClose()
		}
	}
	if err == io.EOF {
		timeout := time.After(2 * time.Second)
		for c.writes.Load() == before {
			select {
			case <-c.wrote:
			case <-c.closed:
				return n, err
			case <-timeout:
				return n, err
			}
		}
	}
	return n, err
}

// awaitPeerClose waits until the peer's FIN has reached this side's TCP.
func (c *lateFINConn) awaitPeerClose() {
	raw, err := c.TCPConn.SyscallConn()
	if err != nil {
		return
	}
	for deadline := time.Now().Add(faultWait); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if st, ok := readTCPState(raw); !ok || st.peerClosed {
			return
		}
	}
}

func (c *lateFINConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.TCPConn.Close()
}

func dialLateFIN(gate *closeGate) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &lateFINConn{TCPConn: c.(*net.TCPConn), gate: gate, wrote: make(chan struct{}, 1), closed: make(chan struct{})}, nil
	}
}

// send sends n requests one after another, each with its own prompt, and
// returns their records.
func sendEach(t *testing.T, c *Client, tg *Target, n int) []*record.Record {
	t.Helper()
	var recs []*record.Record
	for i := range n {
		req, err := NewRequest(tg, dataset.Prompt{Text: fmt.Sprintf("prompt %d", i), InputTokens: 2, OutputTokens: 2}, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, c.Do(context.Background(), tg, req))
	}
	return recs
}

// countPrompts counts how often each prompt reached the server.
func countPrompts(bodies []string, n int) []int {
	counts := make([]int, n)
	for _, b := range bodies {
		for i := range n {
			if strings.Contains(b, fmt.Sprintf(`"prompt %d"`, i)) {
				counts[i]++
			}
		}
	}
	return counts
}

// TestStaleKeepAliveResent: a server closes the connection right after
// every response while advertising keep-alive, and the client hands the
// closed connection to its next request before it has read the FIN. That
// request never reached the server, so it is sent again on a fresh
// connection, once, and counted as a retry, not as a failure; the server
// gets every request exactly once.
func TestStaleKeepAliveResent(t *testing.T) {
	url, received := keepAliveServer(t, func(int) string { return "answer-close" }, nil)
	tg := testTarget(t, url, nil)
	c := NewClient()
	c.dial = dialLateFIN(nil)
	c.peerFor(tg).learn(peerKeeps) // past the probation that would avoid the race
	const n = 8
	recs := sendEach(t, c, tg, n)
	retried := 0
	for i, rec := range recs {
		if rec.Outcome != record.OutcomeOK {
			t.Errorf("request %d: %v %q %s, want ok", i, rec.Outcome, rec.Reason, rec.Err)
		}
		if rec.ConnRetried {
			retried++
		}
	}
	// The first request and each one after a retry (whose connection is not
	// kept) dial afresh; every other one meets the stale connection.
	if retried != n/2 {
		t.Errorf("%d requests retried, want %d", retried, n/2)
	}
	for i, k := range countPrompts(received(), n) {
		if k != 1 {
			t.Errorf("request %d reached the server %d times, want once", i, k)
		}
	}
}

// TestReceivedRequestNotResent: a request the server read is never sent
// again, whether the server then closes the reused connection without an
// answer (its FIN acknowledges the request) or resets it.
func TestReceivedRequestNotResent(t *testing.T) {
	for _, end := range []string{"close", "reset"} {
		t.Run(end, func(t *testing.T) {
			url, received := keepAliveServer(t, func(n int) string {
				if n == 0 {
					return "answer"
				}
				return end
			}, nil)
			tg := testTarget(t, url, nil)
			c := NewClient()
			c.peerFor(tg).learn(peerKeeps)
			recs := sendEach(t, c, tg, 2)
			if recs[0].Outcome != record.OutcomeOK {
				t.Fatalf("first request: %v %q %s", recs[0].Outcome, recs[0].Reason, recs[0].Err)
			}
			if rec := recs[1]; rec.Outcome != record.OutcomeError || rec.Reason != record.ReasonConnect || rec.ConnRetried || !strings.Contains(rec.Err, "keep_alive: false") {
				t.Errorf("second request: %v %q %s, retried %v; want a connect error saying what to do, not retried", rec.Outcome, rec.Reason, rec.Err, rec.ConnRetried)
			}
			if got := countPrompts(received(), 2); got[0] != 1 || got[1] != 1 {
				t.Errorf("the server read the requests %v times, want once each", got)
			}
		})
	}
}

// TestStaleKeepAliveFINCrossesRequest: the server closes just as the client
// writes its next request on the connection, so that the FIN was sent
// before the request arrived but is read after it was written. The FIN
// acknowledged none of the request: it never reached the server, and is
// sent again.
func TestStaleKeepAliveFINCrossesRequest(t *testing.T) {
	gate := &closeGate{close: make(chan struct{}), closed: make(chan struct{})}
	url, received := keepAliveServer(t, func(int) string { return "answer-close" }, gate)
	tg := testTarget(t, url, nil)
	c := NewClient()
	c.dial = dialLateFIN(gate)
	c.peerFor(tg).learn(peerKeeps)
	recs := sendEach(t, c, tg, 2)
	for i, rec := range recs {
		if rec.Outcome != record.OutcomeOK {
			t.Errorf("request %d: %v %q %s, want ok", i, rec.Outcome, rec.Reason, rec.Err)
		}
	}
	if !recs[1].ConnRetried {
		t.Error("the second request was not sent again")
	}
	if got := countPrompts(received(), 2); got[0] != 1 || got[1] != 1 {
		t.Errorf("the server read the requests %v times, want once each", got)
	}
}

// TestKeepingServerNoneWithheld: against a server that keeps its
// connections open, the requests a closed loop sends while its keep-alive is
// still being learnt (right after the first response) go out on connections
// of their own, but are not counted as kept off reused connections: nothing
// says the server closes them.
func TestKeepingServerNoneWithheld(t *testing.T) {
	url, _ := keepAliveServer(t, func(int) string { return "answer" }, nil)
	tg := testTarget(t, url, nil)
	for i, rec := range sendEach(t, NewClient(), tg, 5) {
		if rec.Outcome != record.OutcomeOK || rec.KeepAliveWithheld {
			t.Errorf("request %d: %v %q %s; counted as kept off a reused connection: %v, want ok and not", i, rec.Outcome, rec.Reason, rec.Err, rec.KeepAliveWithheld)
		}
	}
}

// TestServerClosingAfterEachResponseNotRaced: a server closes every
// connection right after its response while advertising keep-alive, and a
// closed loop sends its next request the moment a response ends. Reusing
// the connection races the server's close: a request that reaches the
// server just before it is reset, may have been received, and fails as
// connect. None fails: requests do not reuse a connection until the server
// has been seen to keep one open, and this one is seen closing it.
func TestServerClosingAfterEachResponseNotRaced(t *testing.T) {
	url, received := keepAliveServer(t, func(int) string { return "answer-close" }, nil)
	tg := testTarget(t, url, nil)
	c := NewClient()
	const workers, each = 4, 50
	recs := make([][]*record.Record, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				req, err := NewRequest(tg, dataset.Prompt{Text: fmt.Sprintf("prompt %d", w*each+i), InputTokens: 2, OutputTokens: 2}, nil)
				if err != nil {
					t.Error(err)
					return
				}
				recs[w] = append(recs[w], c.Do(context.Background(), tg, req))
			}
		})
	}
	wg.Wait()
	failed, retried, withheld := 0, 0, 0
	for _, rs := range recs {
		for _, rec := range rs {
			if rec.KeepAliveWithheld {
				withheld++
			}
			if rec.Outcome != record.OutcomeOK {
				failed++
				if failed <= 3 {
					t.Errorf("%v %q %s", rec.Outcome, rec.Reason, rec.Err)
				}
			}
			if rec.ConnRetried {
				retried++
			}
		}
	}
	if failed > 0 || retried > 0 {
		t.Errorf("%d of %d requests failed and %d were sent again, want none", failed, workers*each, retried)
	}
	// Those sent before any response began had nothing idle to reuse.
	if withheld < workers*each-workers {
		t.Errorf("%d requests counted on a connection of their own, want at least %d", withheld, workers*each-workers)
	}
	for i, k := range countPrompts(received(), workers*each) {
		if k != 1 {
			t.Errorf("request %d reached the server %d times, want once", i, k)
		}
	}
}
