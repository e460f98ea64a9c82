package prober

import (
	"errors"
	"net/textproto"
	"strconv"
	"sync"

	"golang.org/x/net/http/httpguts"
)

// Writing a request on the one-goroutine path (h1.go): the head built in a
// pooled buffer, and the body with it, in one write, unless it is long.

// h1WriteBuffers holds the buffers requests are written from.
var h1WriteBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 2*connBufferBytes)
	return &b
}}

// maxBufferedWrite is the longest request written whole from one buffer,
// in one write; a longer one's body is written after its head.
const maxBufferedWrite = 64 << 10

// writeRequest writes req's head and body.
func (c *h1Conn) writeRequest(route *h1Route, t *Target, req *Request) error {
	bp := h1WriteBuffers.Get().(*[]byte)
	defer h1WriteBuffers.Put(bp)
	b, err := appendRequestHead((*bp)[:0], route, t, req)
	if err != nil {
		return err
	}
	body := req.Body
	if len(b)+len(body) <= maxBufferedWrite {
		b, body = append(b, body...), nil
	}
	*bp = b
	if _, err := c.rw.Write(b); err != nil || len(body) == 0 {
		return err
	}
	_, err = c.rw.Write(body)
	return err
}

// appendRequestHead appends req's request line and header as net/http
// writes them: Host, a User-Agent unless the target sets one,
// Content-Length, the target's headers, the session's and the ID headers,
// and Connection: close on a connection that is not to be reused.
func appendRequestHead(b []byte, route *h1Route, t *Target, req *Request) ([]byte, error) {
	b = append(b, "POST "...)
	b = append(b, route.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, route.host...)
	b = append(b, "\r\n"...)
	if _, ok := t.header["User-Agent"]; !ok {
		b = append(b, "User-Agent: Go-http-client/1.1\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(req.Body)), 10)
	b = append(b, "\r\n"...)
	var err error
	for k, vs := range t.header {
		switch {
		case k == "Host", k == "Content-Length", k == "Transfer-Encoding", k == "Trailer":
			continue // net/http writes its own
		case req.Session != "" && k == t.sessionHeader:
			continue
		}
		for _, v := range vs {
			if b, err = appendHeader(b, k, v); err != nil {
				return b, err
			}
		}
	}
	if req.Session != "" {
		if b, err = appendHeader(b, t.sessionHeader, req.Session); err != nil {
			return b, err
		}
	}
	b = t.appendIDHeaders(b, req.ID)
	if !route.pool.reuse {
		b = append(b, "Connection: close\r\n"...)
	}
	return append(b, "\r\n"...), nil
}

// appendHeader appends one header line, refusing what net/http refuses.
func appendHeader(b []byte, k, v string) ([]byte, error) {
	if !httpguts.ValidHeaderFieldName(k) {
		return b, errors.New("net/http: invalid header field name " + strconv.Quote(k))
	}
	if !httpguts.ValidHeaderFieldValue(v) {
		return b, errors.New("net/http: invalid header field value for " + strconv.Quote(k))
	}
	b = append(b, k...)
	b = append(b, ": "...)
	b = append(b, textproto.TrimString(v)...)
	return append(b, "\r\n"...), nil
}
