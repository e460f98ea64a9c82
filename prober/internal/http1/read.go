package http1

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Reading a response (RFC 9112) as net/http's transport reads one: the
// status line and header through the connection's buffer, which grows only
// for a head longer than it, up to maxHeadBytes; 1xx responses skipped;
// the body framed by the header (bodyReader).

const (
	// maxHeadBytes bounds a response's head, with its 1xx responses, and
	// its trailer: servers send well under 1 KiB, net/http allows 10 MiB.
	maxHeadBytes = 1 << 20
	// max1xxResponses bounds the informational responses skipped, as
	// net/http does.
	max1xxResponses = 5
	// maxChunkedSizeLine bounds a chunk-size line with its extensions, as
	// net/http's chunked reader does.
	maxChunkedSizeLine = 4 << 10
	// maxEmptyReads is how many reads in a row may return nothing.
	maxEmptyReads = 100
)

var (
	errHeadTooLarge = fmt.Errorf("net/http: server response headers exceeded %d bytes", maxHeadBytes)
	errTooLong      = errors.New("line too long")
	// errWouldBlock says that framing needs a read it was not to make.
	errWouldBlock = errors.New("framing not buffered")
)

// fill reads more into the buffer, after moving what it holds to its start
// and, when it is full, growing it up to limit bytes.
func (c *conn) fill(limit int) error {
	if c.rerr != nil {
		return c.rerr
	}
	if c.r > 0 {
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.r = 0
	}
	if c.w == len(c.buf) {
		if c.w >= limit {
			return errTooLong
		}
		b := make([]byte, min(2*len(c.buf), limit))
		copy(b, c.buf[:c.w])
		c.buf = b
	}
	n, err := c.read(c.buf[c.w:])
	c.w += n
	return err
}

