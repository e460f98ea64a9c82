package prober

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// script is a response body delivered as the given reads, each arriving at its
// offset on a fake clock: the sse reader stamps events with the clock reading
// taken when the read that completed them returned.
type script struct {
	reads []string
	at    []time.Duration
	i     int
	t0    time.Time
	now   time.Time
}

func (s *script) Read(p []byte) (int, error) {
	if s.i >= len(s.reads) {
		return 0, io.EOF
	}
	s.now = s.t0.Add(s.at[s.i])
	n := copy(p, s.reads[s.i])
	s.i++
	return n, nil
}

func (s *script) clock() time.Time { return s.now }

const ms = time.Millisecond

// chatTarget is a chat target without a tokenizer, enough for reading replies.
var chatTarget = &Target{codec: chatCodec{}}

func chat(content string) string {
	return `data: {"choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":null}]}` + "\n\n"
}

func TestReadStreamTiming(t *testing.T) {
	const (
		prelude  = `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"
		finish   = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n"
		done     = "data: [DONE]\n\n"
		usage3   = `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}` + "\n\n"
		usage6   = `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":6,"total_tokens":13}}` + "\n\n"
		reason   = `data: {"choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"finish_reason":null}]}` + "\n\n"
		comment  = ": keep-alive\n\n"
		emptyDel = `data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":null}]}` + "\n\n"
	)
	type want struct {
		chunks      []time.Duration
		firstOutput int
		out, in     int
		source      record.TokenSource
		itl         time.Duration
		duration    time.Duration
		outcome     record.Outcome
		reason      record.Reason
	}
	for _, tc := range []struct {
		name  string
		reads []string
		at    []time.Duration
		want  want
	}{
		{
			name:  "one token per chunk with usage chunk",
			reads: []string{prelude, chat(" a"), chat(" b"), chat(" c"), finish + usage3 + done},
			at:    []time.Duration{5 * ms, 100 * ms, 110 * ms, 130 * ms, 131 * ms},
			want: want{chunks: []time.Duration{100 * ms, 110 * ms, 130 * ms}, firstOutput: 0, out: 3, in: 7,
				source: record.TokensFromUsage, itl: 15 * ms, duration: 131 * ms},
		},
		{
			name:  "reasoning counts for TTFT, not for first output",
			reads: []string{reason, chat(" a"), usage3 + done},
			at:    []time.Duration{50 * ms, 80 * ms, 81 * ms},
			want: want{chunks: []time.Duration{50 * ms, 80 * ms}, firstOutput: 1, out: 3, in: 7,
				source: record.TokensFromUsage, itl: 20 * ms, duration: 81 * ms},
		},
		{
			name:  "multi-token chunks spread evenly without per-chunk usage",
			reads: []string{chat(" a b"), chat(" c d"), chat(" e f"), usage6 + done},
			at:    []time.Duration{100 * ms, 140 * ms, 180 * ms, 181 * ms},
			// 6 tokens over 3 chunks: 2 in the first, 4 after it, over 80ms.
			want: want{chunks: []time.Duration{100 * ms, 140 * ms, 180 * ms}, firstOutput: 0, out: 6, in: 7,
				source: record.TokensFromUsage, itl: 20 * ms, duration: 181 * ms},
		},
		{
			name: "per-chunk usage gives the first chunk's tokens",
			reads: []string{
				`data: {"choices":[{"index":0,"delta":{"content":" a b c"}}],"usage":{"prompt_tokens":7,"completion_tokens":3}}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"content":" d"}}],"usage":{"prompt_tokens":7,"completion_tokens":4}}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"content":" e"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":5}}` + "\n\n" + done,
			},
			at: []time.Duration{100 * ms, 110 * ms, 130 * ms},
			// 3 tokens in the first chunk, 2 after it, over 30ms.
			want: want{chunks: []time.Duration{100 * ms, 110 * ms, 130 * ms}, firstOutput: 0, out: 5, in: 7,
				source: record.TokensFromUsage, itl: 15 * ms, duration: 130 * ms},
		},
		{
			name:  "no usage: chunks are counted, comments and empty deltas are not content",
			reads: []string{prelude, comment, chat(" a"), emptyDel, chat(" b"), done},
			at:    []time.Duration{1 * ms, 2 * ms, 10 * ms, 11 * ms, 20 * ms, 21 * ms},
			want: want{chunks: []time.Duration{10 * ms, 20 * ms}, firstOutput: 0, out: 2, in: 99,
				source: record.TokensFromChunks, itl: 10 * ms, duration: 21 * ms},
		},
		{
			name:  "finish reason without [DONE] is complete",
			reads: []string{chat(" a"), finish},
			at:    []time.Duration{10 * ms, 12 * ms},
			want:  want{chunks: []time.Duration{10 * ms}, firstOutput: 0, out: 1, in: 99, source: record.TokensFromChunks, duration: 12 * ms},
		},
		{
			name:  "cut before [DONE]",
			reads: []string{chat(" a"), chat(" b")},
			at:    []time.Duration{10 * ms, 20 * ms},
			want: want{chunks: []time.Duration{10 * ms, 20 * ms}, firstOutput: 0, out: 2, in: 99, source: record.TokensFromChunks,
				itl: 10 * ms, duration: 20 * ms, outcome: record.OutcomeError, reason: record.ReasonTruncated},
		},
		{
			name:  "cut mid-event",
			reads: []string{chat(" a"), `data: {"choi`},
			at:    []time.Duration{10 * ms, 20 * ms},
			want: want{chunks: []time.Duration{10 * ms}, firstOutput: 0, out: 1, in: 99, source: record.TokensFromChunks,
				duration: 20 * ms, outcome: record.OutcomeError, reason: record.ReasonTruncated},
		},
		{
			name:  "malformed chunk",
			reads: []string{chat(" a"), "data: {not json\n\n"},
			at:    []time.Duration{10 * ms, 20 * ms},
			want: want{chunks: []time.Duration{10 * ms}, firstOutput: 0, out: 1, in: 99, source: record.TokensFromChunks,
				duration: 20 * ms, outcome: record.OutcomeError, reason: record.ReasonProtocol},
		},
		{
			name:  "error event type",
			reads: []string{chat(" a"), "event: error\ndata: {\"message\":\"overloaded\"}\n\n"},
			at:    []time.Duration{10 * ms, 20 * ms},
			want: want{chunks: []time.Duration{10 * ms}, firstOutput: 0, out: 1, in: 99, source: record.TokensFromChunks,
				duration: 20 * ms, outcome: record.OutcomeError, reason: record.ReasonServerErrorEvent},
		},
		{
			name:  "error object in data",
			reads: []string{`data: {"error":{"message":"boom","code":500}}` + "\n\n"},
			at:    []time.Duration{30 * ms},
			want: want{firstOutput: -1, in: 99, source: record.TokensFromChunks,
				duration: 30 * ms, outcome: record.OutcomeError, reason: record.ReasonServerErrorEvent},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Unix(1000, 0)
			s := &script{reads: tc.reads, at: tc.at, t0: t0}
			rec := &record.Record{Sent: t0, FirstOutput: -1, InputTokens: 99}
			readStream(s.clock, chatTarget, s, rec, &Request{})
			w := tc.want
			if len(rec.Chunks) != len(w.chunks) {
				t.Fatalf("chunks %v, want %v", rec.Chunks, w.chunks)
			}
			for i := range w.chunks {
				if rec.Chunks[i] != w.chunks[i] {
					t.Fatalf("chunks %v, want %v", rec.Chunks, w.chunks)
				}
			}
			if rec.FirstOutput != w.firstOutput {
				t.Errorf("FirstOutput %d, want %d", rec.FirstOutput, w.firstOutput)
			}
			if rec.OutputTokens != w.out || rec.InputTokens != w.in || rec.TokenSource != w.source {
				t.Errorf("tokens in/out/source %d/%d/%v, want %d/%d/%v", rec.InputTokens, rec.OutputTokens, rec.TokenSource, w.in, w.out, w.source)
			}
			if itl, _ := rec.ITL(); itl != w.itl {
				t.Errorf("ITL %v, want %v", itl, w.itl)
			}
			if rec.Duration != w.duration {
				t.Errorf("Duration %v, want %v", rec.Duration, w.duration)
			}
			if rec.Outcome != w.outcome || rec.Reason != w.reason {
				t.Errorf("outcome %v/%q, want %v/%q (err %q)", rec.Outcome, rec.Reason, w.outcome, w.reason, rec.Err)
			}
		})
	}
}

