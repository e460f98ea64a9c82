package prober

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// flusher is a compressor that can flush what it has so far, as a proxy
// compressing an event stream does after every event.
type flusher interface {
	io.WriteCloser
	Flush() error
}

// compressor names the ways a reply is compressed in these tests: each
// encoding, raw deflate beside zlib's, and gzip with one member per event.
type compressor struct {
	name    string
	enc     record.Encoding
	header  string // Content-Encoding
	members bool   // a gzip member per event instead of one stream
	new     func(w io.Writer) flusher
}

var compressors = []compressor{
	{name: "gzip", enc: record.EncodingGzip, header: "gzip", new: func(w io.Writer) flusher { return gzip.NewWriter(w) }},
	{name: "gzip, a member per event", enc: record.EncodingGzip, header: "gzip", members: true, new: func(w io.Writer) flusher { return gzip.NewWriter(w) }},
	{name: "deflate (zlib)", enc: record.EncodingDeflate, header: "deflate", new: func(w io.Writer) flusher { return zlib.NewWriter(w) }},
	{name: "deflate (raw)", enc: record.EncodingDeflate, header: "deflate", new: func(w io.Writer) flusher {
		fw, _ := flate.NewWriter(w, flate.DefaultCompression)
		return fw
	}},
	{name: "br", enc: record.EncodingBrotli, header: "br", new: func(w io.Writer) flusher { return brotli.NewWriter(w) }},
	{name: "zstd", enc: record.EncodingZstd, header: "zstd", new: func(w io.Writer) flusher {
		zw, _ := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1))
		return zw
	}},
}

// compress returns what a compressing proxy sends for events, one element
// per flush: the first event's bytes, the second's, and so on, then the
// compressor's end.
func (c compressor) compress(t testing.TB, events []string) []string {
	t.Helper()
	var buf bytes.Buffer
	var out []string
	w := c.new(&buf)
	for _, e := range events {
		if _, err := io.WriteString(w, e); err != nil {
			t.Fatal(err)
		}
		if c.members {
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			w = c.new(&buf)
		} else if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf.String())
		buf.Reset()
	}
	if !c.members {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf.String())
	}
	return out
}

// TestCompressedStreamTiming: a stream compressed with a flush after every
// event is read whole, and every content chunk is stamped at the read that
// delivered its compressed bytes — the same offsets as the plain stream.
func TestCompressedStreamTiming(t *testing.T) {
	events := []string{chat("a"), chat(" b"), chat(" c"),
		`data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":3}}` + "\n\n", done}
	at := []time.Duration{20 * ms, 30 * ms, 45 * ms, 46 * ms, 47 * ms, 48 * ms}
	t0 := time.Unix(1_700_000_000, 0)
	for _, c := range compressors {
		t.Run(c.name, func(t *testing.T) {
			reads := c.compress(t, events)
			s := &script{reads: reads, at: at[:len(reads)], t0: t0}
			arrived := &arrivalReader{r: s, now: s.clock}
			body := decodeBody(c.enc, arrived)
			defer releaseDecoder(body)
			rec := &record.Record{Sent: t0, FirstOutput: -1}
			readStream(arrived.stamp, chatTarget, body, rec, &Request{})
			if rec.Outcome != record.OutcomeOK || rec.OutputTokens != 3 || rec.InputTokens != 4 {
				t.Fatalf("outcome %v %q %s, tokens %d/%d", rec.Outcome, rec.Reason, rec.Err, rec.InputTokens, rec.OutputTokens)
			}
			if want := at[:3]; !slices.Equal(rec.Chunks, want) {
				t.Errorf("chunks at %v, want %v (the reads that delivered them)", rec.Chunks, want)
			}
			if rec.Duration != 47*ms {
				t.Errorf("duration %v, want 47ms ([DONE]'s read)", rec.Duration)
			}
		})
	}
}

func TestContentEncoding(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   record.Encoding
		errHas string
	}{
		{nil, record.EncodingIdentity, ""},
		{[]string{"identity"}, record.EncodingIdentity, ""},
		{[]string{"GZIP"}, record.EncodingGzip, ""},
		{[]string{"x-gzip"}, record.EncodingGzip, ""},
		{[]string{"deflate"}, record.EncodingDeflate, ""},
		{[]string{"br"}, record.EncodingBrotli, ""},
		{[]string{"zstd"}, record.EncodingZstd, ""},
		{[]string{"identity, zstd"}, record.EncodingZstd, ""},
		{[]string{"gzip, br"}, record.EncodingIdentity, "stacks encodings"},
		{[]string{"gzip", "br"}, record.EncodingIdentity, "stacks encodings"},
		{[]string{"compress"}, record.EncodingIdentity, "not one inferprobe decodes"},
	} {
		h := http.Header{"Content-Encoding": tc.values}
		got, err := contentEncoding(h)
		if got != tc.want || (err == nil) != (tc.errHas == "") || err != nil && !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%q: %v, %v; want %v, error containing %q", tc.values, got, err, tc.want, tc.errHas)
		}
	}
}

