package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/record/recordtest"
	"github.com/inferprobe/inferprobe/scenarios"
)

var t0 = time.Unix(1_750_000_000, 123_456_789)

// sampleRecord is a streamed record with n content chunks about 20ms apart.
func sampleRecord(n int) *record.Record {
	r := &record.Record{
		Seq: 42, ID: record.NewRequestID(1, 1, "p", 42), Scheduled: t0, Sent: t0.Add(150 * time.Microsecond), CapWait: 100 * time.Microsecond,
		FirstOutput: 3, FirstChunkTokens: 1, InputTokens: 512, UsagePromptTokens: 530, ClientOutputTokens: n + 1, OutputTokens: n, ReasoningTokens: n / 2,
		TokenSource: record.TokensFromUsage, PinnedOutputTokens: n, Status: 200,
		Encoding: record.EncodingZstd, ConnRetried: true, KeepAliveWithheld: true,
	}
	for i := range n {
		r.Chunks = append(r.Chunks, 80*time.Millisecond+time.Duration(i)*20*time.Millisecond+time.Duration(i*7919)%time.Millisecond)
	}
	r.Duration = r.Chunks[n-1] + time.Millisecond
	r.Ack = 3 * time.Millisecond
	r.Phases = record.Phases{Conn: record.ConnDialled, DNS: 40 * time.Microsecond, Connect: 90 * time.Microsecond, TLS: 700 * time.Microsecond,
		Setup: 900 * time.Microsecond, Written: 30 * time.Microsecond, FirstByte: 2900 * time.Microsecond}
	return r
}

// releaseNothing is a prefill slot: the credit asks for a first-token frame.
type releaseNothing struct{}

func (releaseNothing) Release() {}

func TestRoundTrip(t *testing.T) {
	stream := false
	target := &Target{ID: 7, Name: "qwen", Spec: scenarios.Target{
		URL: "http://127.0.0.1:8000/v1", MoreURLs: []string{"http://127.0.0.1:8001/v1"}, Endpoint: "chat", Model: "Qwen/Qwen3-0.6B",
		Headers: map[string]string{"X-Team": "sre"}, Stream: &stream,
		Timeout: scenarios.Duration(2 * time.Minute), StallTimeout: scenarios.Duration(30 * time.Second),
		APIKeyEnv: "KEY", APIKey: "sk-secret",
	}, Connections: 3}
	credit := &Credit{ID: 1 << 40, Target: 7, Request: prober.Request{
		Seq: 9, ID: record.NewRequestID(1, 1, "p", 9), Scheduled: t0, Body: []byte(`{"model":"m"}`), Session: "s-1", URL: 2, InputTokens: 128, PinnedOutputTokens: 64,
		Cancel: true, CancelAfter: 2 * time.Second, Prefill: releaseNothing{},
	}}
	failed := &record.Record{Seq: 3, Scheduled: t0, FirstOutput: -1, Outcome: record.OutcomeError,
		Reason: record.ReasonHTTP5xx, Status: 503, Err: "HTTP 503: overloaded"}
	unknownReason := &record.Record{FirstOutput: -1, Outcome: record.OutcomeError, Reason: "some_new_reason"}
	heartbeat := Heartbeat{InFlight: 17, CPU: 1234 * time.Millisecond, SchedLatencyP99: 85 * time.Microsecond}
	ready, failedReady := Ready{Target: 7}, Ready{Target: 8, Err: "target qwen: tokenizer: no such file"}

	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for _, err := range []error{
		enc.Hello(Hello{Version: Version, PID: 4242}),
		enc.Target(target),
		enc.Credit(credit),
		enc.Cancel(1 << 40),
		enc.FirstToken(1 << 40),
		enc.Record(5, sampleRecord(64)),
		enc.Record(6, failed),
		enc.Record(8, unknownReason),
		enc.Heartbeat(heartbeat),
		enc.Ready(ready),
		enc.Ready(failedReady),
		enc.Shutdown(),
		enc.Flush(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}

	dec := NewDecoder(&buf)
	next := func(want Type) {
		t.Helper()
		if got, err := dec.Next(); err != nil || got != want {
			t.Fatalf("Next = %v, %v; want %v", got, err, want)
		}
	}
	next(TypeHello)
	if h, err := dec.Hello(); err != nil || h != (Hello{Version: Version, PID: 4242}) {
		t.Errorf("Hello = %+v, %v", h, err)
	}
	next(TypeTarget)
	if got, err := dec.Target(); err != nil || !reflect.DeepEqual(got, target) {
		t.Errorf("Target = %+v, %v\nwant %+v (the API key and further URLs must travel too)", got, err, target)
	}
	next(TypeCredit)
	got, err := dec.Credit()
	if err != nil || got.ID != credit.ID || got.Target != 7 || !got.Request.Scheduled.Equal(t0) ||
		got.Request.Seq != 9 || got.Request.ID != credit.Request.ID || string(got.Request.Body) != `{"model":"m"}` || got.Request.InputTokens != 128 || got.Request.PinnedOutputTokens != 64 ||
		!got.Request.Cancel || got.Request.CancelAfter != 2*time.Second || !got.FirstToken || got.Request.Session != "s-1" || got.Request.URL != 2 {
		t.Errorf("Credit = %+v, %v", got, err)
	}
	next(TypeCancel)
	if id, err := dec.Cancel(); err != nil || id != 1<<40 {
		t.Errorf("Cancel = %d, %v", id, err)
	}
	next(TypeFirstToken)
	if id, err := dec.FirstToken(); err != nil || id != 1<<40 {
		t.Errorf("FirstToken = %d, %v", id, err)
	}
	for _, want := range []struct {
		id  uint64
		rec *record.Record
	}{{5, sampleRecord(64)}, {6, failed}, {8, unknownReason}} {
		next(TypeRecord)
		id, rec, err := dec.Record()
		if err != nil || id != want.id {
			t.Fatalf("Record = %d, %v", id, err)
		}
		if !recordsEqual(rec, want.rec) {
			t.Errorf("record %d:\n got %+v\nwant %+v", id, rec, want.rec)
		}
	}
	next(TypeHeartbeat)
	if h, err := dec.Heartbeat(); err != nil || h != heartbeat {
		t.Errorf("Heartbeat = %+v, %v", h, err)
	}
	for _, want := range []Ready{ready, failedReady} {
		next(TypeReady)
		if r, err := dec.Ready(); err != nil || r != want {
			t.Errorf("Ready = %+v, %v; want %+v", r, err, want)
		}
	}
	next(TypeShutdown)
	if err := dec.Shutdown(); err != nil {
		t.Error(err)
	}
	if _, err := dec.Next(); err != io.EOF {
		t.Errorf("Next at the end = %v, want io.EOF", err)
	}
}

// recordsEqual compares records, times by instant (a decoded time has no
// monotonic reading).
func recordsEqual(a, b *record.Record) bool {
	if !a.Scheduled.Equal(b.Scheduled) || !a.Sent.Equal(b.Sent) {
		return false
	}
	x, y := *a, *b
	x.Scheduled, x.Sent, y.Scheduled, y.Sent = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if len(x.Chunks) == 0 && len(y.Chunks) == 0 {
		x.Chunks, y.Chunks = nil, nil
	}
	return reflect.DeepEqual(x, y)
}

// frame builds a raw frame: length, type, payload.
func frame(t Type, payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(payload)+1))
	return append(append(b, byte(t)), payload...)
}

