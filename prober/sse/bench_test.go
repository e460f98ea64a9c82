package sse

import (
	"bytes"
	"testing"
	"time"
)

// chatStream is a vLLM-style chat completion stream: a role prelude, 252
// one-word content chunks, a finish chunk, a usage chunk and [DONE] — 256
// events, one per element.
func chatStream() [][]byte {
	const head = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732900000,"model":"Qwen/Qwen3-0.6B","choices":`
	events := [][]byte{[]byte(head + `[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")}
	for range 252 {
		events = append(events, []byte(head+`[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`+"\n\n"))
	}
	return append(events,
		[]byte(head+`[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}`+"\n\n"),
		[]byte(head+`[],"usage":{"prompt_tokens":512,"total_tokens":764,"completion_tokens":252}}`+"\n\n"),
		[]byte("data: [DONE]\n\n"),
	)
}

// BenchmarkReader parses the chat stream over and over through one Reader, so
// the figures are the steady state: ns/event and allocs/op (per 256 events)
// exclude the Reader's setup. "flushed" delivers one event per Read, as a
// server flushing each token does, and reads the real clock each time;
// "bulk" delivers the stream in 32 KiB Reads.
func BenchmarkReader(b *testing.B) {
	events := chatStream()
	for _, mode := range []string{"flushed", "bulk"} {
		b.Run(mode, func(b *testing.B) {
			chunks := events
			if mode == "bulk" {
				chunks = [][]byte{bytes.Join(events, nil)}
			}
			var size int
			for _, c := range chunks {
				size += len(c)
			}
			r := NewReader(&cycle{chunks: chunks}, time.Now, 1<<20)
			var e Event
			stream := func() {
				for range events {
					if err := r.Next(&e); err != nil {
						b.Fatal(err)
					}
				}
			}
			stream() // let the buffers reach their working size
			if string(e.Data) != "[DONE]" {
				b.Fatalf("stream out of step: last event %q", e.Data)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				stream()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
		})
	}
}
