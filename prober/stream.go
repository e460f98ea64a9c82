package prober

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/inferprobe/inferprobe/prober/sse"
	"github.com/inferprobe/inferprobe/record"
)

const (
	// maxEventBytes bounds one SSE event; real chunks are a few hundred bytes.
	maxEventBytes = 4 << 20
	// maxResponseBytes bounds a non-streamed reply.
	maxResponseBytes = 64 << 20
)

var doneMarker = []byte("[DONE]")

// readStream consumes an SSE body, timing each content chunk as its bytes arrive
// (docs/metrics.md, Time origin and content chunks) and taking token counts
// from usage in whichever chunk carries it. req hears of the first token
// at once, to free its prefill slot.
func readStream(now func() time.Time, t *Target, body io.Reader, rec *record.Record, req *Request) {
	r := sse.NewReader(body, now, maxEventBytes)
	var (
		ev       sse.Event
		st       = eventState{wantText: t.tok != nil}
		c        chunkInfo
		tokens   tokenCount
		finished bool
		// firstText is where the first content chunk's text ends in st.text.
		firstText = -1
	)
	defer func() { tokens.fill(rec, t, st.text, firstText) }()
	for {
		err := r.Next(&ev)
		if err != nil {
			// A stream that ended after its finish ended with its last
			// bytes; one cut short (a close, a reset) or refused ended
			// when that was seen, which its last bytes may precede by long.
			end := now()
			if last := r.LastRead(); err == io.EOF && finished && !last.IsZero() {
				end = last
			}
			rec.Duration = end.Sub(rec.Sent)
			switch {
			case err == io.EOF && finished:
				// Some servers end with finish_reason and no [DONE]; nothing is missing.
			case err == io.EOF || errors.Is(err, sse.ErrIncomplete):
				failRecord(rec, record.ReasonTruncated, 0, errors.New("stream ended before [DONE]"))
			case errors.Is(err, sse.ErrTooLarge):
				failRecord(rec, record.ReasonProtocol, 0, fmt.Errorf("SSE event larger than %d bytes", maxEventBytes))
			case errors.Is(err, errUndecodable):
				failRecord(rec, record.ReasonProtocol, 0, err)
			default:
				failRecord(rec, record.ReasonTruncated, 0, fmt.Errorf("reading stream: %w", err))
			}
			return
		}
		if string(ev.Type) == "error" {
			rec.Duration = ev.At.Sub(rec.Sent)
			failRecord(rec, record.ReasonServerErrorEvent, 0, fmt.Errorf("error event: %s", clip(ev.Data)))
			return
		}
		if bytes.Equal(bytes.TrimSpace(ev.Data), doneMarker) {
			rec.Duration = ev.At.Sub(rec.Sent)
			drain(body)
			return
		}
		if c, err = t.codec.event(ev, &st); err != nil {
			rec.Duration = ev.At.Sub(rec.Sent)
			failRecord(rec, record.ReasonProtocol, 0, fmt.Errorf("decoding chunk %s: %w", clip(ev.Data), err))
			return
		}
		if hasError(c.errValue) {
			rec.Duration = ev.At.Sub(rec.Sent)
			failRecord(rec, record.ReasonServerErrorEvent, 0, fmt.Errorf("error in stream: %s", clip(c.errValue)))
			return
		}
		if c.output || c.reasoning {
			if len(rec.Chunks) == 0 {
				if c.hasUsage {
					tokens.first = c.usage.CompletionTokens
				}
				firstText = len(st.text)
			}
			if c.output && rec.FirstOutput < 0 {
				rec.FirstOutput = len(rec.Chunks)
			}
			rec.Chunks = append(rec.Chunks, ev.At.Sub(rec.Sent))
			if len(rec.Chunks) == 1 {
				req.FirstToken() // after the chunk is timed: freeing the slot may wait
			}
		}
		tokens.add(&c)
		finished = finished || c.finished
		if c.done {
			rec.Duration = ev.At.Sub(rec.Sent)
			drain(body)
			return
		}
	}
}

// drain reads what is left of a finished stream (the chunked terminator) so
// that the connection can be reused.
func drain(body io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10)) }

// tokenCount gathers the server's token counts from a stream's events.
type tokenCount struct {
	usage     usage // the last usage seen, with the last input count given
	haveUsage bool  // some event gave the output count
	first     int   // tokens in the first content chunk by per-chunk usage; 0 unknown
}

