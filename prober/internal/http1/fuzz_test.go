package http1

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
)

// FuzzReadResponse reads any bytes as a response, split into reads of any
// size, and its body in reads of any size: it must not panic, grow the
// connection's buffer past its bounds, return more body than it was given,
// or keep a connection it had not read a whole response from.
func FuzzReadResponse(f *testing.F) {
	for _, seed := range []string{
		okHead + "Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"1c\r\ndata: {\"choices\":[]}\n\n\r\n0\r\n\r\n",
		okHead + "Transfer-Encoding: chunked\r\n\r\n5;ext=\"x\"\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n",
		okHead + "Content-Length: 5\r\nConnection: keep-alive\r\n\r\nhello",
		"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		okHead + "content-type: text/plain\r\nx-folded: a\r\n\tb\r\n\r\nuntil the close",
		"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nno",
		okHead + "Transfer-Encoding: chunked\n\nf\nabcdefghijklmno\n0\n\n",
	} {
		f.Add([]byte(seed), uint8(0), uint8(0))
		f.Add([]byte(seed), uint8(1), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, readSize, bodyReadSize uint8) {
		var script []string
		for rest := string(in); rest != ""; {
			n := len(rest)
			if readSize > 0 {
				n = min(n, int(readSize))
			}
			script, rest = append(script, rest[:n]), rest[n:]
		}
		p := &Pool{reuse: true}
		s := newScriptConn(p, script...)
		c := s.conn
		resp, err := c.readHTTPResponse(context.Background(), true, nil)
		if len(c.buf) > maxHeadBytes+2 {
			t.Fatalf("buffer grew to %d bytes reading the head", len(c.buf))
		}
		if err != nil {
			c.abort()
			return
		}
		if resp.StatusCode < 0 || resp.StatusCode > 999 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		buf := make([]byte, 1+int(bodyReadSize))
		total := 0
		for {
			n, err := resp.Body.Read(buf)
			if n < 0 || n > len(buf) {
				t.Fatalf("read %d into %d bytes", n, len(buf))
			}
			total += n
			if len(c.buf) > maxHeadBytes+2 {
				t.Fatalf("buffer grew to %d bytes reading the body", len(c.buf))
			}
			if err != nil {
				break
			}
		}
		if total > len(in) {
			t.Fatalf("a body of %d bytes from %d bytes of input", total, len(in))
		}
		resp.Body.Close()
		if _, err := resp.Body.Read(buf); !errors.Is(err, io.EOF) && !errors.Is(err, http.ErrBodyReadAfterClose) {
			t.Fatalf("read after Close: %v", err)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.idle) > 0 && (resp.Close || c.r != c.w) {
			t.Fatal("connection kept after a response that does not allow it, or with bytes unread")
		}
	})
}
