package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"time"
	"unsafe"

	"github.com/inferprobe/inferprobe/prober/seeded"
	"github.com/inferprobe/inferprobe/scenarios"
)

// maxTokens is the longest prompt or output one entry of a file may ask
// for: beyond it a value is taken as corrupt rather than built (a prompt of
// 10^12 tokens would exhaust memory, not test a server).
var maxTokens = int(scenarios.TokenBound.Max)

// Limits on what else one entry of a file may ask for.
const (
	maxLine = 64 << 20
	// maxOffset bounds a replayed timestamp (after the speed-up): a century.
	maxOffset = 100 * 365 * 24 * time.Hour
	// maxPool bounds the memory a random_pool file's entries take, as they
	// are held to be drawn from at random.
	maxPool = 256 << 20
	// outputAbsent is the output length of an entry that gives none: the
	// dataset's output_tokens decides it.
	outputAbsent = math.MinInt32
)

// outputText is an entry's output length as its errors show it.
func outputText(out int) string {
	if out == outputAbsent {
		return "not given"
	}
	return strconv.Itoa(out) + " tokens"
}

// LineError is a bad entry in a dataset file.
type LineError struct {
	File string
	// Line is the 1-based line (the row for Parquet files).
	Line   int
	Reason string
}

func (e *LineError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
}

// input is an open dataset file: read as a stream, except Parquet, which
// needs random access.
type input interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// record is one entry of a file, as parsed, before any text is built.
type record struct {
	line int
	// ts is the timestamp in ms; hasTS says the entry has one.
	ts    float64
	hasTS bool
	// text is a literal prompt; when empty, in tokens are built.
	text     string
	in, out  int
	hashIDs  []uint64
	block    int // tokens per hash id given by the file; 0 for the probe's
	session  string
	cancel   bool
	duration float64 // recorded duration in ms of a cancelled request
	// turns are a multi-turn session's turns, user and assistant, and
	// system its system message, sent ahead of each turn's messages.
	turns  []turn
	system string
	media  rawMedia
}

// turn is one turn of a multi-turn session as written.
type turn struct {
	assistant bool
	text      string
	out       int
	delay     float64
	media     rawMedia
}

// reader yields a file's records in order, then io.EOF.
type reader interface {
	next() (record, error)
}

// opener opens a format's reader, which must report a bad entry as a
// *LineError.
type opener func(in input, name string) (reader, error)

// openers holds each registered format's opener, by name.
var openers = map[string]opener{}

// registerFormat registers a file format's description, for scenarios to
// validate against, and its opener. Each format calls it from the init of
// its own file, format_NAME.go.
func registerFormat(desc scenarios.FileFormat, open opener) {
	scenarios.RegisterFormat(desc)
	openers[desc.Name] = open
}

// fileSource streams a file's records and turns them into items, pass after
// pass.
type fileSource struct {
	cfg  scenarios.File
	in   input
	name string
	text *Text
	seed uint64
	rest *rand.Rand // words of prompts beyond their hash blocks, and placeholders
	// outputs draws the output lengths of entries that give none.
	outputs *rand.Rand
	replay  bool
	// files holds the media files entries name; endpoint is the target's
	// endpoint type, which must be chat for an entry with media.
	files    mediaFiles
	endpoint string

	// From the check pass: the replay's time 0 (see zero) and the length
	// of a pass in ms, the entries and the requests (a session's turns each
	// count) in it.
	zero, period    float64
	count, requests uint64
	// pool holds a random_pool file's entries, drawn by draw.
	pool []record
	draw *rand.Rand

	r      reader
	pass   uint64
	index  uint64 // of the next record in its pass
	lastTS float64
}

