package prober

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// vllmStream is a vLLM-style chat stream of n one-token content chunks: a
// role prelude, the chunks, a finish chunk, a usage chunk and [DONE], one
// event per element, as a server that flushes every token delivers them.
func vllmStream(n int) []string {
	const head = `data: {"id":"chatcmpl-4f6e3c2a9b8d4e1f","object":"chat.completion.chunk","created":1764437000,"model":"Qwen/Qwen3-0.6B","choices":`
	events := []string{head + `[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n"}
	for i := range n {
		events = append(events, head+`[{"index":0,"delta":{"content":" word`+strconv.Itoa(i%10)+`"},"logprobs":null,"finish_reason":null}]}`+"\n\n")
	}
	return append(events,
		head+`[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}`+"\n\n",
		head+`[],"usage":{"prompt_tokens":128,"total_tokens":`+strconv.Itoa(128+n)+`,"completion_tokens":`+strconv.Itoa(n)+`}}`+"\n\n",
		"data: [DONE]\n\n")
}

// eventReader delivers one event per Read, as a server flushing each token
// does.
type eventReader struct {
	events []string
	i      int
}

func (r *eventReader) Read(p []byte) (int, error) {
	if r.i == len(r.events) {
		return 0, io.EOF
	}
	n := copy(p, r.events[r.i])
	r.i++
	return n, nil
}

// BenchmarkReadStream is the client's per-chunk parsing cost: one 64-token
// stream per op through readStream (SSE framing, chunk JSON, timing, token
// counting), with the real clock, from an in-memory reader that hands over
// one event per Read. No network, no HTTP: what is left is the work the
// client does for every chunk on top of the read itself. ns/chunk and
// allocs/chunk spread the per-stream costs over the 64 content chunks.
func BenchmarkReadStream(b *testing.B) {
	const tokens = 64
	events := vllmStream(tokens)
	r := &eventReader{events: events}
	b.ReportAllocs()
	req := &Request{}
	for b.Loop() {
		r.i = 0
		rec := &record.Record{FirstOutput: -1, Sent: time.Now(), Chunks: make([]time.Duration, 0, tokens+1)}
		readStream(time.Now, chatTarget, r, rec, req)
		if rec.Outcome != record.OutcomeOK || len(rec.Chunks) != tokens || rec.OutputTokens != tokens {
			b.Fatalf("stream not read whole: %+v", rec)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/chunk")
}

// BenchmarkDoStream is one 64-token stream per op through Client.Do against
// a loopback server that flushes every event: the HTTP client, the
// connection and the read path together, on a reused connection. It is
// dominated by the loopback round trip and the scheduler, so its ns/op is
// noisy on a shared machine; allocs/op is the steadier figure.
func BenchmarkDoStream(b *testing.B) {
	const tokens = 64
	events := vllmStream(tokens)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			_, _ = io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	st := &scenarios.Target{URL: srv.URL, Endpoint: "chat", Model: "m",
		Timeout: scenarios.Duration(5 * time.Second), StallTimeout: scenarios.Duration(5 * time.Second)}
	tg, err := NewTarget("t", st)
	if err != nil {
		b.Fatal(err)
	}
	req, err := NewRequest(tg, dataset.Prompt{Text: "hello there", InputTokens: 2, OutputTokens: tokens}, nil)
	if err != nil {
		b.Fatal(err)
	}
	c := NewClient()
	b.ReportAllocs()
	for b.Loop() {
		if rec := c.Do(context.Background(), tg, req); rec.Outcome != record.OutcomeOK || len(rec.Chunks) != tokens {
			b.Fatalf("stream not read whole: %+v", rec)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/chunk")
}

// BenchmarkReadStreamCompressed is BenchmarkReadStream for a reply a proxy
// compressed, flushing per event: decoding on top of the parsing, decoder
// setup included (the plain path above does none of it).
func BenchmarkReadStreamCompressed(b *testing.B) {
	const tokens = 64
	for _, c := range compressors {
		if c.members {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			r := &eventReader{events: c.compress(b, vllmStream(tokens))}
			b.ReportAllocs()
			req := &Request{}
			for b.Loop() {
				r.i = 0
				arrived := &arrivalReader{r: r, now: time.Now}
				body := decodeBody(c.enc, arrived)
				rec := &record.Record{FirstOutput: -1, Sent: time.Now(), Chunks: make([]time.Duration, 0, tokens+1)}
				readStream(arrived.stamp, chatTarget, body, rec, req)
				releaseDecoder(body)
				if rec.Outcome != record.OutcomeOK || len(rec.Chunks) != tokens {
					b.Fatalf("stream not read whole: %+v", rec)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/chunk")
		})
	}
}