func TestReadResponse(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name, body string
		out, in    int
		source     record.TokenSource
		reason     record.Reason
	}{
		{"usage", `{"choices":[{"message":{"content":"hi there"}}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`, 2, 5, record.TokensFromUsage, record.ReasonNone},
		{"no usage", `{"choices":[{"text":"hi"}]}`, 0, 9, record.TokensFromChunks, record.ReasonNone},
		{"error", `{"error":{"message":"bad"}}`, 0, 9, record.TokensFromUsage, record.ReasonServerErrorEvent},
		{"garbage", `<html>`, 0, 9, record.TokensFromUsage, record.ReasonProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &record.Record{Sent: t0, FirstOutput: -1, InputTokens: 9}
			readResponse(func() time.Time { return t0.Add(70 * ms) }, chatTarget, strings.NewReader(tc.body), rec)
			if rec.Reason != tc.reason || rec.Duration != 70*ms {
				t.Fatalf("reason %q duration %v, want %q 70ms (err %q)", rec.Reason, rec.Duration, tc.reason, rec.Err)
			}
			if tc.reason == record.ReasonNone && (rec.OutputTokens != tc.out || rec.InputTokens != tc.in || rec.TokenSource != tc.source) {
				t.Errorf("tokens in/out/source %d/%d/%v, want %d/%d/%v", rec.InputTokens, rec.OutputTokens, rec.TokenSource, tc.in, tc.out, tc.source)
			}
		})
	}
}
