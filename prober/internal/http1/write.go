package http1

import (
	"errors"
	"net/textproto"
	"strconv"
	"sync"

	"golang.org/x/net/http/httpguts"
)

// Writing a request: the head built in a pooled buffer, and the body with
// it, in one write, unless it is long.

// Head is a POST's head as the client writes it. The body is passed apart:
// the connection's writes keep it, and a struct holding both would take the
// Header function to the heap with it, once a request.
type Head struct {
	Host string // the Host header
	Path string // the request target
	// Header appends the request's header lines, each through AppendField
	// unless known to be valid; the client writes Host, Content-Length and
	// Connection itself.
	Header func(b []byte) ([]byte, error)
}

// writeBuffers holds the buffers requests are written from.
var writeBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 2*BufferBytes)
	return &b
}}

// maxBufferedWrite is the longest request written whole from one buffer,
// in one write; a longer one's body is written after its head.
const maxBufferedWrite = 64 << 10

// writeRequest writes a request's head and body; Connection: close unless
// reuse is set.
func (c *conn) writeRequest(head *Head, body []byte, reuse bool) error {
	bp := writeBuffers.Get().(*[]byte)
	defer writeBuffers.Put(bp)
	b, err := appendRequestHead((*bp)[:0], head, len(body), reuse)
	if err != nil {
		return err
	}
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

// appendRequestHead appends head's request line and header: Host,
// Content-Length, head's header lines, and Connection: close on a
// connection that is not to be reused.
func appendRequestHead(b []byte, head *Head, bodyLen int, reuse bool) ([]byte, error) {
	b = append(b, "POST "...)
	b = append(b, head.Path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, head.Host...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(bodyLen), 10)
	b = append(b, "\r\n"...)
	b, err := head.Header(b)
	if err != nil {
		return b, err
	}
	if !reuse {
		b = append(b, "Connection: close\r\n"...)
	}
	return append(b, "\r\n"...), nil
}

// AppendField appends one header line, refusing what net/http refuses.
func AppendField(b []byte, k, v string) ([]byte, error) {
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
