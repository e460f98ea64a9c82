package record

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strconv"
)

// RunID tells the runs of one seed apart: a bench run, a burst run, a
// daemon's probe since it (re)started. It is drawn at random once per run
// and folded into every request ID of the run, so that two runs of the same
// seed send the same requests under different IDs; nothing else of the
// request derives from it, so the sequence digest does not change.
type RunID uint64

// NewRunID draws a run's ID.
func NewRunID() RunID {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return RunID(binary.BigEndian.Uint64(b[:]))
}

// String is the ID in 16 hex digits, as the exports write it.
func (r RunID) String() string {
	s := strconv.FormatUint(uint64(r), 16)
	return "0000000000000000"[len(s):] + s
}

// ParseRunID reads what String wrote.
func ParseRunID(s string) (RunID, error) {
	v, err := strconv.ParseUint(s, 16, 64)
	return RunID(v), err
}

// RequestID identifies one request of a probe's sequence: the 128-bit trace
// ID and 64-bit span ID of its traceparent. The X-Request-ID header carries
// the trace ID as a UUID, so a server's log line and an engine's trace of the
// same request share one value.
type RequestID struct {
	Trace [16]byte
	Span  [8]byte
}

// NewRequestID is the identity of request index (its sequence number in the
// whole sequence, every shard's share included) of probe under seed in run.
// It is a function of those alone, so whoever has them regenerates the IDs
// (docs/configuration.md spells the derivation out); shards, which send
// disjoint indices, send disjoint IDs, and two runs differ by their run
// IDs. Nothing is drawn from the seeded streams, so the requests and the
// digest stay as they were. The probe name keeps two probes of one scenario
// apart.
func NewRequestID(seed uint64, run RunID, probe string, index uint64) RequestID {
	base := splitmix(seed ^ splitmix(fnv1a(probe)) ^ splitmix(uint64(run)))
	x := splitmix(base ^ index)
	var id RequestID
	putUint64(id.Trace[0:], splitmix(x+1))
	putUint64(id.Trace[8:], splitmix(x+2))
	putUint64(id.Span[:], splitmix(x+3))
	// All-zero IDs are invalid in Trace Context; one bit rules them out.
	id.Trace[15] |= 1
	id.Span[7] |= 1
	// The UUID's version 8 (RFC 9562: custom, not random) and variant bits.
	id.Trace[6] = id.Trace[6]&0x0f | 0x80
	id.Trace[8] = id.Trace[8]&0x3f | 0x80
	return id
}

// splitmix is SplitMix64's finalizer: a bijection that spreads every input
// bit over the output.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func putUint64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (56 - 8*i))
	}
}

// IsZero reports whether id was never set: a record that predates its request.
func (id RequestID) IsZero() bool { return id == RequestID{} }

// String is the X-Request-ID value: the trace ID as a UUID.
func (id RequestID) String() string {
	var b [36]byte
	id.AppendUUID(b[:0])
	return string(b[:])
}

// TraceID is the trace ID in the 32 hex digits of traceparent and of trace
// backends.
func (id RequestID) TraceID() string {
	var b [32]byte
	hex.Encode(b[:], id.Trace[:])
	return string(b[:])
}

// Traceparent is the W3C traceparent header value: version 00, the trace
// ID, the span ID as the parent ID, and the sampled flag, so that a server
// that samples by its parent keeps the trace.
func (id RequestID) Traceparent() string {
	var b [55]byte
	id.PutTraceparent(b[:])
	return string(b[:])
}

// PutTraceparent writes the 55 bytes of the traceparent value to b, for
// a writer of headers that does not allocate.
func (id RequestID) PutTraceparent(b []byte) {
	copy(b, "00-")
	hex.Encode(b[3:35], id.Trace[:])
	b[35] = '-'
	hex.Encode(b[36:52], id.Span[:])
	copy(b[52:], "-01")
}

// AppendUUID appends the X-Request-ID value (String) to b.
func (id RequestID) AppendUUID(b []byte) []byte {
	for i, c := range id.Trace {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return b
}

const hexDigits = "0123456789abcdef"