// read reads into p from the connection. A read error that comes with data
// is kept, and returned by the next read; once there was one, every read
// returns it.
func (c *conn) read(p []byte) (int, error) {
	if c.rerr != nil {
		return 0, c.rerr
	}
	for range maxEmptyReads {
		n, err := c.rw.Read(p)
		if err != nil {
			c.rerr = err
			if n > 0 {
				err = nil
			}
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}

// line returns the next line without its end (LF, or CRLF), consumed and
// valid until the next fill. It reads only when block is set, and fails
// once the line passes limit bytes.
func (c *conn) line(block bool, limit int) ([]byte, error) {
	scanned := 0
	for {
		if i := bytes.IndexByte(c.buf[c.r+scanned:c.w], '\n'); i >= 0 {
			line := c.buf[c.r : c.r+scanned+i]
			c.r += scanned + i + 1
			return bytes.TrimSuffix(line, []byte{'\r'}), nil
		}
		scanned = c.w - c.r
		switch {
		case scanned >= limit:
			return nil, errTooLong
		case !block:
			return nil, errWouldBlock
		}
		if err := c.fill(limit + 2); err != nil {
			return nil, err
		}
	}
}

// readHTTPResponse reads the response to the request written, skipping 1xx
// ones, and frames its body. keep says whether the request allows the
// connection to be reused; firstByte, if set, is called at the first byte.
func (c *conn) readHTTPResponse(ctx context.Context, keep bool, firstByte func()) (*http.Response, error) {
	budget := maxHeadBytes
	r := new(response)
	for n := 0; ; n++ {
		head, err := c.readHead(&budget, firstByte)
		if err != nil {
			if n > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		firstByte = nil
		r.resp = http.Response{}
		if err := parseHead(head, &r.resp); err != nil {
			return nil, err
		}
		if code := r.resp.StatusCode; code < 100 || code >= 200 || code == http.StatusSwitchingProtocols {
			break
		}
		if n == max1xxResponses {
			return nil, errors.New("net/http: too many 1xx informational responses")
		}
	}
	if len(c.buf) > BufferBytes && c.w-c.r <= BufferBytes {
		// A long head grew the buffer: back to the usual size.
		b := make([]byte, BufferBytes)
		c.w, c.r, c.buf = copy(b, c.buf[c.r:c.w]), 0, b
	}
	if err := c.frameBody(ctx, r, keep); err != nil {
		return nil, err
	}
	return &r.resp, nil
}

// readHead returns the next head, without the empty line that ends it,
// which is consumed too; budget is what is left of maxHeadBytes, and is
// charged. firstByte, if set, is called once a first byte was read.
func (c *conn) readHead(budget *int, firstByte func()) (string, error) {
	start, scan := 0, 0 // from c.r: the line's start, and how far it was scanned
	for {
		if i := bytes.IndexByte(c.buf[c.r+scan:c.w], '\n'); i >= 0 {
			end := scan + i
			if end > start && !(end == start+1 && c.buf[c.r+start] == '\r') {
				start, scan = end+1, end+1
				continue
			}
			if start == 0 {
				return "", errors.New(`malformed HTTP response ""`)
			}
			head := string(c.buf[c.r : c.r+start])
			c.r += end + 1
			*budget -= end + 1
			return head, nil
		}
		scan = c.w - c.r
		if scan >= *budget {
			return "", errHeadTooLarge
		}
		partial := scan > 0
		if err := c.fill(*budget); err != nil {
			switch {
			case err == errTooLong:
				err = errHeadTooLarge
			case err == io.EOF && partial:
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		if firstByte != nil {
			firstByte()
			firstByte = nil
		}
	}
}

func badHead(what, s string) error { return fmt.Errorf("%s %q", what, s) }

// parseHead parses a status line and header into resp, as net/http does;
// the header's keys and values are slices of head. A line that begins
// with a space or tab continues the one before (obsolete line folding).
func parseHead(head string, resp *http.Response) error {
	line, rest, _ := strings.Cut(head, "\n")
	line = strings.TrimSuffix(line, "\r")
	proto, status, ok := strings.Cut(line, " ")
	if !ok {
		return badHead("malformed HTTP response", line)
	}
	major, minor, ok := http.ParseHTTPVersion(proto)
	if !ok || major != 1 {
		return badHead("malformed HTTP version", proto)
	}
	status = strings.TrimLeft(status, " ")
	code, _, _ := strings.Cut(status, " ")
	if len(code) != 3 || !isDigits(code) {
		return badHead("malformed HTTP status code", code)
	}
	resp.Proto, resp.ProtoMajor, resp.ProtoMinor = proto, major, minor
	resp.Status = status
	resp.StatusCode, _ = strconv.Atoi(code)

	lines := strings.Count(rest, "\n")
	h := make(http.Header, lines)
	values := make([]string, lines) // one per key that has one
	var last []string               // the values of the line before
	for i := 0; rest != ""; {
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		if line[0] == ' ' || line[0] == '\t' {
			if last == nil {
				return badHead("malformed MIME header initial line", line)
			}
			last[len(last)-1] += " " + textproto.TrimString(line)
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || !httpguts.ValidHeaderFieldName(k) {
			return badHead("malformed MIME header line", line)
		}
		k, v = textproto.CanonicalMIMEHeaderKey(k), textproto.TrimString(v)
		if vs, ok := h[k]; ok {
			h[k] = append(vs, v)
		} else {
			values[i] = v
			h[k] = values[i : i+1 : i+1]
			i++
		}
		last = h[k]
	}
	resp.Header = h
	return nil
}

func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// chunkedEncoding is a response's Transfer-Encoding once read: shared, as
// nothing writes it.
var chunkedEncoding = []string{"chunked"}

// frameBody sets r's body from its head, as net/http frames a response (RFC
// 9112 §6.3): chunked from HTTP/1.1 on, else by Content-Length, none for
// 1xx, 204 and 304, else up to the close. keep says whether the request
// allows the connection to be reused, which the response may still refuse.
// A response without a body ends its request at once.
func (c *conn) frameBody(ctx context.Context, r *response, keep bool) error {
	resp := &r.resp
	chunked := false
	if te, ok := resp.Header["Transfer-Encoding"]; ok {
		delete(resp.Header, "Transfer-Encoding")
		if resp.ProtoAtLeast(1, 1) {
			if len(te) != 1 || !strings.EqualFold(te[0], "chunked") {
				return fmt.Errorf("net/http: unsupported transfer encoding: %q", te)
			}
			chunked = true
		}
	}
	cls := resp.Header["Content-Length"]
	for _, cl := range cls[min(1, len(cls)):] {
		if textproto.TrimString(cl) != textproto.TrimString(cls[0]) {
			return fmt.Errorf("http: message cannot contain multiple Content-Length headers; got %q", cls)
		}
	}
	length := int64(-1)
	switch code := resp.StatusCode; {
	case code/100 == 1, code == http.StatusNoContent, code == http.StatusNotModified:
		length = 0
	case chunked:
		resp.TransferEncoding = chunkedEncoding
	case len(cls) > 0:
		n, err := strconv.ParseUint(textproto.TrimString(cls[0]), 10, 63)
		if err != nil {
			return badHead("bad Content-Length", cls[0])
		}
		length = int64(n)
	}
	conn := resp.Header["Connection"]
	resp.ContentLength = length
	resp.Close = !keep || resp.StatusCode == http.StatusSwitchingProtocols || length < 0 && !chunked ||
		httpguts.HeaderValuesContainsToken(conn, "close") ||
		resp.ProtoMinor == 0 && !httpguts.HeaderValuesContainsToken(conn, "keep-alive")
	if length == 0 {
		resp.Body = http.NoBody
		c.release(!resp.Close)
		return nil
	}
	r.body = bodyReader{c: c, ctx: ctx, chunked: chunked, keep: !resp.Close, left: length, trailerBudget: maxHeadBytes}
	if chunked {
		r.body.state = chunkedSizeLine
	}
	resp.Body = &r.body
	return nil
}