// TestCompressedBodyFailures: data the decoder refuses is a protocol error;
// a body cut inside its compressed data is truncated.
func TestCompressedBodyFailures(t *testing.T) {
	events := []string{chat("a"), chat(" b"), done}
	gz := compressors[0].compress(t, events)
	whole := strings.Join(gz, "")
	cut := func(c compressor) string { // inside the second event's bytes
		parts := c.compress(t, events)
		return parts[0] + parts[1][:len(parts[1])/2]
	}
	for _, tc := range []struct {
		name   string
		enc    record.Encoding
		body   string
		reason record.Reason
		errHas string
	}{
		{"not gzip at all", record.EncodingGzip, "data: {}\n\n", record.ReasonProtocol, "does not decode"},
		// After gzip's 10-byte header, a deflate block of the reserved type 3.
		{"corrupt after the header", record.EncodingGzip, whole[:10] + "\x07" + whole[11:], record.ReasonProtocol, "does not decode"},
		{"cut inside the compressed data", record.EncodingGzip, gz[0][:len(gz[0])-3], record.ReasonTruncated, "ended inside its compressed data"},
		{"zstd cut", record.EncodingZstd, cut(compressors[5]), record.ReasonTruncated, "ended inside its compressed data"},
		// The brotli reader reports a cut stream as a clean end: the event
		// stream's own framing still tells.
		{"brotli cut", record.EncodingBrotli, cut(compressors[4]), record.ReasonTruncated, "before [DONE]"},
		{"deflate cut", record.EncodingDeflate, cut(compressors[2]), record.ReasonTruncated, "ended inside its compressed data"},
		{"not zstd", record.EncodingZstd, "data: {}\n\n", record.ReasonProtocol, "does not decode"},
		{"not brotli", record.EncodingBrotli, "\xff\xff\xff\xff", record.ReasonProtocol, "does not decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrived := &arrivalReader{r: strings.NewReader(tc.body), now: time.Now}
			body := decodeBody(tc.enc, arrived)
			defer releaseDecoder(body)
			rec := &record.Record{Sent: time.Now(), FirstOutput: -1}
			readStream(arrived.stamp, chatTarget, body, rec, &Request{})
			if rec.Outcome != record.OutcomeError || rec.Reason != tc.reason || !strings.Contains(rec.Err, tc.errHas) {
				t.Errorf("outcome %v reason %q err %q, want %q containing %q", rec.Outcome, rec.Reason, rec.Err, tc.reason, tc.errHas)
			}
		})
	}
}

// TestCompressedRepliesThroughDo: over HTTP, a compressed stream flushed per
// event, a compressed non-streamed reply and a compressed error page are
// all read, and the record names the encoding.
func TestCompressedRepliesThroughDo(t *testing.T) {
	events := []string{chat("a"), chat(" b"), `data: {"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":2}}` + "\n\n", done}
	const reply = `{"choices":[{"message":{"content":"a b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":2}}`
	for _, c := range compressors {
		t.Run(c.name, func(t *testing.T) {
			streamed := c.compress(t, events)
			plain := c.compress(t, []string{reply})
			failed := c.compress(t, []string{`{"error":{"message":"overloaded"}}`})
			url := faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", c.header)
				parts := streamed
				switch strings.Split(r.URL.Path, "/")[1] {
				case "plain":
					w.Header().Set("Content-Type", "application/json")
					parts = plain
				case "failed":
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusServiceUnavailable)
					parts = failed
				default:
					eventStream(w)
				}
				for _, p := range parts {
					io.WriteString(w, p)
					flush(w)
				}
			})
			rec := do(t, testTarget(t, url, nil), nil)
			if rec.Outcome != record.OutcomeOK || len(rec.Chunks) != 2 || rec.OutputTokens != 2 || rec.Encoding != c.enc {
				t.Errorf("stream: outcome %v %q %s, %d chunks, %d tokens, encoding %v; want ok, 2, 2, %v", rec.Outcome, rec.Reason, rec.Err, len(rec.Chunks), rec.OutputTokens, rec.Encoding, c.enc)
			}
			off := false
			tg := testTarget(t, url+"/plain", func(st *scenarios.Target) { st.Stream = &off })
			if rec := do(t, tg, nil); rec.Outcome != record.OutcomeOK || rec.OutputTokens != 2 || rec.Encoding != c.enc {
				t.Errorf("non-streamed: outcome %v %q %s, %d tokens, encoding %v", rec.Outcome, rec.Reason, rec.Err, rec.OutputTokens, rec.Encoding)
			}
			if rec := do(t, testTarget(t, url+"/failed", nil), nil); rec.Reason != record.ReasonHTTP5xx || !strings.Contains(rec.Err, "overloaded") {
				t.Errorf("error reply: reason %q err %q, want http_5xx with the decoded body", rec.Reason, rec.Err)
			}
		})
	}
}
