package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// ev is an event in comparable form.
type ev struct{ typ, data, id string }

// chunkReader returns one chunk per Read, so a test decides exactly which
// bytes arrive together. An empty chunk is a (0, nil) Read.
type chunkReader struct {
	chunks []string
	err    error // returned once the chunks run out; io.EOF if nil
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; c.chunks[0] == "" {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// fakeClock returns a clock that advances one second per call, and a pointer
// to its call count.
func fakeClock() (func() time.Time, *int) {
	calls := new(int)
	return func() time.Time {
		*calls++
		return tick(*calls)
	}, calls
}

func tick(n int) time.Time { return time.Unix(1000, 0).Add(time.Duration(n) * time.Second) }

// readAll reads events until Next fails, checking the buffer bounds after
// every call. Every event takes at least two bytes of input, so more than
// inputLen/2 events means Next is not consuming its input.
func readAll(t testing.TB, r *Reader, inputLen int) ([]ev, []time.Time, error) {
	t.Helper()
	var (
		evs []ev
		ats []time.Time
		e   Event
	)
	for {
		err := r.Next(&e)
		checkBounds(t, r)
		if err != nil {
			return evs, ats, err
		}
		evs = append(evs, ev{string(e.Type), string(e.Data), string(e.ID)})
		ats = append(ats, e.At)
		if len(evs) > inputLen/2 {
			t.Fatalf("%d events from %d bytes", len(evs), inputLen)
		}
	}
}

func checkBounds(t testing.TB, r *Reader) {
	t.Helper()
	if cap(r.buf) > r.bufMax || cap(r.data) > r.max+1 || cap(r.typ) > r.max || cap(r.id) > r.max {
		t.Fatalf("buffers past the limit %d: buf %d, data %d, type %d, id %d",
			r.max, cap(r.buf), cap(r.data), cap(r.typ), cap(r.id))
	}
}

type readerCase struct {
	name    string
	chunks  []string // one per Read
	max     int      // 0 means 1 MiB
	want    []ev
	wantErr error
}

var readerCases = []readerCase{
	{name: "empty stream", chunks: nil, wantErr: io.EOF},
	{name: "LF", chunks: []string{"data: a\n\ndata: b\n\n"}, want: []ev{{"", "a", ""}, {"", "b", ""}}, wantErr: io.EOF},
	{name: "CRLF", chunks: []string{"data: a\r\n\r\ndata: b\r\n\r\n"}, want: []ev{{"", "a", ""}, {"", "b", ""}}, wantErr: io.EOF},
	{name: "lone CR", chunks: []string{"data: a\r\rdata: b\r\r"}, want: []ev{{"", "a", ""}, {"", "b", ""}}, wantErr: io.EOF},
	{name: "CR LF split across reads", chunks: []string{"data: a\r", "\n\r", "\ndata: b\r", "\n", "\r", "\n"}, want: []ev{{"", "a", ""}, {"", "b", ""}}, wantErr: io.EOF},
	{name: "mixed line endings", chunks: []string{"data: a\r\ndata: b\rdata: c\n\r\n"}, want: []ev{{"", "a\nb\nc", ""}}, wantErr: io.EOF},
	{name: "CR CR is two line endings", chunks: []string{"data: a\r", "\r"}, want: []ev{{"", "a", ""}}, wantErr: io.EOF},
	{name: "comments", chunks: []string{": ping\n\ndata: a\n: inside\n\n:\n\n"}, want: []ev{{"", "a", ""}}, wantErr: io.EOF},
	{name: "event and id", chunks: []string{"event: delta\nid: 1\ndata: a\n\ndata: b\n\n"}, want: []ev{{"delta", "a", "1"}, {"", "b", "1"}}, wantErr: io.EOF},
	{name: "id after data applies to the event", chunks: []string{"data: a\nid: 9\n\n"}, want: []ev{{"", "a", "9"}}, wantErr: io.EOF},
	{name: "empty id resets", chunks: []string{"id: 1\ndata: a\n\nid\ndata: b\n\n"}, want: []ev{{"", "a", "1"}, {"", "b", ""}}, wantErr: io.EOF},
	{name: "id with NUL ignored", chunks: []string{"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n"}, want: []ev{{"", "a", "1"}, {"", "b", "1"}}, wantErr: io.EOF},
	{name: "id persists over an event without data", chunks: []string{"id: 7\n\ndata: a\n\n"}, want: []ev{{"", "a", "7"}}, wantErr: io.EOF},
	{name: "type resets without dispatch", chunks: []string{"event: x\n\ndata: a\n\n"}, want: []ev{{"", "a", ""}}, wantErr: io.EOF},
	{name: "multi-line data", chunks: []string{"data: a\ndata: b\ndata:\ndata: c\n\n"}, want: []ev{{"", "a\nb\n\nc", ""}}, wantErr: io.EOF},
	{name: "no space after colon", chunks: []string{"data:a\n\n"}, want: []ev{{"", "a", ""}}, wantErr: io.EOF},
	{name: "two spaces after colon keep one", chunks: []string{"data:  a\n\n"}, want: []ev{{"", " a", ""}}, wantErr: io.EOF},
	{name: "trailing space kept", chunks: []string{"data: a \n\n"}, want: []ev{{"", "a ", ""}}, wantErr: io.EOF},
	{name: "colons in value", chunks: []string{"data: {\"a\": 1}\n\n"}, want: []ev{{"", `{"a": 1}`, ""}}, wantErr: io.EOF},
	{name: "field without colon", chunks: []string{"data\n\ndata\ndata\n\n"}, want: []ev{{"", "", ""}, {"", "\n", ""}}, wantErr: io.EOF},
	{name: "retry and unknown fields ignored", chunks: []string{"retry: 1000\nfoo: bar\ndata: a\n\nfoo: bar\n\n"}, want: []ev{{"", "a", ""}}, wantErr: io.EOF},
	{name: "field names are case-sensitive", chunks: []string{"Data: a\n\n"}, wantErr: io.EOF},
	{name: "BOM", chunks: []string{"\xEF\xBB\xBFdata: a\n\n"}, want: []ev{{"", "a", ""}}, wantErr: io.EOF},
	{name: "BOM split across reads", chunks: []string{"\xEF", "\xBB", "\xBFdata: a\n\n"}, want: []ev{{"", "a", ""}}, wantErr: io.EOF},
	{name: "only the first BOM is skipped", chunks: []string{"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n"}, wantErr: io.EOF},
	{name: "BOM prefix is not a BOM", chunks: []string{"\xEF\xBBdata: a\n\n"}, wantErr: io.EOF},
	{name: "BOM only", chunks: []string{"\xEF\xBB\xBF"}, wantErr: io.EOF},
	{name: "events without data not dispatched", chunks: []string{"event: x\nid: 1\n\n\n\ndata: a\n\n"}, want: []ev{{"", "a", "1"}}, wantErr: io.EOF},
	{
		name: "[DONE] passed through",
		chunks: []string{
			`data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}` + "\n\n",
			"data: [DONE]\n\n",
		},
		want:    []ev{{"", `{"choices":[{"index":0,"delta":{"content":"hi"}}]}`, ""}, {"", "[DONE]", ""}},
		wantErr: io.EOF,
	},
	{name: "cut inside a line", chunks: []string{"data: a\n\ndata: b"}, want: []ev{{"", "a", ""}}, wantErr: ErrIncomplete},
	{name: "cut before the blank line", chunks: []string{"data: a\n\ndata: b\n"}, want: []ev{{"", "a", ""}}, wantErr: ErrIncomplete},
	{name: "cut after a field without data", chunks: []string{"event: x\n"}, wantErr: ErrIncomplete},
	{name: "cut inside a comment", chunks: []string{"data: a\n\n: pi"}, want: []ev{{"", "a", ""}}, wantErr: ErrIncomplete},
	{name: "trailing comment is a clean end", chunks: []string{"data: a\n\n: bye\n"}, want: []ev{{"", "a", ""}}, wantErr: io.EOF},
	{name: "line of exactly max", max: 16, chunks: []string{"data: 0123456789\r\n\r\n"}, want: []ev{{"", "0123456789", ""}}, wantErr: io.EOF},
	{name: "line over max", max: 16, chunks: []string{"data: a\n\ndata: 0123456789A\n\n"}, want: []ev{{"", "a", ""}}, wantErr: ErrTooLarge},
	{name: "unterminated line over max", max: 16, chunks: []string{"data: 0123456789A"}, wantErr: ErrTooLarge},
	{name: "data of exactly max", max: 16, chunks: []string{"data: 0123456\ndata: 01234567\n\n"}, want: []ev{{"", "0123456\n01234567", ""}}, wantErr: io.EOF},
	{name: "data over max", max: 16, chunks: []string{"data: 01234567\ndata: 01234567\n\n"}, wantErr: ErrTooLarge},
	{name: "tiny max", max: 1, chunks: []string{"\xEF\xBB\xBFx\n\n"}, wantErr: io.EOF},
}

func (c readerCase) input() string { return strings.Join(c.chunks, "") }

func (c readerCase) maxEvent() int {
	if c.max == 0 {
		return 1 << 20
	}
	return c.max
}

// TestReader runs every case with the reads the case chooses, with the whole
// input available at once, and one byte per Read: the events must not depend
// on how the input is split.
func TestReader(t *testing.T) {
	for _, c := range readerCases {
		sources := []struct {
			name string
			r    func() io.Reader
		}{
			{"chunks", func() io.Reader { return &chunkReader{chunks: append([]string(nil), c.chunks...)} }},
			{"whole", func() io.Reader { return strings.NewReader(c.input()) }},
			{"one byte", func() io.Reader { return iotest.OneByteReader(strings.NewReader(c.input())) }},
			{"data with EOF", func() io.Reader { return iotest.DataErrReader(strings.NewReader(c.input())) }},
		}
		for _, s := range sources {
			t.Run(c.name+"/"+s.name, func(t *testing.T) {
				clock, _ := fakeClock()
				got, _, err := readAll(t, NewReader(s.r(), clock, c.maxEvent()), len(c.input()))
				if err != c.wantErr {
					t.Errorf("error = %v, want %v", err, c.wantErr)
				}
				if !equalEvents(got, c.want) {
					t.Errorf("events:\n got %q\nwant %q", got, c.want)
				}
			})
		}
	}
}

func equalEvents(a, b []ev) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAt checks that an event is stamped with the Read that delivered its
// terminating blank line, and that the clock is read once per Read with data.
func TestAt(t *testing.T) {
	src := &chunkReader{chunks: []string{
		"data: a\n",                     // read 1
		"\n",                            // read 2: ends a
		"",                              // a (0, nil) Read: no data, no clock
		"data: b\n\ndata: c\n\ndata: d", // read 3: ends b and c
		"\n",                            // read 4
		": ping\n",                      // read 5: completes no event
		"\n",                            // read 6: ends d
		"data: e\r",                     // read 7
		"\n\r",                          // read 8: the CR ends e; its LF is still to come
		"\n",                            // read 9
	}}
	clock, calls := fakeClock()
	r := NewReader(src, clock, 1<<10)
	got, ats, err := readAll(t, r, 100)
	if err != io.EOF {
		t.Fatalf("error = %v, want EOF", err)
	}
	want := []ev{{"", "a", ""}, {"", "b", ""}, {"", "c", ""}, {"", "d", ""}, {"", "e", ""}}
	if !equalEvents(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	wantAt := []time.Time{tick(2), tick(3), tick(3), tick(6), tick(8)}
	for i := range wantAt {
		if !ats[i].Equal(wantAt[i]) {
			t.Errorf("event %q: At = read %d, want read %d", got[i].data, ats[i].Sub(tick(0))/time.Second, wantAt[i].Sub(tick(0))/time.Second)
		}
	}
	if *calls != 9 {
		t.Errorf("clock read %d times, want once per Read with data (9)", *calls)
	}
	if !r.LastRead().Equal(tick(9)) {
		t.Errorf("LastRead = %v, want the last Read's time %v", r.LastRead(), tick(9))
	}
}

// failAfter fails the test if it is read past its chunks: Next must return an
// event as soon as its blank line arrives, not block on the next Read.
type failAfter struct {
	t *testing.T
	chunkReader
}

func (f *failAfter) Read(p []byte) (int, error) {
	if len(f.chunks) == 0 {
		f.t.Fatal("Read called after the event was complete")
	}
	return f.chunkReader.Read(p)
}

func TestNoReadAhead(t *testing.T) {
	for _, chunks := range [][]string{
		{"data: a\n", "\n"},
		{"data: a\r\n\r\n"},
		{"data: a\r\r"}, // the LF that may follow a CR is not waited for
		{"data: a\r", "\n\r"},
	} {
		clock, _ := fakeClock()
		r := NewReader(&failAfter{t: t, chunkReader: chunkReader{chunks: chunks}}, clock, 1<<10)
		var e Event
		if err := r.Next(&e); err != nil || string(e.Data) != "a" {
			t.Errorf("%q: Next = %q, %v; want a, nil", chunks, e.Data, err)
		}
	}
}

func TestLastReadAdvancesOnComments(t *testing.T) {
	src := &chunkReader{chunks: []string{"data: a\n\n", ": keepalive\n", ": keepalive\n"}}
	clock, _ := fakeClock()
	r := NewReader(src, clock, 1<<10)
	if !r.LastRead().IsZero() {
		t.Errorf("LastRead before any Read = %v, want zero", r.LastRead())
	}
	var e Event
	if err := r.Next(&e); err != nil {
		t.Fatal(err)
	}
	if err := r.Next(&e); err != io.EOF {
		t.Fatalf("error = %v, want EOF", err)
	}
	if !r.LastRead().Equal(tick(3)) {
		t.Errorf("LastRead = %v, want %v", r.LastRead(), tick(3))
	}
}

func TestSourceError(t *testing.T) {
	boom := errors.New("connection reset")
	clock, _ := fakeClock()
	// The error arrives with the data, mid-event: the events before it
	// come first, then the error as it is, not ErrIncomplete.
	r := NewReader(&chunkReader{chunks: []string{"data: a\n\ndata: b\n"}, err: boom}, clock, 1<<10)
	got, _, err := readAll(t, r, 100)
	if err != boom {
		t.Errorf("error = %v, want %v", err, boom)
	}
	if want := []ev{{"", "a", ""}}; !equalEvents(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
	if err := r.Next(new(Event)); err != boom {
		t.Errorf("second error = %v, want it sticky", err)
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestNoProgress(t *testing.T) {
	clock, _ := fakeClock()
	if err := NewReader(emptyReader{}, clock, 1<<10).Next(new(Event)); err != io.ErrNoProgress {
		t.Errorf("error = %v, want io.ErrNoProgress", err)
	}
}

func TestErrIncompleteIsUnexpectedEOF(t *testing.T) {
	if !errors.Is(ErrIncomplete, io.ErrUnexpectedEOF) {
		t.Error("ErrIncomplete does not match io.ErrUnexpectedEOF")
	}
}

// endless is a line that never ends.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += len(p)
	return len(p), nil
}

func TestTooLargeIsBounded(t *testing.T) {
	const max = 100 << 10 // more than the initial buffer, so it has to grow
	src := &endless{}
	clock, _ := fakeClock()
	r := NewReader(src, clock, max)
	if err := r.Next(new(Event)); err != ErrTooLarge {
		t.Fatalf("error = %v, want ErrTooLarge", err)
	}
	if cap(r.buf) > max+1 || src.n > max+1 {
		t.Errorf("buffer %d bytes after reading %d; want at most %d", cap(r.buf), src.n, max+1)
	}
	if err := r.Next(new(Event)); err != ErrTooLarge {
		t.Errorf("second error = %v, want it sticky", err)
	}
}

func TestLongLine(t *testing.T) {
	long := strings.Repeat("y", 200<<10)
	input := "data: a\n\ndata: " + long + "\ndata: z\n\n"
	for _, src := range []io.Reader{strings.NewReader(input), iotest.OneByteReader(strings.NewReader(input))} {
		clock, _ := fakeClock()
		got, _, err := readAll(t, NewReader(src, clock, 1<<20), len(input))
		if err != io.EOF {
			t.Fatalf("error = %v, want EOF", err)
		}
		if want := []ev{{"", "a", ""}, {"", long + "\nz", ""}}; !equalEvents(got, want) {
			t.Errorf("got %d events, wrong content", len(got))
		}
	}
}

func TestNewReaderRejectsNonPositiveMax(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewReader(…, 0) did not panic")
		}
	}()
	NewReader(strings.NewReader(""), time.Now, 0)
}

// cycle repeats chunks forever, one per Read (less if p is short), as a
// server flushing per token.
type cycle struct {
	chunks [][]byte
	i, off int
}

func (c *cycle) Read(p []byte) (int, error) {
	chunk := c.chunks[c.i][c.off:]
	n := copy(p, chunk)
	if c.off += n; n == len(chunk) {
		c.i, c.off = (c.i+1)%len(c.chunks), 0
	}
	return n, nil
}

// TestSteadyStateAllocs pins the hot-path promise: once the buffers have
// grown, reading an event allocates nothing.
func TestSteadyStateAllocs(t *testing.T) {
	r := NewReader(&cycle{chunks: [][]byte{
		[]byte("event: delta\nid: 1\ndata: {\"a\":1}\ndata: more\n\n"),
		[]byte(": keepalive\r\n"),
		[]byte("data: [DONE]\r\n\r\n"),
	}}, time.Now, 1<<20)
	var e Event
	next := func() {
		if err := r.Next(&e); err != nil {
			t.Fatal(err)
		}
	}
	next()
	if allocs := testing.AllocsPerRun(1000, next); allocs != 0 {
		t.Errorf("%v allocations per event, want 0", allocs)
	}
}
