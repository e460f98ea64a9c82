package prober

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/internal/http1"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// TestH1PathChosen: plain HTTP leaves its connection in the one-goroutine
// client's pool and makes no net/http client; HTTPS with HTTP/2 goes
// through net/http.
func TestH1PathChosen(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(chatStream))
	defer plain.Close()
	secure := httptest.NewUnstartedServer(http.HandlerFunc(chatStream))
	secure.EnableHTTP2 = true
	secure.Config.ErrorLog = log.New(io.Discard, "", 0) // spares opened ahead are closed unused
	secure.StartTLS()
	defer secure.Close()
	c := NewClient()
	for _, tc := range []struct {
		url string
		h1  bool
	}{{plain.URL, true}, {secure.URL, false}} {
		tg := testTarget(t, tc.url+"/v1", func(st *scenarios.Target) { st.TLS.InsecureSkipVerify = true })
		req, err := NewRequest(tg, dataset.Prompt{Text: "hi", InputTokens: 1, OutputTokens: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rec := c.Do(context.Background(), tg, req); rec.Outcome != record.OutcomeOK {
			t.Fatalf("%s: %v %q %s", tc.url, rec.Outcome, rec.Reason, rec.Err)
		}
		c.mu.Lock()
		route, netHTTP := c.h1Routes[h1RouteKey{tg.url, tg.conn}], c.clients[tg.conn] != nil
		c.mu.Unlock()
		if (route != nil) != tc.h1 || netHTTP == tc.h1 {
			t.Errorf("%s: one-goroutine route %v, net/http client %v; want the one-goroutine path %v", tc.url, route != nil, netHTTP, tc.h1)
		}
		if tc.h1 && route.pool.Idle() != 1 {
			t.Errorf("%d idle connections after one request, want 1", route.pool.Idle())
		}
	}
}

// TestH1TLS: HTTPS without HTTP/2 on the one-goroutine path, offering
// HTTP/1.1 alone to a server that offers HTTP/2 too; an untrusted
// certificate is a connect error, as through net/http.
func TestH1TLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 1 {
			t.Errorf("HTTP/%d, want HTTP/1.1", r.ProtoMajor)
		}
		chatStream(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted handshake fails, and spares close unused
	srv.StartTLS()
	defer srv.Close()
	no := false
	for _, trusted := range []bool{true, false} {
		tg := testTarget(t, srv.URL+"/v1", func(st *scenarios.Target) { st.TLS.InsecureSkipVerify, st.HTTP2 = trusted, &no })
		c := NewClient()
		req, err := NewRequest(tg, dataset.Prompt{Text: "hi", InputTokens: 1, OutputTokens: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := c.Do(context.Background(), tg, req)
		switch {
		case c.h1RouteFor(tg, tg.conn) == nil || len(c.clients) != 0:
			t.Error("not on the one-goroutine path")
		case trusted && (rec.Outcome != record.OutcomeOK || rec.Phases.TLS <= 0):
			t.Errorf("trusted: %v %q %s, TLS %v; want ok, with the handshake's time", rec.Outcome, rec.Reason, rec.Err, rec.Phases.TLS)
		case !trusted && (rec.Reason != record.ReasonConnect || !strings.Contains(rec.Err, "certificate")):
			t.Errorf("untrusted: %v %q %s; want a connect error about the certificate", rec.Outcome, rec.Reason, rec.Err)
		}
	}
}

// TestH1RequestOnTheWire: the request as written, with the target's, the
// session's and the ID headers, Connection: close without keep-alive, and
// no Accept-Encoding.
func TestH1RequestOnTheWire(t *testing.T) {
	for _, keepAlive := range []bool{true, false} {
		t.Run(fmt.Sprint("keep-alive ", keepAlive), func(t *testing.T) {
			got := make(chan *http.Request, 1)
			bodies := make(chan string, 1)
			url := tcpServer(t, func(c net.Conn) {
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return // a spare opened ahead, closed unused
				}
				body, _ := io.ReadAll(req.Body)
				got <- req
				bodies <- string(body)
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(done), done)
			})
			tg := testTarget(t, url+"/v1", func(st *scenarios.Target) {
				st.Headers = map[string]string{"X-Team": "sre"}
				st.KeepAlive, st.SessionHeader = &keepAlive, "x-conversation"
			})
			req, err := NewRequest(tg, dataset.Prompt{Text: "hi", InputTokens: 1, OutputTokens: 1, Session: "s1"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.ID = record.NewRequestID(1, 1, "p", 7)
			if rec := NewClient().Do(context.Background(), tg, req); rec.Outcome != record.OutcomeOK {
				t.Fatalf("%v %q %s", rec.Outcome, rec.Reason, rec.Err)
			}
			r, body := <-got, <-bodies
			h := r.Header
			for k, want := range map[string]string{
				"X-Team":          "sre",
				"Authorization":   "Bearer sk-test",
				"Content-Type":    "application/json",
				"X-Conversation":  "s1",
				RequestIDHeader:   req.ID.String(),
				TraceparentHeader: req.ID.Traceparent(),
				"User-Agent":      "Go-http-client/1.1",
			} {
				if h.Get(k) != want {
					t.Errorf("%s: %q, want %q", k, h.Get(k), want)
				}
			}
			if r.Method != http.MethodPost || r.RequestURI != "/v1/chat/completions" || r.Host != strings.TrimPrefix(url, "http://") {
				t.Errorf("request line %s %s, host %s", r.Method, r.RequestURI, r.Host)
			}
			if body != string(req.Body) || r.ContentLength != int64(len(req.Body)) {
				t.Errorf("body %q (Content-Length %d), want %q", body, r.ContentLength, req.Body)
			}
			if h.Get("Accept-Encoding") != "" {
				t.Errorf("Accept-Encoding %q sent", h.Get("Accept-Encoding"))
			}
			if r.Close == keepAlive {
				t.Errorf("Connection: close %v with keep-alive %v", r.Close, keepAlive)
			}
		})
	}
}

// TestH1InvalidHeaderRefused: a header value net/http would refuse is not
// written.
func TestH1InvalidHeaderRefused(t *testing.T) {
	url := tcpServer(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			t.Error("the request reached the server")
		}
	})
	tg := testTarget(t, url+"/v1", func(st *scenarios.Target) { st.SessionHeader = "X-Conversation" })
	req, err := NewRequest(tg, dataset.Prompt{Text: "hi", InputTokens: 1, OutputTokens: 1, Session: "s1\r\nX-Injected: 1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := NewClient().Do(context.Background(), tg, req)
	if rec.Outcome != record.OutcomeError || !strings.Contains(rec.Err, "invalid header field value") {
		t.Errorf("%v %q %s, want an invalid header error", rec.Outcome, rec.Reason, rec.Err)
	}
}

// TestH1CancelledMidBody: cancelling the request ends a read blocked in
// the middle of the body, at once, with the cancellation's cause, and
// closes the connection.
func TestH1CancelledMidBody(t *testing.T) {
	closed := make(chan struct{})
	url := rawServer(t, func(c *net.TCPConn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		fmt.Fprintf(c, "%x\r\n%s\r\n", len(chat("a")), chat("a"))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			close(closed)
		}
	})
	tg := testTarget(t, url+"/v1", nil)
	c := NewClient()
	route := c.h1RouteFor(tg, tg.conn)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	req, err := NewRequest(tg, dataset.Prompt{Text: "hi", InputTokens: 1, OutputTokens: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var phases phaseTrace
	phases.now = time.Now
	resp, err := c.h1RoundTrip(ctx, route, tg, req, phases.hooks(func(httptrace.GotConnInfo) {}, func() {}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Body.Read(make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	cause := errors.New("given up")
	time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
	start := time.Now()
	_, err = resp.Body.Read(make([]byte, 1024))
	if !errors.Is(err, cause) || time.Since(start) > time.Second {
		t.Errorf("read ended with %v after %v, want the cause at once", err, time.Since(start))
	}
	select {
	case <-closed:
	case <-time.After(faultWait):
		t.Error("the connection was not closed")
	}
	resp.Body.Close()
}

// TestH1IdleClosedByServerDropped: a connection the server closed while it
// sat idle past http1.IdleCheckAfter (its idle timeout) is not sent on: the
// request goes out on a new one, and is not counted as sent again.
func TestH1IdleClosedByServerDropped(t *testing.T) {
	url := tcpServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		body := chat("a") + done
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		time.Sleep(100 * time.Millisecond) // the server's idle timeout
	})
	tg := testTarget(t, url+"/v1", nil)
	c := NewClient()
	c.peerFor(tg).learn(peerKeeps)
	if rec := sendEach(t, c, tg, 1)[0]; rec.Outcome != record.OutcomeOK {
		t.Fatalf("first request: %v %q %s", rec.Outcome, rec.Reason, rec.Err)
	}
	time.Sleep(http1.IdleCheckAfter + 100*time.Millisecond)
	rec := sendEach(t, c, tg, 1)[0]
	if rec.Outcome != record.OutcomeOK || rec.ConnRetried || rec.Phases.Conn == record.ConnReused {
		t.Errorf("%v %q %s, retried %v, on a %v connection; want ok on a new one, not retried", rec.Outcome, rec.Reason, rec.Err, rec.ConnRetried, rec.Phases.Conn)
	}
}

// TestH1UnsolicitedBytesDropped: a connection its server sent bytes on
// after the response's end is not sent on again: the next request goes out
// on a new one, and is not counted as sent again.
func TestH1UnsolicitedBytesDropped(t *testing.T) {
	var conns atomic.Int32
	url := tcpServer(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		body := chat("a") + done
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		if conns.Add(1) > 1 {
			return
		}
		time.Sleep(20 * time.Millisecond)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		io.Copy(io.Discard, c) // until the client closes it
	})
	tg := testTarget(t, url+"/v1", nil)
	c := NewClient()
	c.peerFor(tg).learn(peerKeeps)
	if rec := sendEach(t, c, tg, 1)[0]; rec.Outcome != record.OutcomeOK {
		t.Fatalf("first request: %v %q %s", rec.Outcome, rec.Reason, rec.Err)
	}
	time.Sleep(50 * time.Millisecond)
	rec := sendEach(t, c, tg, 1)[0]
	if rec.Outcome != record.OutcomeOK || rec.ConnRetried || rec.Phases.Conn == record.ConnReused {
		t.Errorf("%v %q %s, retried %v, on a %v connection; want ok on a new one, not retried", rec.Outcome, rec.Reason, rec.Err, rec.ConnRetried, rec.Phases.Conn)
	}
}
