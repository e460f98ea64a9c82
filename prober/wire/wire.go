// Package wire is the framed protocol between inferprobe and its worker
// processes. Target definitions, credits (requests to send), cancels and
// shutdown go down the worker's stdin; records and heartbeats come up its
// stdout; the worker logs to stderr. Both sides open with a hello carrying
// the protocol version, and a peer with another version is refused: parent
// and workers are the same binary, so there is nothing to negotiate.
//
// A frame is a 4-byte big-endian length n, then n bytes: one type byte and
// the payload; 1 <= n <= MaxFrameSize. In payloads, uvarint and varint are
// encoding/binary's (varint zig-zag encoded), str is a uvarint length and
// that many bytes, a request ID is its 16 trace ID bytes and then its 8 span
// ID bytes, and a time is a varint of Unix nanoseconds, 0 for the
// zero time.
//
//	type         dir   payload
//	1 hello      both  "inferprobe-wire", version uvarint, pid uvarint
//	2 target     down  id uvarint, name str, spec str (scenarios.Target as JSON, API key included),
//	                   connections to open ahead uvarint
//	3 credit     down  id uvarint, target id uvarint, seq uvarint, request ID, scheduled time,
//	                   input tokens varint, pinned output tokens varint, cancel after
//	                   varint ns (-1 for none), session str, URL index uvarint, body str
//	4 cancel     down  credit id uvarint
//	5 shutdown   down  (empty): cancel every request, send the records, exit
//	6 record     up    credit id uvarint, seq uvarint, request ID, scheduled time, sent time,
//	                   cap wait varint ns, chunk count uvarint, chunk offsets as
//	                   varint ns deltas (the first from 0), first output varint,
//	                   first chunk tokens varint, duration varint ns, input tokens
//	                   varint, output tokens varint, reasoning tokens varint, token source byte, pinned output
//	                   tokens varint, content encoding byte, connection retried byte (0 or 1),
//	                   outcome byte, reason str, HTTP status varint, error str
//	7 heartbeat  up    in flight uvarint, process CPU uvarint ns, sched latency p99 uvarint ns
//	8 ready      up    target id uvarint, error str (empty when the target was built)
//
// A credit's target must have been defined earlier on the same stream; a
// definition replaces the one with the same name. The worker answers every
// definition with a ready once it has built the target, so the parent can
// wait for that before a probe's timeline starts. Every credit gets exactly
// one record back, cancelled or not, unless the worker dies.
package wire

import (
	"errors"
	"fmt"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Version is the protocol version; any change to a frame's layout bumps it.
const Version = 12

// MaxFrameSize bounds a frame (type byte and payload). It leaves room for
// request bodies far larger than any prompt a model accepts, and bounds what
// a decoder allocates for one frame.
const MaxFrameSize = 8 << 20

// magic opens every hello, so that a program that is not an inferprobe
// worker is told apart from one that speaks another version.
const magic = "inferprobe-wire"

var (
	// ErrVersion is returned for a hello from a peer that speaks another
	// protocol version.
	ErrVersion = errors.New("wire protocol version mismatch")
	// ErrFrameTooLarge is returned for a frame over MaxFrameSize, written or read.
	ErrFrameTooLarge = errors.New("frame too large")
)

// Type says what a frame holds.
type Type uint8

const (
	TypeHello      Type = iota + 1 // both ways: Hello
	TypeTarget                     // down: Target
	TypeCredit                     // down: Credit
	TypeCancel                     // down: the id of a credit to cancel
	TypeShutdown                   // down: cancel what runs, send its records, exit
	TypeRecord                     // up: a credit's id and its record.Record
	TypeHeartbeat                  // up: Heartbeat
	TypeReady                      // up: Ready
	TypeFirstToken                 // up: the id of a credit whose first token came
)

var typeNames = [...]string{"", "hello", "target", "credit", "cancel", "shutdown", "record", "heartbeat", "ready", "first token"}

func (t Type) String() string {
	if int(t) < len(typeNames) && t != 0 {
		return typeNames[t]
	}
	return fmt.Sprintf("type %d", uint8(t))
}

// Hello opens the conversation in both directions.
type Hello struct {
	Version uint64
	PID     int
}

// Target defines a target for the credits that name its ID. A changed
// definition under the same name gets a new ID.
type Target struct {
	ID   uint64
	Name string
	// Spec carries the API key: the pipe is the only way it reaches a worker.
	Spec scenarios.Target
	// Connections is how many connections the worker opens to the target
	// once it has built it, before its ready (prober.Client.Preopen).
	Connections int
}

// Credit asks the worker to send one request.
type Credit struct {
	ID      uint64 // unique per pool; the record comes back under it
	Target  uint64 // a Target.ID defined earlier on the same stream
	Request prober.Request
	// FirstToken asks the worker for a first-token frame as soon as the
	// request's first token comes: it holds a prefill slot in the parent
	// (set by the encoder from Request.Prefill).
	FirstToken bool
}

// Heartbeat tells the parent the worker is alive and how loaded it is.
type Heartbeat struct {
	InFlight int
	// CPU is the worker process's user and system CPU time so far.
	CPU time.Duration
	// SchedLatencyP99 is the 99th percentile of the Go scheduling latency
	// since the previous heartbeat.
	SchedLatencyP99 time.Duration
}

// Ready says the worker has built a target from its definition, or why it
// could not; its credits then come back as protocol errors.
type Ready struct {
	Target uint64
	Err    string
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
