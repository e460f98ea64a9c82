package wire

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
)

// Encoder writes frames. Frames are buffered until Flush. It is not safe for
// concurrent use: each direction of a pipe has one writing goroutine.
type Encoder struct {
	w       *bufio.Writer
	buf     []byte // the frame being built, reused
	written int64  // bytes of the frames written so far, buffered or flushed
}

// NewEncoder returns an encoder that writes to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 1024)}
}

// Flush writes the buffered frames.
func (e *Encoder) Flush() error { return e.w.Flush() }

// Written is the offset in the stream of the end of the last frame written:
// a frame has reached the reader's side once that many bytes have.
func (e *Encoder) Written() int64 { return e.written }

// Hello writes a hello. The layout of a hello never changes, so that a peer
// of any version can read the version in it.
func (e *Encoder) Hello(h Hello) error {
	e.begin(TypeHello)
	e.buf = append(e.buf, magic...)
	e.buf = binary.AppendUvarint(e.buf, h.Version)
	e.buf = binary.AppendUvarint(e.buf, uint64(h.PID))
	return e.end()
}

// Target writes a target definition. Its spec travels as JSON: the frame is
// rare, and JSON keeps up with the scenario schema for free.
func (e *Encoder) Target(t *Target) error {
	spec, err := json.Marshal(&t.Spec)
	if err != nil {
		return fmt.Errorf("encoding target %s: %w", t.Name, err)
	}
	e.begin(TypeTarget)
	e.buf = binary.AppendUvarint(e.buf, t.ID)
	e.buf = appendString(e.buf, t.Name)
	e.buf = appendString(e.buf, string(spec))
	e.buf = binary.AppendUvarint(e.buf, uint64(t.Connections))
	return e.end()
}

// Credit writes a credit.
func (e *Encoder) Credit(c *Credit) error { return e.CreditOf(c.ID, c.Target, &c.Request) }

// CreditOf writes the credit id of request r for target: r is read, not
// copied, so that its prefill slot may be released meanwhile.
func (e *Encoder) CreditOf(id, target uint64, r *prober.Request) error {
	e.begin(TypeCredit)
	e.buf = binary.AppendUvarint(e.buf, id)
	e.buf = binary.AppendUvarint(e.buf, target)
	e.buf = binary.AppendUvarint(e.buf, r.Seq)
	e.buf = appendID(e.buf, r.ID)
	e.buf = binary.AppendVarint(e.buf, unixNano(r.Scheduled))
	e.buf = binary.AppendVarint(e.buf, int64(r.InputTokens))
	e.buf = binary.AppendVarint(e.buf, int64(r.PinnedOutputTokens))
	e.buf = binary.AppendVarint(e.buf, cancelAfter(r))
	first := byte(0)
	if r.Prefill != nil {
		first = 1
	}
	e.buf = append(e.buf, first)
	e.buf = appendString(e.buf, r.Session)
	e.buf = binary.AppendUvarint(e.buf, uint64(r.URL))
	e.buf = binary.AppendUvarint(e.buf, uint64(len(r.Body)))
	e.buf = append(e.buf, r.Body...)
	return e.end()
}

// Cancel asks the worker to cancel credit id.
func (e *Encoder) Cancel(id uint64) error {
	e.begin(TypeCancel)
	e.buf = binary.AppendUvarint(e.buf, id)
	return e.end()
}

// FirstToken tells the parent that credit id's first token came.
func (e *Encoder) FirstToken(id uint64) error {
	e.begin(TypeFirstToken)
	e.buf = binary.AppendUvarint(e.buf, id)
	return e.end()
}

// Shutdown asks the worker to cancel its requests, send their records and exit.
func (e *Encoder) Shutdown() error {
	e.begin(TypeShutdown)
	return e.end()
}

