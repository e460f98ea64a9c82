package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// Decoder reads frames: Next reads one, then the method for its type decodes
// it. It is not safe for concurrent use.
type Decoder struct {
	r   *bufio.Reader
	typ Type
	hdr [5]byte // length and type; a field, so reading it does not allocate
	buf []byte  // the current frame's payload, reused
}

// NewDecoder returns a decoder that reads from r.
func NewDecoder(r io.Reader) *Decoder { return &Decoder{r: bufio.NewReaderSize(r, 64<<10)} }

// readStep bounds how much is allocated ahead of the bytes that arrive, so a
// length that promises a large frame costs memory only as the frame arrives.
const readStep = 64 << 10

// Next reads the next frame and returns its type. It returns io.EOF at a clean
// end of stream, and an error wrapping io.ErrUnexpectedEOF for a frame cut
// short.
func (d *Decoder) Next() (Type, error) {
	d.typ = 0
	hdr := d.hdr[:]
	if _, err := io.ReadFull(d.r, hdr[:4]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, fmt.Errorf("truncated frame header: %w", err)
		}
		return 0, err
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	switch {
	case n == 0:
		return 0, errors.New("empty frame: a frame has at least its type byte")
	case n > MaxFrameSize:
		return 0, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, n, MaxFrameSize)
	}
	if _, err := io.ReadFull(d.r, hdr[4:]); err != nil {
		return 0, truncated(err)
	}
	size := int(n) - 1
	d.buf = d.buf[:0]
	for len(d.buf) < size {
		step := min(size-len(d.buf), readStep)
		d.buf = slices.Grow(d.buf, step)
		m, err := io.ReadFull(d.r, d.buf[len(d.buf):len(d.buf)+step])
		d.buf = d.buf[:len(d.buf)+m]
		if err != nil {
			return 0, truncated(err)
		}
	}
	d.typ = Type(hdr[4])
	if d.typ < TypeHello || d.typ > TypeFirstToken {
		return 0, fmt.Errorf("unknown frame type %d", hdr[4])
	}
	return d.typ, nil
}

func truncated(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("truncated frame: %w", err)
}

// payload returns a reader of the current frame, which must be of type t.
func (d *Decoder) payload(t Type) (reader, error) {
	if d.typ != t {
		return reader{}, fmt.Errorf("decoding a %s frame as %s", d.typ, t)
	}
	return reader{b: d.buf, typ: t}, nil
}

// Hello decodes a hello and checks its version.
func (d *Decoder) Hello() (Hello, error) {
	p, err := d.payload(TypeHello)
	if err != nil {
		return Hello{}, err
	}
	if !bytes.HasPrefix(p.b, []byte(magic)) {
		return Hello{}, errors.New("the peer is not an inferprobe worker: its hello lacks the protocol's greeting")
	}
	p.b = p.b[len(magic):]
	h := Hello{Version: p.uvarint(), PID: p.count()}
	if err := p.done(); err != nil {
		return Hello{}, err
	}
	if h.Version != Version {
		return h, fmt.Errorf("%w: the peer speaks version %d, this process version %d; they are different inferprobe builds (restart inferprobe after an upgrade)",
			ErrVersion, h.Version, Version)
	}
	return h, nil
}

// Target decodes a target definition.
func (d *Decoder) Target() (*Target, error) {
	p, err := d.payload(TypeTarget)
	if err != nil {
		return nil, err
	}
	t := &Target{ID: p.uvarint(), Name: p.string()}
	spec := p.bytes()
	t.Connections = int(p.uvarint())
	if err := p.done(); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(spec, &t.Spec); err != nil {
		return nil, fmt.Errorf("target %s: decoding its spec: %w", t.Name, err)
	}
	return t, nil
}

// Credit decodes a credit. Its body is a copy: the frame buffer is reused.
func (d *Decoder) Credit() (*Credit, error) {
	p, err := d.payload(TypeCredit)
	if err != nil {
		return nil, err
	}
	c := &Credit{ID: p.uvarint(), Target: p.uvarint()}
	r := &c.Request
	r.Seq = p.uvarint()
	p.id(&r.ID)
	r.Scheduled = fromUnixNano(p.varint())
	r.InputTokens = p.int()
	r.PinnedOutputTokens = p.int()
	if after := p.varint(); after >= 0 {
		r.Cancel, r.CancelAfter = true, time.Duration(after)
	}
	c.FirstToken = p.byte() != 0
	r.Session = p.string()
	r.URL = p.count()
	r.Body = bytes.Clone(p.bytes())
	if err := p.done(); err != nil {
		return nil, err
	}
	return c, nil
}

// Cancel decodes a cancel and returns the credit id.
func (d *Decoder) Cancel() (uint64, error) {
	p, err := d.payload(TypeCancel)
	if err != nil {
		return 0, err
	}
	id := p.uvarint()
	return id, p.done()
}

// FirstToken decodes a first token and returns the credit id.
func (d *Decoder) FirstToken() (uint64, error) {
	p, err := d.payload(TypeFirstToken)
	if err != nil {
		return 0, err
	}
	id := p.uvarint()
	return id, p.done()
}

// Shutdown checks a shutdown frame.
func (d *Decoder) Shutdown() error {
	p, err := d.payload(TypeShutdown)
	if err != nil {
		return err
	}
	return p.done()
}