func TestDecodeErrors(t *testing.T) {
	hello := func(version uint64) []byte {
		p := append([]byte(magic), binary.AppendUvarint(nil, version)...)
		return frame(TypeHello, binary.AppendUvarint(p, 1))
	}
	var huge [4]byte
	binary.BigEndian.PutUint32(huge[:], MaxFrameSize+1)
	record := func() []byte {
		var buf bytes.Buffer
		enc := NewEncoder(&buf)
		_ = enc.Record(1, sampleRecord(4))
		_ = enc.Flush()
		return buf.Bytes()
	}()

	for _, tc := range []struct {
		name   string
		input  []byte
		decode func(*Decoder) error
		want   string
		is     error
	}{
		{"version mismatch", hello(Version + 1), helloErr,
			fmt.Sprintf("the peer speaks version %d, this process version %d; they are different inferprobe builds", Version+1, Version), ErrVersion},
		{"not a worker", frame(TypeHello, []byte("HTTP/1.1 200 OK")), helloErr, "the peer is not an inferprobe worker", nil},
		{"oversized frame", append(huge[:], 1), nil, "frame too large: 8388609 bytes, limit 8388608", ErrFrameTooLarge},
		{"empty frame", []byte{0, 0, 0, 0}, nil, "empty frame", nil},
		{"truncated header", []byte{0, 0}, nil, "truncated frame header", io.ErrUnexpectedEOF},
		{"truncated before type", []byte{0, 0, 0, 9}, nil, "truncated frame", io.ErrUnexpectedEOF},
		{"truncated payload", record[:len(record)-3], nil, "truncated frame", io.ErrUnexpectedEOF},
		{"unknown type", frame(99, nil), nil, "unknown frame type 99", nil},
		{"wrong type", frame(TypeCancel, []byte{1}), helloErr, "decoding a cancel frame as hello", nil},
		{"left over bytes", frame(TypeCancel, []byte{1, 2}), cancelErr, "malformed cancel frame: 1 bytes left over", nil},
		{"missing varint", frame(TypeCancel, nil), cancelErr, "malformed cancel frame: bad or missing unsigned varint", nil},
		{"chunk count beyond the frame", frame(TypeRecord, append(append([]byte{1, 1}, make([]byte, 24)...), 0, 0, 0, 0xff, 0xff, 0x03)), recordErr,
			"malformed record frame: chunk count 65535 exceeds the frame", nil},
		{"request ID cut short", frame(TypeRecord, []byte{1, 1, 0, 0}), recordErr, "malformed record frame: request ID cut short", nil},
		{"string beyond the frame", frame(TypeTarget, []byte{1, 50, 'a'}), targetErr, "malformed target frame: length 50 exceeds the frame", nil},
		{"bad target spec", frame(TypeTarget, []byte{1, 1, 'a', 1, '{', 0}), targetErr, "target a: decoding its spec", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := NewDecoder(bytes.NewReader(tc.input))
			_, err := dec.Next()
			if err == nil && tc.decode != nil {
				err = tc.decode(dec)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to say %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
}

func helloErr(d *Decoder) error  { _, err := d.Hello(); return err }
func cancelErr(d *Decoder) error { _, err := d.Cancel(); return err }
func targetErr(d *Decoder) error { _, err := d.Target(); return err }
func recordErr(d *Decoder) error { _, _, err := d.Record(); return err }

// TestEncodeTooLarge checks that an oversized frame is refused whole, leaving
// the stream usable.
func TestEncodeTooLarge(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	err := enc.Credit(&Credit{ID: 1, Request: prober.Request{Body: make([]byte, MaxFrameSize)}})
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Credit with a huge body: %v, want ErrFrameTooLarge", err)
	}
	if err := enc.Cancel(3); err != nil {
		t.Fatal(err)
	}
	_ = enc.Flush()
	dec := NewDecoder(&buf)
	if typ, err := dec.Next(); err != nil || typ != TypeCancel {
		t.Fatalf("after a refused frame: %v, %v; want the next frame intact", typ, err)
	}
}

// TestWritten checks that Written is the stream offset of the end of each
// frame, counted whether or not it was flushed, and that a refused frame
// does not count.
func TestWritten(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	var ends []int64
	for i := range 3 {
		if err := enc.Credit(&Credit{ID: uint64(i), Request: prober.Request{Body: bytes.Repeat([]byte("x"), 100*i)}}); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, enc.Written())
	}
	if err := enc.Credit(&Credit{ID: 9, Request: prober.Request{Body: make([]byte, MaxFrameSize)}}); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("huge credit: %v", err)
	}
	if enc.Written() != ends[2] {
		t.Errorf("a refused frame moved Written from %d to %d", ends[2], enc.Written())
	}
	_ = enc.Flush()
	if int64(buf.Len()) != ends[2] {
		t.Fatalf("flushed %d bytes, Written says %d", buf.Len(), ends[2])
	}
	// Each frame ends where Written said: decoding from that offset yields the next one.
	for i, end := range ends[:2] {
		dec := NewDecoder(bytes.NewReader(buf.Bytes()[end:]))
		if _, err := dec.Next(); err != nil {
			t.Fatal(err)
		}
		if c, err := dec.Credit(); err != nil || c.ID != uint64(i+1) {
			t.Errorf("frame at offset %d: %+v, %v; want credit %d", end, c, err, i+1)
		}
	}
}