func (tc *tokenCount) add(c *chunkInfo) {
	prompt := tc.usage.PromptTokens
	if c.hasUsage {
		tc.usage, tc.haveUsage = c.usage, true
	}
	// APIs that give input and output counts in separate events (Anthropic's
	// message_start and message_delta) must not lose the first to the second.
	if c.usage.PromptTokens > 0 {
		prompt = c.usage.PromptTokens
	}
	tc.usage.PromptTokens = prompt
}

// fill sets rec's token counts (docs/metrics.md, Token counts): the server's
// usage wins; without it, the target's tokenizer counts the text received;
// without one, each content chunk counts as one token. text is the streamed
// text and firstText where the first content chunk's part of it ends (-1:
// none).
func (tc *tokenCount) fill(rec *record.Record, t *Target, text []byte, firstText int) {
	if tc.usage.PromptTokens > 0 {
		rec.InputTokens, rec.UsagePromptTokens = tc.usage.PromptTokens, tc.usage.PromptTokens
	}
	rec.FirstChunkTokens = tc.first
	switch {
	case !t.codec.generates():
		rec.OutputTokens, rec.TokenSource = 0, record.TokensFromUsage
		if tc.usage.PromptTokens == 0 {
			rec.TokenSource = inputSource(t)
		}
		return
	case tc.haveUsage:
		rec.OutputTokens, rec.TokenSource = tc.usage.CompletionTokens, record.TokensFromUsage
		rec.ReasoningTokens = tc.usage.CompletionTokensDetails.ReasoningTokens
		if t.tok != nil {
			rec.ClientOutputTokens = t.tok.Count(string(text))
		}
	case t.tok != nil:
		// The whole text at once: BPE merges across chunk boundaries.
		rec.OutputTokens, rec.TokenSource = t.tok.Count(string(text)), record.TokensFromTokenizer
	default:
		rec.OutputTokens, rec.TokenSource = len(rec.Chunks), record.TokensFromChunks
	}
	if rec.FirstChunkTokens == 0 && t.tok != nil && firstText >= 0 {
		rec.FirstChunkTokens = t.tok.Count(string(text[:firstText]))
	}
}

// inputSource is the token source of a reply that generates nothing and
// whose server did not count the input: the tokenizer's count of the
// prompt, or else the dataset's estimate.
func inputSource(t *Target) record.TokenSource {
	if t.tok != nil {
		return record.TokensFromTokenizer
	}
	return record.TokensFromChunks
}

// readResponse consumes a non-streamed reply.
func readResponse(now func() time.Time, t *Target, body io.Reader, rec *record.Record) {
	data, err := io.ReadAll(io.LimitReader(body, maxResponseBytes+1))
	rec.Duration = now().Sub(rec.Sent)
	switch {
	case errors.Is(err, errUndecodable):
		failRecord(rec, record.ReasonProtocol, 0, err)
		return
	case err != nil:
		failRecord(rec, record.ReasonTruncated, 0, fmt.Errorf("reading response: %w", err))
		return
	}
	if len(data) > maxResponseBytes {
		failRecord(rec, record.ReasonProtocol, 0, fmt.Errorf("response larger than %d bytes", maxResponseBytes))
		return
	}
	var info chunkInfo
	var text []byte
	if err := t.codec.reply(data, &info, &text); err != nil {
		failRecord(rec, record.ReasonProtocol, 0, fmt.Errorf("decoding response %s: %w", clip(data), err))
		return
	}
	if hasError(info.errValue) {
		failRecord(rec, record.ReasonServerErrorEvent, 0, fmt.Errorf("error in response: %s", clip(info.errValue)))
		return
	}
	var tc tokenCount
	tc.add(&info)
	tc.fill(rec, t, text, -1)
}

// readUnstreamed consumes a single JSON reply to a streaming request: the
// server, or a proxy in front of it, ignored "stream": true. An error object
// in it is the server's error; any other reply is a protocol error rather
// than a success without a TTFT: a streaming client cannot read it, and
// counting it as a success would hide that TTFT and ITL are no longer
// measured.
func readUnstreamed(now func() time.Time, t *Target, body io.Reader, rec *record.Record) {
	readResponse(now, t, body, rec)
	rec.OutputTokens, rec.TokenSource = 0, record.TokensFromUsage
	failRecord(rec, record.ReasonProtocol, 0, errors.New(`streaming was asked for but the reply is one JSON body (did the server or a proxy ignore "stream": true?)`))
}

func hasError(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// clip shortens server text for an error message.
func clip(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
