package wire

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/prober"
)

// BenchmarkCreditRoundTrip is the wire cost of one credit, the other frame
// every request crosses the pipe in: a chat request of 128 prompt words and
// 64 output tokens (the synthetic dataset's defaults), encoded, framed,
// buffered, read and decoded. With BenchmarkRecordRoundTrip it is the
// protocol's whole cost per request.
func BenchmarkCreditRoundTrip(b *testing.B) {
	prompt := strings.TrimSpace(strings.Repeat("word ", 128))
	c := &Credit{ID: 1, Target: 7, Request: prober.Request{
		Seq: 42, Scheduled: t0, InputTokens: 128, PinnedOutputTokens: 64,
		Body: []byte(`{"ignore_eos":true,"max_tokens":64,"messages":[{"content":"` + prompt +
			`","role":"user"}],"model":"Qwen/Qwen3-0.6B","stream":true,"stream_options":{"include_usage":true}}`),
	}}
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	dec := NewDecoder(&buf)
	_ = enc.Credit(c)
	_ = enc.Flush()
	size := buf.Len()
	buf.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if err := enc.Credit(c); err != nil {
			b.Fatal(err)
		}
		if err := enc.Flush(); err != nil {
			b.Fatal(err)
		}
		if _, err := dec.Next(); err != nil {
			b.Fatal(err)
		}
		if _, err := dec.Credit(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "bytes/credit")
}
