// Package sse reads Server-Sent Events streams (the WHATWG HTML "event stream
// interpretation") and stamps each event with the time its bytes arrived.
//
// It sits on the per-chunk hot path of a latency benchmark, so it does its own
// buffering on top of the io.Reader: that way the timestamp belongs to the
// Read that delivered an event's terminating blank line, not to whenever the
// caller got round to parsing it, and steady-state reading allocates nothing.
//
// Bytes are passed through as they are: invalid UTF-8 is not replaced with
// U+FFFD as a browser would, since callers decode JSON and want the server's
// bytes.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

var (
	// ErrTooLarge means a line, or one event's joined data, exceeded the
	// Reader's maxEvent bytes. The stream cannot be resynchronised after it.
	ErrTooLarge = errors.New("sse: line or event exceeds the size limit")

	// ErrIncomplete means the stream ended in the middle of an event: inside
	// a line, or after field lines with no blank line to end the event. The
	// partial event is discarded, as the spec says. It matches
	// io.ErrUnexpectedEOF under errors.Is, so callers that already treat a
	// cut HTTP body as truncation treat this the same way.
	ErrIncomplete = fmt.Errorf("sse: stream ended in the middle of an event: %w", io.ErrUnexpectedEOF)
)

const (
	// initialBuffer holds a typical chat-completion chunk (a few hundred
	// bytes) a few times over; longer lines grow the buffer towards
	// maxEvent. One is held per open stream, so it is kept small: at 32 KiB
	// it was most of a stream's heap, at 4 KiB still a sixth.
	initialBuffer = 1 << 10

	// maxEmptyReads is how many (0, nil) Reads in a row are taken as a broken
	// source rather than a slow one (the same bound as bufio).
	maxEmptyReads = 100
)

var bom = []byte("\xEF\xBB\xBF")

// Event is one dispatched SSE event. Data, Type and ID alias the Reader's
// buffers and are valid until the next call to Next.
type Event struct {
	Type []byte    // the "event:" field; empty means the default type "message"
	Data []byte    // the data lines joined with "\n" (no trailing newline)
	ID   []byte    // the last "id:" field seen (persisted across events per the spec)
	At   time.Time // time of the underlying Read that delivered the event's terminating blank line
}

// Reader parses an event stream. It is not safe for concurrent use.
type Reader struct {
	src io.Reader
	now func() time.Time
	max int // maxEvent

	// buf[r:w] is unparsed input. buf[r:scan] is known to hold no CR or LF,
	// so a line that arrives one byte per Read is not rescanned from its
	// start each time. lf caches the index of the first LF in buf[scan:w]
	// (w when there is none); lf < scan means it must be recomputed. Without
	// it a stream of lone-CR line endings would search the rest of the buffer
	// for an LF once per line.
	buf      []byte
	r, w     int
	scan, lf int
	bufMax   int  // the most buf may grow to: one maximal line plus its line ending
	bomDone  bool // the stream start has been checked for a BOM
	skipLF   bool // the last line ended with CR, so a following LF belongs to it

	emptyReads int       // consecutive (0, nil) Reads
	last       time.Time // time of the latest Read that returned data
	readErr    error     // the source's error, reported once the lines before it are parsed
	err        error     // sticky terminal error from Next

	// The event being built; the spec's data, event type and last event ID
	// buffers.
	data, typ, id []byte
	pending       bool // field lines seen since the last blank line
}

// NewReader wraps r (typically an HTTP response body). now supplies
// timestamps (a fake clock in tests; time.Now in production) and is called
// once per underlying Read that returns data. maxEvent bounds the bytes of one
// line and of one event's joined data; exceeding it returns ErrTooLarge, so a
// runaway line cannot consume memory without bound. maxEvent must be positive.
func NewReader(r io.Reader, now func() time.Time, maxEvent int) *Reader {
	if maxEvent <= 0 {
		panic(fmt.Sprintf("sse: NewReader: maxEvent must be positive, got %d", maxEvent))
	}
	// The buffer must hold a whole BOM to recognise it, whatever maxEvent is.
	bufMax := max(maxEvent+1, len(bom))
	return &Reader{
		src:    r,
		now:    now,
		max:    maxEvent,
		buf:    make([]byte, min(initialBuffer, bufMax)),
		bufMax: bufMax,
		lf:     -1,
	}
}

// LastRead is the time of the most recent underlying Read that returned data
// (for stall detection and end-of-stream timing). Comments and other bytes
// that complete no event advance it too. It is zero before the first data.
func (r *Reader) LastRead() time.Time { return r.last }

// Next reads the next event into ev. At the end of the stream it returns
// io.EOF, or ErrIncomplete if the stream was cut in the middle of an event.
// Errors from the underlying reader are returned as they are, after the events
// that arrived before them. Once Next returns an error it keeps returning it.
func (r *Reader) Next(ev *Event) error {
	if r.err != nil {
		return r.err
	}
	for {
		line, ok := r.line()
		if !ok {
			if err := r.fill(); err != nil {
				r.err = err
				return err
			}
			continue
		}
		dispatch, err := r.field(line)
		if err != nil {
			r.err = err
			return err
		}
		if dispatch {
			// Every line ending parsed so far arrived in the latest Read: fill
			// reads only when no complete line is buffered. So r.last is the
			// arrival time of this blank line.
			ev.Type, ev.Data, ev.ID, ev.At = r.typ, r.data[:len(r.data)-1], r.id, r.last
			// Truncating keeps the bytes ev points at intact until the next
			// Next appends over them.
			r.typ, r.data = r.typ[:0], r.data[:0]
			return nil
		}
	}
}

