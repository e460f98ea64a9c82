package http1

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// readScripted reads a response and its body from a connection that reads
// the script and then EOF, and reports whether the connection went idle
// after it.
func readScripted(t *testing.T, script []string) (resp *http.Response, body string, kept bool, err error) {
	t.Helper()
	p := &Pool{reuse: true}
	s := newScriptConn(p, script...)
	resp, err = s.conn.readHTTPResponse(context.Background(), true, nil)
	if err != nil {
		s.conn.abort() // as exchange does
	} else {
		var b []byte
		b, err = io.ReadAll(resp.Body)
		body = string(b)
		resp.Body.Close()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	kept = len(p.idle) == 1 && !s.isClosed()
	if !kept && !s.isClosed() {
		t.Error("the connection was neither kept nor closed")
	}
	return resp, body, kept, err
}

const okHead = "HTTP/1.1 200 OK\r\n"

func TestFraming(t *testing.T) {
	long := strings.Repeat("x", 2<<10)
	for _, tc := range []struct {
		name   string
		in     string
		status int
		header map[string]string
		body   string
		kept   bool
		err    string // of the head, or of the body
		whole  bool   // only as one read
	}{
		{name: "Content-Length", in: okHead + "Content-Length: 5\r\n\r\nhello", body: "hello", kept: true},
		{name: "chunked, with extensions and a trailer",
			in:   okHead + "Transfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6 ; a=\"b\"\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n",
			body: "hello world", kept: true},
		{name: "chunked, bare line feeds", in: okHead + "Transfer-Encoding: Chunked\n\n5\nhello\n0\n\n", body: "hello", kept: true},
		{name: "chunk-size line of 2 KiB", in: okHead + "Transfer-Encoding: chunked\r\n\r\n2;" + long + "\r\nok\r\n0\r\n\r\n", body: "ok", kept: true},
		{name: "until the close", in: okHead + "Content-Type: text/event-stream\r\n\r\ndata: a\n\n", body: "data: a\n\n"},
		{name: "Connection: close", in: okHead + "Connection: close\r\nContent-Length: 2\r\n\r\nok", body: "ok"},
		{name: "HTTP/1.0", in: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", body: "ok"},
		{name: "HTTP/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", body: "ok", kept: true},
		{name: "HTTP/1.0 is not chunked", in: "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", body: "2\r\nok\r\n0\r\n\r\n"},
		{name: "1xx skipped", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + okHead + "Content-Length: 2\r\n\r\nok",
			body: "ok", kept: true},
		{name: "too many 1xx", in: strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 6) + okHead + "\r\n", err: "too many 1xx"},
		{name: "204", in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204, kept: true},
		{name: "404 with a body", in: "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope", status: 404, body: "nope", kept: true},
		{name: "header keys and folding", in: okHead + "content-length: 2\r\nx-folded: one\r\n two\r\nX-Dup: a\r\nX-Dup: b\r\nX-Empty:\r\n\r\nok",
			body: "ok", kept: true, header: map[string]string{"Content-Length": "2", "X-Folded": "one two", "X-Dup": "a|b", "X-Empty": ""}},
		{name: "the same Content-Length twice", in: okHead + "Content-Length: 2\r\nContent-Length: 2\r\n\r\nok", body: "ok", kept: true},
		// (Bytes that come after the body are Pool.take's.)
		{name: "bytes after the body", in: okHead + "Content-Length: 2\r\n\r\nokEXTRA", body: "ok", whole: true},

		{name: "empty status line", in: "\r\n" + okHead + "\r\n", err: `malformed HTTP response ""`},
		{name: "no status line", in: "garbage\r\n\r\n", err: "malformed HTTP response"},
		{name: "HTTP/2 status line", in: "HTTP/2.0 200 OK\r\n\r\n", err: "malformed HTTP version"},
		{name: "status code of four digits", in: "HTTP/1.1 2000 OK\r\n\r\n", err: "malformed HTTP status code"},
		{name: "status code not a number", in: "HTTP/1.1 +20 OK\r\n\r\n", err: "malformed HTTP status code"},
		{name: "header line without a colon", in: okHead + "No colon\r\n\r\n", err: "malformed MIME header line"},
		{name: "space in a header name", in: okHead + "Bad Name: v\r\n\r\n", err: "malformed MIME header line"},
		{name: "folding the first line", in: okHead + " folded\r\n\r\n", err: "malformed MIME header initial line"},
		{name: "bad Content-Length", in: okHead + "Content-Length: -1\r\n\r\n", err: "bad Content-Length"},
		{name: "two Content-Lengths", in: okHead + "Content-Length: 2\r\nContent-Length: 3\r\n\r\nok", err: "multiple Content-Length"},
		{name: "unsupported transfer encoding", in: okHead + "Transfer-Encoding: gzip, chunked\r\n\r\n", err: "unsupported transfer encoding"},
		{name: "header too large", in: okHead + "X-Big: " + strings.Repeat("a", maxHeadBytes) + "\r\n\r\n", err: "headers exceeded"},
		{name: "chunk size not hexadecimal", in: okHead + "Transfer-Encoding: chunked\r\n\r\nzz\r\n", err: "malformed chunked encoding"},
		{name: "chunk without its line end", in: okHead + "Transfer-Encoding: chunked\r\n\r\n2\r\nokXX\r\n0\r\n\r\n", body: "ok", err: "malformed chunked encoding"},
		{name: "chunk too large", in: okHead + "Transfer-Encoding: chunked\r\n\r\n1000000000000000\r\n", err: "chunk length too large"},
		{name: "chunk-size line too long", in: okHead + "Transfer-Encoding: chunked\r\n\r\n2;" + strings.Repeat(long, 3) + "\r\nok\r\n0\r\n\r\n", err: "malformed chunked encoding"},

		{name: "closed before a response", in: "", err: "EOF"},
		{name: "closed in the head", in: okHead + "Content-Len", err: "unexpected EOF"},
		{name: "closed after a 1xx", in: "HTTP/1.1 100 Continue\r\n\r\n", err: "unexpected EOF"},
		{name: "closed in Content-Length data", in: okHead + "Content-Length: 5\r\n\r\nhel", body: "hel", err: "unexpected EOF"},
		{name: "closed in a chunk", in: okHead + "Transfer-Encoding: chunked\r\n\r\n5\r\nhel", body: "hel", err: "unexpected EOF"},
		{name: "closed in the trailer", in: okHead + "Transfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n", err: "unexpected EOF"},
	} {
		splits := [][]string{{tc.in}}
		if len(tc.in) < 8<<10 && !tc.whole {
			// Every way the network may split it: one byte a read.
			bytewise := make([]string, len(tc.in))
			for i := range tc.in {
				bytewise[i] = tc.in[i : i+1]
			}
			splits = append(splits, bytewise)
		}
		for i, script := range splits {
			name := tc.name
			if i > 0 {
				name += ", a byte a read"
			}
			t.Run(name, func(t *testing.T) {
				resp, body, kept, err := readScripted(t, script)
				switch {
				case tc.err != "":
					if err == nil || !strings.Contains(err.Error(), tc.err) {
						t.Errorf("error %v, want one with %q", err, tc.err)
					}
					if kept {
						t.Error("the connection was kept after an error")
					}
				case err != nil:
					t.Fatal(err)
				case kept != tc.kept:
					t.Errorf("connection kept %v, want %v", kept, tc.kept)
				}
				if body != tc.body {
					t.Errorf("body %q, want %q", body, tc.body)
				}
				if resp == nil {
					return
				}
				if want := max(tc.status, 200); resp.StatusCode != want {
					t.Errorf("status %d, want %d", resp.StatusCode, want)
				}
				for k, v := range tc.header {
					if got := strings.Join(resp.Header[k], "|"); got != v {
						t.Errorf("header %s %q, want %q", k, got, v)
					}
				}
				if _, ok := resp.Header["Link"]; ok {
					t.Error("a 1xx response's header was kept")
				}
			})
		}
	}
}

// TestEOFWithLastData: a read that takes the end of a body whose framing
// was buffered with it returns io.EOF with the data, and the connection is
// idle by then.
func TestEOFWithLastData(t *testing.T) {
	for _, in := range []string{
		okHead + "Content-Length: 5\r\n\r\nhello",
		okHead + "Transfer-Encoding: chunked\r\n\r\n2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n",
	} {
		p := &Pool{reuse: true}
		s := newScriptConn(p, in)
		resp, err := s.conn.readHTTPResponse(context.Background(), true, nil)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, err := resp.Body.Read(buf)
		p.mu.Lock()
		idle := len(p.idle)
		p.mu.Unlock()
		if string(buf[:n]) != "hello" || err != io.EOF || idle != 1 {
			t.Errorf("%q: read %q, %v, %d idle; want hello, EOF, the connection idle", in, buf[:n], err, idle)
		}
	}
}

// TestBodyClosedEarly: a body closed before its end closes its
// connection, and is not read from after.
func TestBodyClosedEarly(t *testing.T) {
	p := &Pool{reuse: true}
	s := newScriptConn(p, okHead+"Content-Length: 10\r\n\r\nhello", "world")
	resp, err := s.conn.readHTTPResponse(context.Background(), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Body.Read(make([]byte, 2)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 2)); !errors.Is(err, http.ErrBodyReadAfterClose) || !s.isClosed() || len(p.idle) != 0 {
		t.Errorf("after Close: read %v, closed %v, %d idle; want ErrBodyReadAfterClose on a closed connection", err, s.isClosed(), len(p.idle))
	}
}

// TestFirstByte: the first-byte hook runs once, at the first byte.
func TestFirstByte(t *testing.T) {
	s := newScriptConn(&Pool{}, "H", "TTP/1.1 100 Continue\r\n\r\n", okHead+"\r\n")
	calls := 0
	if _, err := s.conn.readHTTPResponse(context.Background(), false, func() { calls++ }); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("first byte reported %d times, want once", calls)
	}
}
