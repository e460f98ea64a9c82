package prober

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// The fault matrix (docs/faults.md, "Fault matrix"): one row per way a target can
// misbehave, each against a test server written to misbehave that way, all on
// 127.0.0.1. Every row asserts the error reason (or acceptance) and that Do
// returns within a bound; the oversized line also asserts bounded memory.

const (
	// faultWait bounds how long any misbehaving handler holds a request, so
	// that no server goroutine outlives its row by much even if the client
	// failed to hang up.
	faultWait = 10 * time.Second
	done      = "data: [DONE]\n\n"
)

// faultServer starts an HTTP test server for one row.
func faultServer(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(drained(h))
	t.Cleanup(srv.Close)
	return srv.URL
}

// rawServer starts a TCP server on 127.0.0.1 for faults HTTP cannot express:
// each connection's request is read (headers and body) and then handed to fn,
// which writes what it likes; the connection is closed when fn returns.
func rawServer(t *testing.T, fn func(c *net.TCPConn)) string {
	return tcpServer(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		fn(c.(*net.TCPConn))
	})
}

// tcpServer starts a TCP server on 127.0.0.1 that hands each connection to
// serve and closes it when serve returns (or faultWait passes); it returns
// the base URL.
func tcpServer(t *testing.T, serve func(c net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(faultWait))
				serve(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return "http://" + ln.Addr().String()
}

// wait holds a handler until the client leaves (or faultWait passes).
func wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(faultWait):
	}
}

func flush(w http.ResponseWriter) { w.(http.Flusher).Flush() }

func eventStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
}

const sseHeader = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"