// line returns the next complete line from the buffer, without its line
// ending, or false if more input is needed. It does no I/O.
func (r *Reader) line() ([]byte, bool) {
	if !r.bomDone {
		// Wait while what we have could still be the start of a BOM.
		if r.w-r.r < len(bom) && bytes.HasPrefix(bom, r.buf[r.r:r.w]) && r.readErr == nil {
			return nil, false
		}
		r.bomDone = true
		if bytes.HasPrefix(r.buf[r.r:r.w], bom) {
			r.r += len(bom)
			r.scan = r.r
		}
	}
	if r.skipLF && r.r < r.w {
		r.skipLF = false
		if r.buf[r.r] == '\n' {
			r.r++
			r.scan = max(r.scan, r.r)
		}
	}
	e := r.eol()
	if e < 0 {
		return nil, false
	}
	line := r.buf[r.r:e]
	// A CR ends the line at once, so an event whose blank line ends in CR is
	// dispatched without waiting for the LF that may follow in a later Read.
	r.skipLF = r.buf[e] == '\r'
	r.r = e + 1
	r.scan = r.r
	return line, true
}

// eol returns the index in buf of the first CR or LF at or after scan, or -1.
func (r *Reader) eol() int {
	if r.lf < r.scan {
		r.lf = r.w
		if i := bytes.IndexByte(r.buf[r.scan:r.w], '\n'); i >= 0 {
			r.lf = r.scan + i
		}
	}
	if i := bytes.IndexByte(r.buf[r.scan:r.lf], '\r'); i >= 0 {
		return r.scan + i
	}
	if r.lf < r.w {
		return r.lf
	}
	r.scan = r.w
	return -1
}

// fill reads more input into the buffer. It returns nil once a Read has
// returned data or an error, or the error that ends the stream.
func (r *Reader) fill() error {
	// Checked before any pending read error so that an over-long last line is
	// ErrTooLarge however the source split it.
	if r.bomDone && r.w-r.r > r.max {
		return ErrTooLarge
	}
	if r.readErr != nil {
		return r.end(r.readErr)
	}
	if r.r > 0 {
		n := copy(r.buf, r.buf[r.r:r.w])
		r.scan -= r.r
		r.r, r.w, r.lf = 0, n, -1
	}
	if r.w == len(r.buf) {
		// The partial line is at most maxEvent bytes (checked above), so
		// there is room to grow within bufMax. When the doubling after this
		// one would pass bufMax, go to bufMax now: a line near the limit
		// then costs one large buffer, not two (4 MiB and 4 MiB + 1).
		n := 2 * len(r.buf)
		if 2*n > r.bufMax {
			n = r.bufMax
		}
		b := make([]byte, n)
		copy(b, r.buf[:r.w])
		r.buf = b
	}
	for {
		n, err := r.src.Read(r.buf[r.w:])
		if n > 0 {
			r.last = r.now()
			r.w += n
			r.lf = -1
			r.emptyReads = 0
		}
		// An error is kept until the lines before it are parsed, and goes
		// through the same path with or without data so that where the
		// source splits its input never changes the outcome.
		r.readErr = err
		if n > 0 || err != nil {
			return nil
		}
		if r.emptyReads++; r.emptyReads >= maxEmptyReads {
			return io.ErrNoProgress
		}
	}
}

// end turns the source's final error into Next's: EOF is clean only between
// events.
func (r *Reader) end(err error) error {
	if err == io.EOF && (r.pending || r.w > r.r) {
		return ErrIncomplete
	}
	return err
}

// field interprets one line and reports whether it completes an event to
// dispatch.
func (r *Reader) field(line []byte) (bool, error) {
	// Only reachable when maxEvent is below the BOM's length: otherwise the
	// buffer cannot hold a longer line whole, and fill reports it.
	if len(line) > r.max {
		return false, ErrTooLarge
	}
	if len(line) == 0 {
		r.pending = false
		if len(r.data) == 0 {
			// No data lines: nothing to dispatch, but the type still resets.
			r.typ = r.typ[:0]
			return false, nil
		}
		return true, nil
	}
	if line[0] == ':' {
		return false, nil // comment
	}
	r.pending = true
	name, value := line, line[len(line):]
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		// The joined data so far is data without its trailing LF, plus an LF
		// separator: len(data) + len(value) bytes in all.
		if len(r.data)+len(value) > r.max {
			return false, ErrTooLarge
		}
		r.data = grow(r.data, len(value)+1, r.max+1)
		r.data = append(append(r.data, value...), '\n')
	case "event":
		r.typ = append(grow(r.typ[:0], len(value), r.max), value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.id = append(grow(r.id[:0], len(value), r.max), value...)
		}
	}
	// "retry" sets a reconnection delay, and we do not reconnect; the spec
	// ignores unknown fields.
	return false, nil
}

// grow makes room for n more bytes in b like slices.Grow, but never past
// limit, so a maximal event costs about maxEvent bytes rather than the next
// doubling. The caller ensures len(b)+n <= limit.
func grow(b []byte, n, limit int) []byte {
	if need := len(b) + n; need > cap(b) {
		nb := make([]byte, len(b), min(max(2*cap(b), need), limit))
		copy(nb, b)
		return nb
	}
	return b
}