// TestLargeFrameReadsIncrementally checks that a frame bigger than one read
// step arrives whole.
func TestLargeFrameReadsIncrementally(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), readStep/3)
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	if err := enc.Credit(&Credit{ID: 1, Request: prober.Request{Body: body}}); err != nil {
		t.Fatal(err)
	}
	_ = enc.Flush()
	dec := NewDecoder(&buf)
	if _, err := dec.Next(); err != nil {
		t.Fatal(err)
	}
	c, err := dec.Credit()
	if err != nil || !bytes.Equal(c.Request.Body, body) {
		t.Fatalf("Credit: %v, body intact: %v", err, err == nil && bytes.Equal(c.Request.Body, body))
	}
}

// BenchmarkRecordRoundTrip is the wire cost of one streamed record with 64
// content chunks: encode, frame, buffer, read and decode.
func BenchmarkRecordRoundTrip(b *testing.B) {
	rec := sampleRecord(64)
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	dec := NewDecoder(&buf)
	_ = enc.Record(1, rec)
	_ = enc.Flush()
	size := buf.Len()
	buf.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if err := enc.Record(1, rec); err != nil {
			b.Fatal(err)
		}
		if err := enc.Flush(); err != nil {
			b.Fatal(err)
		}
		if _, err := dec.Next(); err != nil {
			b.Fatal(err)
		}
		if _, _, err := dec.Record(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "bytes/record")
}

// TestRecordCarriesEveryField: a worker's record reaches the parent with
// every field the worker measured, those added to Record later too.
func TestRecordCarriesEveryField(t *testing.T) {
	// Set in the parent, never sent up, as the parent has them.
	notCarried := []string{
		"Digest",       // folded by the parent's scheduler
		"Run",          // the parent's probe's
		"PromptTokens", // this one and the next two are the parent's request
		"Session",
		"Body",
		"Images", // the parent's request's media, as PromptTokens
		"AudioSeconds",
		"URL", // the parent's request's, as Session
	}
	want := recordtest.Full()
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	if err := enc.Record(1, want); err != nil {
		t.Fatal(err)
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(&buf)
	if typ, err := dec.Next(); err != nil || typ != TypeRecord {
		t.Fatalf("Next = %v, %v; want a record", typ, err)
	}
	_, got, err := dec.Record()
	if err != nil {
		t.Fatal(err)
	}
	if differ := recordtest.Diff(got, want, notCarried...); len(differ) > 0 {
		t.Errorf("fields lost by the wire: %v", differ)
	}
}
