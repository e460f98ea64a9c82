package prober

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/inferprobe/inferprobe/prober/sse"
)

const (
	// maxEventBytes bounds one SSE event; real chunks are a few hundred bytes.
	maxEventBytes = 4 << 20
	// maxResponseBytes bounds a non-streamed reply.
	maxResponseBytes = 64 << 20
)

var doneMarker = []byte("[DONE]")

// readStream consumes an SSE body, timing each content chunk as its bytes arrive
// (DESIGN §4) and taking token counts from usage in whichever chunk carries it.
func readStream(now func() time.Time, body io.Reader, rec *Record) {
	r := sse.NewReader(body, now, maxEventBytes)
	var (
		ev        sse.Event
		fb        chunk // for decodeChunk's fallback; kept for its choices' backing array
		c         chunkInfo
		last      usage
		haveUsage bool
		finished  bool
	)
	defer func() { rec.countTokens(last, haveUsage) }()
	for {
		err := r.Next(&ev)
		if err != nil {
			end := r.LastRead()
			if end.IsZero() {
				end = now()
			}
			rec.Duration = end.Sub(rec.Sent)
			switch {
			case err == io.EOF && finished:
				// Some servers end with finish_reason and no [DONE]; nothing is missing.
			case err == io.EOF || errors.Is(err, sse.ErrIncomplete):
				rec.fail(ReasonTruncated, 0, errors.New("stream ended before [DONE]"))
			case errors.Is(err, sse.ErrTooLarge):
				rec.fail(ReasonProtocol, 0, fmt.Errorf("SSE event larger than %d bytes", maxEventBytes))
			default:
				rec.fail(ReasonTruncated, 0, fmt.Errorf("reading stream: %w", err))
			}
			return
		}
		if string(ev.Type) == "error" {
			rec.Duration = ev.At.Sub(rec.Sent)
			rec.fail(ReasonServerErrorEvent, 0, fmt.Errorf("error event: %s", clip(ev.Data)))
			return
		}
		if bytes.Equal(bytes.TrimSpace(ev.Data), doneMarker) {
			rec.Duration = ev.At.Sub(rec.Sent)
			// Read the chunked terminator so the connection can be reused.
			_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
			return
		}
		if err := decodeChunk(ev.Data, &fb, &c); err != nil {
			rec.Duration = ev.At.Sub(rec.Sent)
			rec.fail(ReasonProtocol, 0, fmt.Errorf("decoding chunk %s: %w", clip(ev.Data), err))
			return
		}
		if hasError(c.errValue) {
			rec.Duration = ev.At.Sub(rec.Sent)
			rec.fail(ReasonServerErrorEvent, 0, fmt.Errorf("error in stream: %s", clip(c.errValue)))
			return
		}
		if c.output || c.reasoning {
			if len(rec.Chunks) == 0 && c.hasUsage {
				rec.FirstChunkTokens = c.usage.CompletionTokens
			}
			if c.output && rec.FirstOutput < 0 {
				rec.FirstOutput = len(rec.Chunks)
			}
			rec.Chunks = append(rec.Chunks, ev.At.Sub(rec.Sent))
		}
		if c.hasUsage {
			last, haveUsage = c.usage, true
		}
		finished = finished || c.finished
	}
}

// readResponse consumes a non-streamed reply.
func readResponse(now func() time.Time, body io.Reader, rec *Record) {
	data, err := io.ReadAll(io.LimitReader(body, maxResponseBytes+1))
	rec.Duration = now().Sub(rec.Sent)
	if err != nil {
		rec.fail(ReasonTruncated, 0, fmt.Errorf("reading response: %w", err))
		return
	}
	if len(data) > maxResponseBytes {
		rec.fail(ReasonProtocol, 0, fmt.Errorf("response larger than %d bytes", maxResponseBytes))
		return
	}
	var resp response
	if err := json.Unmarshal(data, &resp); err != nil {
		rec.fail(ReasonProtocol, 0, fmt.Errorf("decoding response %s: %w", clip(data), err))
		return
	}
	if hasError(resp.Error) {
		rec.fail(ReasonServerErrorEvent, 0, fmt.Errorf("error in response: %s", clip(resp.Error)))
		return
	}
	var u usage
	if resp.Usage != nil {
		u = *resp.Usage
	}
	rec.countTokens(u, resp.Usage != nil)
}

// readUnstreamed consumes a single JSON reply to a streaming request: the
// server, or a proxy in front of it, ignored "stream": true. An error object
// in it is the server's error; any other reply is a protocol error rather
// than a success without a TTFT: a streaming client cannot read it, and
// counting it as a success would hide that TTFT and ITL are no longer
// measured.
func readUnstreamed(now func() time.Time, body io.Reader, rec *Record) {
	readResponse(now, body, rec)
	rec.OutputTokens, rec.TokenSource = 0, TokensFromUsage
	rec.fail(ReasonProtocol, 0, errors.New(`streaming was asked for but the reply is one JSON body (did the server or a proxy ignore "stream": true?)`))
}

// countTokens fills token counts: the server's usage wins; without it each
// content chunk is counted as one token, and TokenSource says so.
func (r *Record) countTokens(u usage, haveUsage bool) {
	if haveUsage {
		r.OutputTokens, r.TokenSource = u.CompletionTokens, TokensFromUsage
		if u.PromptTokens > 0 {
			r.InputTokens = u.PromptTokens
		}
		return
	}
	r.OutputTokens, r.TokenSource = len(r.Chunks), TokensFromChunks
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
