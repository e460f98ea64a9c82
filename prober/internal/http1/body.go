package http1

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
)

// response is a response with its body, in one allocation.
type response struct {
	resp http.Response
	body bodyReader
}

type bodyState uint8

const (
	bodyData        bodyState = iota // in data: the Content-Length's, a chunk's, or up to the close
	chunkedSizeLine                  // at a chunk-size line
	chunkedDataEnd                   // at the line end after a chunk's data
	chunkedTrailer                   // in the trailer, after the last chunk
	bodyDone
)

// bodyReader is a response body read from its connection in the reader's own
// goroutine: chunked, by Content-Length, or up to the close. Its end (the
// end of its framing) releases the connection, idle again when it may be
// reused; a read error or a Close before the end closes it.
type bodyReader struct {
	c   *conn           // nil once the body ended
	ctx context.Context // the request's: its end closed the connection
	err error           // io.EOF once ended well, else why it did

	state   bodyState
	chunked bool
	keep    bool  // the connection may be reused after the body
	left    int64 // data left in the chunk or the Content-Length; -1 up to the close
	// trailerBudget is how many trailer bytes may still come.
	trailerBudget int
}

// Read reads the body; a read that consumes the end of the framing returns
// io.EOF with the last data when the framing was already buffered, so that
// the connection is released without another call.
func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.read(p)
	if err != nil {
		b.end(err)
	}
	return n, b.err
}

func (b *bodyReader) read(p []byte) (int, error) {
	c, n := b.c, 0
	for {
		if b.state != bodyData || b.left == 0 {
			// Only a read with nothing to return yet waits for framing.
			switch err := b.readChunkedFraming(n == 0); {
			case err == errWouldBlock:
				return n, nil
			case err != nil:
				return n, err
			case b.state == bodyDone:
				return n, io.EOF
			}
		}
		if n == len(p) {
			return n, nil
		}
		want := len(p) - n
		if b.left >= 0 && int64(want) > b.left {
			want = int(b.left)
		}
		if c.r == c.w {
			if n > 0 {
				return n, nil
			}
			if want >= len(c.buf) {
				// As long as the buffer or longer: straight into p.
				m, err := c.read(p[:want])
				n += m
				b.consumed(m)
				if err != nil {
					return n, b.dataErr(err)
				}
				continue
			}
			if err := c.fill(len(c.buf)); err != nil {
				return n, b.dataErr(err)
			}
		}
		m := copy(p[n:n+want], c.buf[c.r:c.w])
		c.r += m
		n += m
		b.consumed(m)
	}
}

func (b *bodyReader) consumed(n int) {
	if b.left > 0 {
		b.left -= int64(n)
	}
}

// dataErr is a failed read of data: the close ends a body read up to it,
// and truncates any other.
func (b *bodyReader) dataErr(err error) error {
	if err != io.EOF {
		return err
	}
	if b.left < 0 {
		b.state = bodyDone
		return io.EOF
	}
	return io.ErrUnexpectedEOF
}

var errMalformedChunked = errors.New("malformed chunked encoding")

// readChunkedFraming consumes chunked framing up to the next data or the
// body's end. It reads only when block is set, and says errWouldBlock when
// it needed to.
func (b *bodyReader) readChunkedFraming(block bool) error {
	c := b.c
	for {
		switch b.state {
		case bodyData: // at the end of its data
			if !b.chunked {
				b.state = bodyDone
				return nil
			}
			b.state = chunkedDataEnd
		case chunkedDataEnd:
			line, err := c.line(block, 2)
			if err != nil {
				return b.framingErr(err)
			}
			if len(line) != 0 {
				return errMalformedChunked
			}
			b.state = chunkedSizeLine
		case chunkedSizeLine:
			line, err := c.line(block, maxChunkedSizeLine)
			if err != nil {
				return b.framingErr(err)
			}
			size, err := parseChunkedSize(line)
			if err != nil {
				return err
			}
			if size == 0 {
				b.state = chunkedTrailer
				continue
			}
			b.state, b.left = bodyData, size
			return nil
		case chunkedTrailer:
			line, err := c.line(block, b.trailerBudget)
			if err != nil {
				return b.framingErr(err)
			}
			if b.trailerBudget -= len(line) + 2; len(line) == 0 {
				b.state = bodyDone
			}
		case bodyDone:
			return nil
		}
	}
}

func (b *bodyReader) framingErr(err error) error {
	switch err {
	case io.EOF:
		return io.ErrUnexpectedEOF
	case errTooLong:
		return errMalformedChunked
	}
	return err
}

// parseChunkedSize reads a chunk-size line: hexadecimal digits, then
// optional blanks and extensions, which are ignored.
func parseChunkedSize(line []byte) (int64, error) {
	var size int64
	digits := 0
	for ; digits < len(line); digits++ {
		d, ok := hexValue(line[digits])
		if !ok {
			break
		}
		if digits == 15 {
			return 0, errors.New("http chunk length too large")
		}
		size = size<<4 | int64(d)
	}
	rest := bytes.TrimLeft(line[digits:], " \t")
	if digits == 0 || len(rest) > 0 && rest[0] != ';' {
		return 0, errMalformedChunked
	}
	return size, nil
}

func hexValue(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// end ends the body with err: io.EOF releases the connection, anything
// else closes it, the request's context's cause standing for what its
// close made of the read.
func (b *bodyReader) end(err error) {
	c := b.c
	b.c = nil
	if err == io.EOF {
		b.err = io.EOF
		c.release(b.keep)
		return
	}
	if b.ctx.Err() != nil {
		err = context.Cause(b.ctx)
	}
	b.err = err
	c.abort()
}

// Close ends the body; before its end, that closes the connection.
func (b *bodyReader) Close() error {
	if c := b.c; c != nil {
		b.c = nil
		c.abort()
	}
	b.err = http.ErrBodyReadAfterClose
	return nil
}