func TestFaultMatrix(t *testing.T) {
	// The oversized line is built before any measurement.
	huge := append([]byte("data: "), bytes.Repeat([]byte("a"), 8<<20)...)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, chat(" a")+chat(" b")+done)
	zw.Close()

	timeout := func(d time.Duration) func(*scenarios.Target) {
		return func(st *scenarios.Target) { st.Timeout = scenarios.Duration(d) }
	}

	type row struct {
		name   string
		server func(t *testing.T) string // starts the server, returns the target URL
		target func(*scenarios.Target)
		reason record.Reason // ReasonNone: the request must succeed
		errHas string
		within time.Duration // Do must return within this
		memory bool          // assert bounded heap growth
	}
	rows := []row{
		{name: "connection refused", server: func(t *testing.T) string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			return "http://" + addr
		}, reason: record.ReasonConnect, errHas: "refused"},
		// A label over 63 bytes is not a domain name: Go's resolver answers
		// "no such host" without sending a query, and .invalid never
		// resolves anyway (RFC 6761).
		{name: "DNS failure", server: func(*testing.T) string {
			return "http://" + strings.Repeat("x", 64) + ".invalid"
		}, reason: record.ReasonConnect, errHas: "no such host"},
		{name: "TLS untrusted certificate", server: func(t *testing.T) string {
			srv := httptest.NewUnstartedServer(drained(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, chat(" a")+done)
			}))
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake failure is the point
			srv.StartTLS()
			t.Cleanup(srv.Close)
			return srv.URL
		}, reason: record.ReasonConnect, errHas: "certificate"},
		{name: "no headers within the timeout", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) { wait(r) })
		}, target: timeout(200 * time.Millisecond), reason: record.ReasonTimeout},
		{name: "slow headers within the timeout", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(300 * time.Millisecond)
				eventStream(w)
				io.WriteString(w, chat(" a")+chat(" b")+done)
			})
		}, target: timeout(3 * time.Second), reason: record.ReasonNone},
		{name: "stream stalls", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				io.WriteString(w, chat(" a"))
				flush(w)
				wait(r)
			})
		}, target: func(st *scenarios.Target) { st.StallTimeout = scenarios.Duration(200 * time.Millisecond) }, reason: record.ReasonStall},
		{name: "stream cut without [DONE]", server: func(t *testing.T) string {
			return rawServer(t, func(c *net.TCPConn) { io.WriteString(c, sseHeader+chat(" a")+chat(" b")) })
		}, reason: record.ReasonTruncated, errHas: "before [DONE]"},
		{name: "stream cut inside a chunk", server: func(t *testing.T) string {
			return rawServer(t, func(c *net.TCPConn) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
					fmt.Sprintf("%x\r\n%s\r\n", 200, chat(" a")[:40]))
			})
		}, reason: record.ReasonTruncated},
		{name: "connection reset mid-stream", server: func(t *testing.T) string {
			return rawServer(t, func(c *net.TCPConn) {
				io.WriteString(c, sseHeader+chat(" a"))
				time.Sleep(100 * time.Millisecond) // let the client read the headers
				_ = c.SetLinger(0)                 // Close sends RST
			})
		}, reason: record.ReasonTruncated, errHas: "reset"},
		{name: "connection reset before a response", server: func(t *testing.T) string {
			return rawServer(t, func(c *net.TCPConn) { _ = c.SetLinger(0) })
		}, reason: record.ReasonConnect},
		{name: "malformed JSON in a chunk", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				io.WriteString(w, chat(" a")+`data: {"choices":[{"delta":{"content":"b"}`+"\n\n"+done)
			})
		}, reason: record.ReasonProtocol, errHas: "decoding chunk"},
		{name: "error event", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				io.WriteString(w, chat(" a")+"event: error\ndata: {\"message\":\"overloaded\"}\n\n")
			})
		}, reason: record.ReasonServerErrorEvent, errHas: "overloaded"},
		{name: "error object in a chunk", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				io.WriteString(w, chat(" a")+`data: {"error":{"message":"out of memory"}}`+"\n\n")
			})
		}, reason: record.ReasonServerErrorEvent, errHas: "out of memory"},
		{name: "8 MiB line", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				w.Write(huge)
			})
		}, reason: record.ReasonProtocol, errHas: "larger than", memory: true},
		{name: "stream never ends", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				for i := 0; i < 100000; i++ {
					if _, err := io.WriteString(w, chat(" a")); err != nil {
						return
					}
					flush(w)
					select {
					case <-r.Context().Done():
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			})
		}, target: timeout(300 * time.Millisecond), reason: record.ReasonTimeout},
		{name: "gzip-encoded stream", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				if ae := r.Header.Get("Accept-Encoding"); ae != "" {
					t.Errorf("client sent Accept-Encoding %q", ae)
				}
				eventStream(w)
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(gz.Bytes())
			})
		}, reason: record.ReasonNone},
		{name: "stream in an encoding not decoded", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				w.Header().Set("Content-Encoding", "compress")
				w.Write(gz.Bytes())
			})
		}, reason: record.ReasonProtocol, errHas: `Content-Encoding "compress"`},
		{name: "corrupt gzip stream", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				w.Header().Set("Content-Encoding", "gzip")
				// After gzip's 10-byte header, a deflate block of the reserved type 3.
				w.Write(gz.Bytes()[:10])
				w.Write([]byte{0x07, 0, 0, 0})
			})
		}, reason: record.ReasonProtocol, errHas: "does not decode"},
		{name: "HTML page with 200", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				io.WriteString(w, "<!doctype html>\n<html><body><h1>Welcome to nginx!</h1></body></html>\n")
			})
		}, reason: record.ReasonProtocol, errHas: "text/html"},
		{name: "redirect", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/elsewhere" {
					t.Error("redirect followed")
				}
				http.Redirect(w, r, "/elsewhere", http.StatusFound)
			})
		}, reason: record.ReasonProtocol, errHas: "HTTP 302"},
		{name: "JSON completion to a streaming request", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"choices":[{"message":{"content":"a b c"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":3}}`)
			})
		}, reason: record.ReasonProtocol, errHas: "one JSON body"},
		{name: "JSON error with 200 to a streaming request", server: func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"error":{"message":"model is loading"}}`)
			})
		}, reason: record.ReasonServerErrorEvent, errHas: "model is loading"},
	}
	for _, code := range []int{400, 401, 404, 429, 500, 503} {
		want := statusReason(code)
		for _, body := range []struct{ kind, ctype, text string }{
			{"JSON", "application/json", fmt.Sprintf(`{"error":{"message":"failure %d","code":%d}}`, code, code)},
			{"HTML", "text/html", fmt.Sprintf("<html><head><title>%d</title></head><body>failure %d</body></html>", code, code)},
		} {
			rows = append(rows, row{name: fmt.Sprintf("HTTP %d %s", code, body.kind), server: func(t *testing.T) string {
				return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", body.ctype)
					w.WriteHeader(code)
					io.WriteString(w, body.text)
				})
			}, reason: want, errHas: fmt.Sprintf("failure %d", code)})
		}
	}

	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			tg := testTarget(t, tc.server(t), tc.target)
			within := tc.within
			if within == 0 {
				within = 3 * time.Second
			}
			var before, after runtime.MemStats
			if tc.memory {
				runtime.GC()
				runtime.ReadMemStats(&before)
			}
			start := time.Now()
			rec := do(t, tg, nil)
			elapsed := time.Since(start)
			if tc.memory {
				runtime.ReadMemStats(&after)
				// Everything allocated during the call, server included: an
				// upper bound on heap growth, whatever GC ran meanwhile.
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 3*maxEventBytes {
					t.Errorf("allocated %d MiB during the request, want under %d MiB", grew>>20, 3*maxEventBytes>>20)
				} else {
					t.Logf("allocated %.1f MiB during the request", float64(grew)/(1<<20))
				}
			}
			if elapsed > within {
				t.Errorf("Do took %v, want under %v", elapsed, within)
			}
			if tc.reason == record.ReasonNone {
				if rec.Outcome != record.OutcomeOK || rec.OutputTokens == 0 {
					t.Fatalf("outcome %v reason %q err %q, want success", rec.Outcome, rec.Reason, rec.Err)
				}
				return
			}
			if rec.Outcome != record.OutcomeError || rec.Reason != tc.reason || !strings.Contains(rec.Err, tc.errHas) {
				t.Errorf("outcome %v reason %q err %q, want error %q containing %q", rec.Outcome, rec.Reason, rec.Err, tc.reason, tc.errHas)
			}
		})
	}
}

// TestCutStreamEndsAtTheCut: a stream the server cuts (a close before its
// end, a reset, inside compressed data too) ends when the client saw the
// cut, not at the last byte it read before: the server cuts hold after it
// got the request, so the request lasted at least that.
func TestCutStreamEndsAtTheCut(t *testing.T) {
	const hold = 150 * time.Millisecond
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, chat(" a"))
	zw.Flush() // the chunk decodes; the stream has no end
	gzipped := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n" + gz.String()
	for _, tc := range []struct {
		name, reply string
		reset       bool
	}{{"closed", sseHeader + chat(" a"), false}, {"reset", sseHeader + chat(" a"), true}, {"closed inside gzip", gzipped, false}} {
		t.Run(tc.name, func(t *testing.T) {
			tg := testTarget(t, rawServer(t, func(c *net.TCPConn) {
				io.WriteString(c, tc.reply)
				time.Sleep(hold)
				if tc.reset {
					_ = c.SetLinger(0) // Close sends RST
				}
			}), nil)
			rec := do(t, tg, nil)
			if rec.Reason != record.ReasonTruncated || len(rec.Chunks) != 1 {
				t.Fatalf("reason %q, %d chunks (%s); want truncated after one chunk", rec.Reason, len(rec.Chunks), rec.Err)
			}
			if rec.Duration < hold {
				t.Errorf("duration %v, want at least the %v the server held the stream before the cut (the chunk came at %v)", rec.Duration, hold, rec.Chunks[0])
			}
		})
	}
}