// Record writes the record of credit id. Chunk offsets go as deltas, which
// are small (tens of milliseconds) and so take 3–4 bytes each.
func (e *Encoder) Record(id uint64, r *record.Record) error {
	e.begin(TypeRecord)
	b := binary.AppendUvarint(e.buf, id)
	b = binary.AppendUvarint(b, r.Seq)
	b = appendID(b, r.ID)
	b = binary.AppendVarint(b, unixNano(r.Scheduled))
	b = binary.AppendVarint(b, unixNano(r.Sent))
	b = binary.AppendVarint(b, int64(r.CapWait))
	b = binary.AppendUvarint(b, uint64(len(r.Chunks)))
	var prev int64
	for _, c := range r.Chunks {
		b = binary.AppendVarint(b, int64(c)-prev)
		prev = int64(c)
	}
	b = binary.AppendVarint(b, int64(r.FirstOutput))
	b = binary.AppendVarint(b, int64(r.FirstChunkTokens))
	b = binary.AppendVarint(b, int64(r.Duration))
	b = binary.AppendVarint(b, int64(r.Ack))
	ph := &r.Phases
	b = append(b, byte(ph.Conn))
	for _, d := range [...]time.Duration{ph.DNS, ph.Connect, ph.TLS, ph.Setup, ph.Written, ph.FirstByte} {
		b = binary.AppendVarint(b, int64(d))
	}
	b = binary.AppendVarint(b, int64(r.InputTokens))
	b = binary.AppendVarint(b, int64(r.OutputTokens))
	b = binary.AppendVarint(b, int64(r.ReasoningTokens))
	b = binary.AppendVarint(b, int64(r.UsagePromptTokens))
	b = binary.AppendVarint(b, int64(r.ClientOutputTokens))
	b = append(b, byte(r.TokenSource))
	b = binary.AppendVarint(b, int64(r.PinnedOutputTokens))
	b = append(b, byte(r.Encoding))
	b = append(b, boolByte(r.ConnRetried), boolByte(r.KeepAliveWithheld))
	b = append(b, byte(r.Outcome))
	b = appendString(b, string(r.Reason))
	b = binary.AppendVarint(b, int64(r.Status))
	b = appendString(b, r.Err)
	b = binary.AppendVarint(b, int64(r.ClientPaused))
	e.buf = b
	return e.end()
}

// Ready writes a ready.
func (e *Encoder) Ready(r Ready) error {
	e.begin(TypeReady)
	e.buf = binary.AppendUvarint(e.buf, r.Target)
	e.buf = appendString(e.buf, r.Err)
	return e.end()
}

// Heartbeat writes a heartbeat.
func (e *Encoder) Heartbeat(h Heartbeat) error {
	e.begin(TypeHeartbeat)
	e.buf = binary.AppendUvarint(e.buf, uint64(h.InFlight))
	e.buf = binary.AppendUvarint(e.buf, uint64(h.CPU))
	e.buf = binary.AppendUvarint(e.buf, uint64(h.SchedLatencyP99))
	return e.end()
}

// begin starts a frame with room for its length.
func (e *Encoder) begin(t Type) { e.buf = append(e.buf[:0], 0, 0, 0, 0, byte(t)) }

// end fills in the length and buffers the frame; a frame over the limit is
// refused before anything is written, so the stream stays whole.
func (e *Encoder) end() error {
	n := len(e.buf) - 4
	if n > MaxFrameSize {
		return fmt.Errorf("%w: %s frame of %d bytes, limit %d", ErrFrameTooLarge, Type(e.buf[4]), n, MaxFrameSize)
	}
	binary.BigEndian.PutUint32(e.buf, uint32(n))
	_, err := e.w.Write(e.buf)
	if err == nil {
		e.written += int64(len(e.buf))
	}
	return err
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// appendID writes a request ID as its 16 trace ID bytes, then its 8 span ID
// bytes.
func appendID(b []byte, id record.RequestID) []byte {
	return append(append(b, id.Trace[:]...), id.Span[:]...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// cancelAfter is a credit's cancel delay in nanoseconds, -1 for none.
func cancelAfter(r *prober.Request) int64 {
	if !r.Cancel {
		return -1
	}
	return int64(r.CancelAfter)
}