// Record decodes a record and returns its credit id. The record is freshly
// allocated: two allocations, plus one for an error message.
func (d *Decoder) Record() (uint64, *record.Record, error) {
	p, err := d.payload(TypeRecord)
	if err != nil {
		return 0, nil, err
	}
	id := p.uvarint()
	r := &record.Record{Seq: p.uvarint()}
	p.id(&r.ID)
	r.Scheduled, r.Sent, r.CapWait = fromUnixNano(p.varint()), fromUnixNano(p.varint()), time.Duration(p.varint())
	// Every delta takes at least a byte, so the count cannot ask for more
	// than the frame could hold.
	if n := p.uvarint(); n > uint64(len(p.b)) {
		p.fail("chunk count %d exceeds the frame", n)
	} else if n > 0 {
		r.Chunks = make([]time.Duration, n)
		b, at := p.b, int64(0) // a local slice keeps this hot loop tight
		for i := range r.Chunks {
			delta, m := binary.Varint(b)
			if m <= 0 {
				p.fail("bad chunk offset")
				break
			}
			b, at = b[m:], at+delta
			r.Chunks[i] = time.Duration(at)
		}
		if p.err == nil {
			p.b = b
		}
	}
	r.FirstOutput = p.int()
	r.FirstChunkTokens = p.int()
	r.Duration = time.Duration(p.varint())
	r.Ack = time.Duration(p.varint())
	ph := &r.Phases
	ph.Conn = record.ConnOrigin(p.byte())
	for _, d := range [...]*time.Duration{&ph.DNS, &ph.Connect, &ph.TLS, &ph.Setup, &ph.Written, &ph.FirstByte} {
		*d = time.Duration(p.varint())
	}
	r.InputTokens = p.int()
	r.OutputTokens = p.int()
	r.ReasoningTokens = p.int()
	r.UsagePromptTokens = p.int()
	r.ClientOutputTokens = p.int()
	r.TokenSource = record.TokenSource(p.byte())
	r.PinnedOutputTokens = p.int()
	r.Encoding = record.Encoding(p.byte())
	r.ConnRetried = p.byte() != 0
	r.KeepAliveWithheld = p.byte() != 0
	r.Outcome = record.Outcome(p.byte())
	r.Reason = reason(p.bytes())
	r.Status = p.int()
	r.Err = p.string()
	r.ClientPaused = time.Duration(p.varint())
	if err := p.done(); err != nil {
		return 0, nil, err
	}
	return id, r, nil
}

// Heartbeat decodes a heartbeat.
func (d *Decoder) Heartbeat() (Heartbeat, error) {
	p, err := d.payload(TypeHeartbeat)
	if err != nil {
		return Heartbeat{}, err
	}
	h := Heartbeat{InFlight: p.count(), CPU: p.duration(), SchedLatencyP99: p.duration()}
	return h, p.done()
}

// Ready decodes a ready.
func (d *Decoder) Ready() (Ready, error) {
	p, err := d.payload(TypeReady)
	if err != nil {
		return Ready{}, err
	}
	r := Ready{Target: p.uvarint(), Err: p.string()}
	return r, p.done()
}

// reasons are the known failure reasons, matched so that decoding one does
// not allocate.
var reasons = []record.Reason{
	record.ReasonNone, record.ReasonConnect, record.ReasonTimeout, record.ReasonStall,
	record.ReasonHTTP4xx, record.ReasonHTTP429, record.ReasonHTTP5xx, record.ReasonProtocol,
	record.ReasonTruncated, record.ReasonServerErrorEvent, record.ReasonWorkerLost, record.ReasonDataset,
}

func reason(b []byte) record.Reason {
	for _, r := range reasons {
		if string(b) == string(r) {
			return r
		}
	}
	return record.Reason(b)
}

// reader decodes a payload. The first problem sticks: later reads return
// zeros, and done reports it.
type reader struct {
	b   []byte
	typ Type
	err error
}

func (p *reader) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("malformed %s frame: "+format, append([]any{p.typ}, args...)...)
	}
	p.b = nil
}

func (p *reader) uvarint() uint64 {
	v, n := binary.Uvarint(p.b)
	if n <= 0 {
		p.fail("bad or missing unsigned varint")
		return 0
	}
	p.b = p.b[n:]
	return v
}

func (p *reader) varint() int64 {
	v, n := binary.Varint(p.b)
	if n <= 0 {
		p.fail("bad or missing varint")
		return 0
	}
	p.b = p.b[n:]
	return v
}

// int reads a signed varint that must fit an int.
func (p *reader) int() int {
	v := p.varint()
	if v < math.MinInt || v > math.MaxInt {
		p.fail("%d overflows an int", v)
		return 0
	}
	return int(v)
}

// count reads an unsigned varint that must fit an int.
func (p *reader) count() int {
	v := p.uvarint()
	if v > math.MaxInt {
		p.fail("%d overflows an int", v)
		return 0
	}
	return int(v)
}

// duration reads an unsigned varint of nanoseconds.
func (p *reader) duration() time.Duration { return time.Duration(p.count()) }

func (p *reader) byte() byte {
	if len(p.b) == 0 {
		p.fail("missing byte")
		return 0
	}
	c := p.b[0]
	p.b = p.b[1:]
	return c
}

// bytes reads a length-prefixed byte string; it aliases the frame buffer.
func (p *reader) bytes() []byte {
	n := p.uvarint()
	if n > uint64(len(p.b)) {
		p.fail("length %d exceeds the frame", n)
		return nil
	}
	s := p.b[:n:n]
	p.b = p.b[n:]
	return s
}

// id reads a request ID: 16 trace ID bytes, 8 span ID bytes.
func (p *reader) id(id *record.RequestID) {
	if len(p.b) < len(id.Trace)+len(id.Span) {
		p.fail("request ID cut short")
		return
	}
	p.b = p.b[copy(id.Trace[:], p.b):]
	p.b = p.b[copy(id.Span[:], p.b):]
}

func (p *reader) string() string { return string(p.bytes()) }

func (p *reader) done() error {
	if p.err == nil && len(p.b) > 0 {
		p.fail("%d bytes left over", len(p.b))
	}
	return p.err
}