func openFile(cfg scenarios.File, text *Text, o Options) (Source, error) {
	f, err := os.Open(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("dataset file: %w", err)
	}
	// The probe reads f for as long as it runs; Close (at the end of the
	// probe's run) gives the descriptor back.
	s, err := newFileSource(cfg, f, cfg.Path, text, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the file, when the source has one of its own.
func (s *fileSource) Close() error {
	if c, ok := s.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func newFileSource(cfg scenarios.File, in input, name string, text *Text, o Options) (*fileSource, error) {
	s := &fileSource{
		cfg:      cfg,
		in:       in,
		name:     name,
		text:     text,
		seed:     o.Seed,
		rest:     seeded.New(o.Seed, o.Component+"/text"),
		outputs:  seeded.New(o.Seed, o.Component+"/outputs"),
		replay:   cfg.Timing == scenarios.TimingReplay,
		endpoint: o.Endpoint,
	}
	if cfg.Format == FormatRandomPool {
		s.draw = seeded.New(o.Seed, o.Component+"/pool")
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

// check reads the file once, so that a bad entry fails the probe before it
// starts, and measures a replay pass.
func (s *fileSource) check() error {
	r, err := s.open()
	if err != nil {
		return err
	}
	var first, last, prev float64
	var pool, read int
	for {
		rec, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := s.validate(rec, read == 0, prev); err != nil {
			return err
		}
		// Reads the entry's files now, so that the run reads none.
		if _, err := s.media(rec, rec.media); err != nil {
			return err
		}
		for _, t := range rec.turns {
			if _, err := s.media(rec, t.media); err != nil {
				return err
			}
		}
		read++
		prev = rec.ts
		if !s.inWindow(rec) {
			continue
		}
		if s.draw != nil {
			// The record, its strings, and its slot in the pool as it grows.
			if pool += 2*int(unsafe.Sizeof(rec)) + len(rec.text) + len(rec.session) + rec.media.size(); pool > maxPool {
				return &LineError{File: s.name, Line: rec.line, Reason: fmt.Sprintf("a random_pool is held in memory, and its entries pass %d MiB here; use a smaller pool, or single_turn, which is streamed", maxPool>>20)}
			}
			s.pool = append(s.pool, rec)
		}
		if s.count == 0 {
			first = rec.ts
		}
		last = rec.ts
		s.count++
		users := 0
		for _, t := range rec.turns {
			if !t.assistant {
				users++
			}
		}
		s.requests += uint64(max(users, 1))
	}
	if s.count == 0 {
		if read > 0 {
			return &LineError{File: s.name, Reason: fmt.Sprintf("holds no requests between start_offset %s and end_offset %s; widen the window", s.cfg.StartOffset, s.cfg.EndOffset)}
		}
		return &LineError{File: s.name, Reason: "holds no requests; check the format (" + s.cfg.Format + ") and the file"}
	}
	s.zero = s.timeZero(first)
	// A pass lasts the trace's span plus one mean gap, so the next pass keeps
	// the trace's rate; at least a second, so a trace whose timestamps are all
	// equal does not repeat without pause.
	span := last - first
	s.period = max(span+span/float64(max(s.count-1, 1)), 1000)
	if s.replay && s.period/s.cfg.Speedup*float64(time.Millisecond) > float64(maxOffset) {
		return &LineError{File: s.name, Reason: fmt.Sprintf("the timestamps span %.0f ms, over a century at speedup %g; check their unit (milliseconds)", span, s.cfg.Speedup)}
	}
	if s.pool != nil { // drawn from memory: the file is not read again
		return nil
	}
	s.r, err = s.open()
	return err
}

// validate checks what the readers leave to every format: lengths and the
// order of timestamps.
func (s *fileSource) validate(rec record, first bool, last float64) error {
	bad := func(format string, args ...any) error {
		return &LineError{File: s.name, Line: rec.line, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case rec.in < 0 || rec.out < 0 && rec.out != outputAbsent:
		return bad("negative length (input %d tokens, output %s); lengths are >= 0", rec.in, outputText(rec.out))
	case rec.in > maxTokens || rec.out > maxTokens:
		return bad("length over %d tokens (input %d, output %s); this is taken for corrupt data", maxTokens, rec.in, outputText(rec.out))
	case rec.text == "" && rec.turns == nil && rec.in == 0 && len(rec.hashIDs) == 0:
		return bad("has no prompt: give text or an input length >= 1")
	case rec.block < 0:
		return bad("block_size %d; it must be >= 1", rec.block)
	}
	for _, t := range rec.turns {
		if t.out < 0 && t.out != outputAbsent || t.out > maxTokens || t.delay < 0 {
			return bad("a turn has output_length %d or delay %g ms out of range (0 to %d tokens, delay >= 0)", t.out, t.delay, maxTokens)
		}
	}
	if !s.replay {
		return nil
	}
	switch {
	case !rec.hasTS:
		return bad("has no timestamp, which timing: replay needs; add one, or use timing: arrival")
	case math.IsNaN(rec.ts) || math.IsInf(rec.ts, 0):
		return bad("timestamp %v is not a number", rec.ts)
	case !first && rec.ts < last:
		return bad("timestamp %g ms is earlier than the one before (%g ms); replay needs them in order: sort the file by timestamp, or use timing: arrival", rec.ts, last)
	}
	return nil
}

// open starts reading the file from its beginning.
func (s *fileSource) open() (reader, error) {
	if _, err := s.in.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("dataset file %s: %w", s.name, err)
	}
	return openers[s.cfg.Format](s.in, s.name)
}

func (s *fileSource) Next() (Item, error) {
	if s.pool != nil {
		return s.item(s.pool[s.draw.IntN(len(s.pool))])
	}
	rec, err := s.r.next()
	if errors.Is(err, io.EOF) {
		if s.r, err = s.open(); err != nil {
			return Item{}, err
		}
		s.pass++
		s.index = 0
		rec, err = s.r.next()
		if errors.Is(err, io.EOF) {
			return Item{}, &LineError{File: s.name, Reason: "is empty now; it held requests when the probe started"}
		}
	}
	if err != nil {
		return Item{}, err
	}
	// The file may have changed since the check: hold it to the same rules.
	if err := s.validate(rec, s.index == 0, s.lastTS); err != nil {
		return Item{}, err
	}
	s.index++
	s.lastTS = rec.ts
	if !s.inWindow(rec) {
		return s.Next()
	}
	return s.item(rec)
}

// inWindow reports whether a replay sends rec: its timestamp is within
// start_offset and end_offset, both included.
func (s *fileSource) inWindow(rec record) bool {
	if !s.replay {
		return true
	}
	ms := func(d scenarios.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return rec.ts >= ms(s.cfg.StartOffset) && (s.cfg.EndOffset == 0 || rec.ts <= ms(s.cfg.EndOffset))
}

// timeZero is the timestamp sent at the replay's start, given the first
// one replayed: by default that one, else start_offset, else (absolute
// timestamps) 0.
func (s *fileSource) timeZero(first float64) float64 {
	switch {
	case s.cfg.StartsAtFirst():
		return first
	case s.cfg.StartOffset > 0:
		return float64(s.cfg.StartOffset) / float64(time.Millisecond)
	}
	return 0
}

// item builds the prompts of rec.
func (s *fileSource) item(rec record) (Item, error) {
	it := Item{Prompt: s.prompt(rec, rec.in, rec.text)}
	var err error
	if it.Prompt.Media, err = s.media(rec, rec.media); err != nil {
		return Item{}, err
	}
	if s.replay {
		ms := (rec.ts - s.zero + float64(s.pass)*s.period) / s.cfg.Speedup
		it.At = min(time.Duration(ms*float64(time.Millisecond)), maxOffset)
	}
	if rec.cancel {
		// A cancelled request without a recorded duration is cut when it is sent.
		it.CancelAfter = max(s.scaled(rec.duration), 1)
	}
	if rec.turns != nil {
		if err := s.session(rec, &it); err != nil {
			return Item{}, err
		}
	}
	return it, nil
}

// media is m, of entry rec, as sent; nil for none.
func (s *fileSource) media(rec record, m rawMedia) (*Media, error) {
	if m.empty() {
		return nil, nil
	}
	bad := func(reason string) error { return &LineError{File: s.name, Line: rec.line, Reason: reason} }
	if s.endpoint != "" && s.endpoint != scenarios.DefaultEndpoint {
		return nil, bad(fmt.Sprintf("carries images or audio, which only endpoint %s sends; the target's is %s: drop them or use %s", scenarios.DefaultEndpoint, s.endpoint, scenarios.DefaultEndpoint))
	}
	media, err := s.files.resolve(m)
	if err != nil {
		return nil, bad(err.Error())
	}
	return media, nil
}

// scaled converts ms of trace time to wall time under the speed-up.
func (s *fileSource) scaled(ms float64) time.Duration {
	if s.replay {
		ms /= s.cfg.Speedup
	}
	return min(time.Duration(ms*float64(time.Millisecond)), maxOffset)
}

// prompt builds one request: the literal text, or in tokens of hash blocks
// and words.
func (s *fileSource) prompt(rec record, in int, text string) Prompt {
	// An output length of 0 (a request that failed in the trace) still asks
	// for one token.
	out := max(rec.out, 1)
	if rec.out == outputAbsent {
		out = drawOutput(s.outputs, s.cfg.OutputTokens)
	}
	p := Prompt{Session: rec.session, OutputTokens: out, Exact: s.text.Exact()}
	if text != "" {
		p.Text, p.InputTokens = text, s.text.Count(text)
		return p
	}
	block := s.cfg.BlockSize
	if rec.block > 0 {
		block = rec.block
	}
	p.Text = s.text.Blocks(s.seed, s.pass, rec.hashIDs, block, max(in, 1), s.rest)
	p.InputTokens = max(in, 1)
	if s.text.Exact() {
		p.InputTokens = s.text.Count(p.Text)
	}
	return p
}

// session turns rec's turns into the first request and the later ones, each
// carrying the conversation so far: the file's assistant turns where it has
// them, else a placeholder of the asked output length in words. A user
// turn's images and audio go with its message, in the history too.
func (s *fileSource) session(rec record, it *Item) error {
	var history []Message
	if rec.system != "" {
		history = append(history, Message{Role: "system", Content: rec.system})
	}
	var turns []Turn
	for i, t := range rec.turns {
		if t.assistant {
			history = append(history, Message{Role: "assistant", Content: t.text})
			continue
		}
		if i > 0 && !rec.turns[i-1].assistant && len(turns) > 0 {
			// Two user turns in a row: the answer to the first was not recorded.
			history = append(history, Message{Role: "assistant", Content: s.text.Words(s.rest, turns[len(turns)-1].Prompt.OutputTokens)})
		}
		out := t.out
		if out <= 0 { // none given (or 0): the answer written next, else the dataset's
			out = drawOutput(s.outputs, s.cfg.OutputTokens)
			if i+1 < len(rec.turns) && rec.turns[i+1].assistant {
				out = max(s.text.Count(rec.turns[i+1].text), 1)
			}
		}
		media, err := s.media(rec, t.media)
		if err != nil {
			return err
		}
		history = append(history, Message{Role: "user", Content: t.text, Media: media})
		p := Prompt{Text: t.text, Session: rec.session, OutputTokens: out, Exact: s.text.Exact(), Media: media}
		p.Messages = append([]Message(nil), history...)
		for _, m := range p.Messages {
			p.InputTokens += s.text.Count(m.Content)
		}
		turns = append(turns, Turn{Prompt: p, Delay: s.scaled(t.delay)})
	}
	it.Prompt = turns[0].Prompt
	it.Turns = turns[1:]
	return nil
}

// PassRequests returns how many requests one pass through a file dataset
// sends (each turn of a session counts), and false for other sources: a run
// limited to that many requests sends the file once.
func PassRequests(s Source) (uint64, bool) {
	if w, ok := s.(*withSystem); ok {
		s = w.src
	}
	f, ok := s.(*fileSource)
	if !ok {
		return 0, false
	}
	return f.requests, true
}

// lineOf returns the line of byte offset off in data read from in, for
// readers that only know offsets.
func lineOf(in input, off int64) int {
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return 0
	}
	line := 1
	buf := make([]byte, 64<<10)
	for off > 0 {
		n, err := in.Read(buf[:min(int64(len(buf)), off)])
		line += bytes.Count(buf[:n], []byte{'\n'})
		off -= int64(n)
		if err != nil {
			break
		}
	}
	return line
}
