package simulator

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// endpoint holds what differs between chat and completions, including the
// hand-written JSON fragments of a stream chunk's single choice: the hot
// path appends them rather than marshalling a struct per token.
type endpoint struct {
	name          string // for logs
	chat          bool
	idPrefix      string
	object        string // of a plain JSON response
	chunkObject   string // of a stream chunk
	contentOpen   string // choice up to the text
	reasoningOpen string // choice up to reasoning text
	contentClose  string // choice after the text or reasoning, to the end of the event
	finishOpen    string // final choice up to the finish_reason value
}

var (
	chatEndpoint = endpoint{
		name:          "chat",
		chat:          true,
		idPrefix:      "chatcmpl-",
		object:        "chat.completion",
		chunkObject:   "chat.completion.chunk",
		contentOpen:   `{"index":0,"delta":{"content":"`,
		reasoningOpen: `{"index":0,"delta":{"reasoning_content":"`,
		contentClose:  `"},"logprobs":null,"finish_reason":null}]}` + "\n\n",
		finishOpen:    `{"index":0,"delta":{},"logprobs":null,"finish_reason":"`,
	}
	textEndpoint = endpoint{
		name:          "completions",
		idPrefix:      "cmpl-",
		object:        "text_completion",
		chunkObject:   "text_completion",
		contentOpen:   `{"index":0,"text":"`,
		reasoningOpen: `{"index":0,"text":"","reasoning_content":"`,
		contentClose:  `","logprobs":null,"finish_reason":null}]}` + "\n\n",
		finishOpen:    `{"index":0,"text":"","logprobs":null,"finish_reason":"`,
	}
)

const rolePrelude = `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n"

// stream sends j as server-sent events. It returns early, with the
// error, when the client goes away.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, j *job) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	e := sse{w: w, rc: http.NewResponseController(w), buf: make([]byte, 0, 512)}
	e.prefix = s.chunkPrefix(j)

	// The prelude (or, for completions, the bare headers) tells the client
	// it was admitted, before the time to first token runs.
	if j.ep.chat {
		e.begin()
		e.buf = append(e.buf, rolePrelude...)
	}
	if err := e.send(); err != nil {
		return err
	}

	var c clock
	defer c.stop()
	g := &j.gen
	for g.more() {
		e.begin()
		if g.reasoning() {
			e.buf = append(e.buf, j.ep.reasoningOpen...)
		} else {
			e.buf = append(e.buf, j.ep.contentOpen...)
		}
		var due time.Time
		e.buf, due = g.appendChunk(e.buf)
		e.buf = append(e.buf, j.ep.contentClose...)
		if err := c.sleepUntil(ctx, due); err != nil {
			return err
		}
		if err := e.send(); err != nil {
			return err
		}
	}

	e.begin()
	e.buf = append(e.buf, j.ep.finishOpen...)
	e.buf = append(e.buf, j.finish...)
	e.buf = append(e.buf, `"}]}`+"\n\n"...)
	if err := c.sleepUntil(ctx, g.finishDue()); err != nil {
		return err
	}
	if err := e.send(); err != nil {
		return err
	}

	if j.includeUsage {
		e.begin()
		e.buf = append(e.buf, `],"usage":{"prompt_tokens":`...)
		e.buf = strconv.AppendInt(e.buf, int64(j.promptTokens), 10)
		e.buf = append(e.buf, `,"completion_tokens":`...)
		e.buf = strconv.AppendInt(e.buf, int64(g.tokens), 10)
		e.buf = append(e.buf, `,"total_tokens":`...)
		e.buf = strconv.AppendInt(e.buf, int64(j.promptTokens+g.tokens), 10)
		if g.reasoningTokens > 0 {
			e.buf = append(e.buf, `,"completion_tokens_details":{"reasoning_tokens":`...)
			e.buf = strconv.AppendInt(e.buf, int64(g.reasoningTokens), 10)
			e.buf = append(e.buf, '}')
		}
		e.buf = append(e.buf, "}}\n\n"...)
		if err := e.send(); err != nil {
			return err
		}
	}

	e.buf = append(e.buf[:0], "data: [DONE]\n\n"...)
	return e.send()
}

// chunkPrefix is the start of every event of the stream, up to and
// including the opening bracket of its choices.
func (s *Server) chunkPrefix(j *job) []byte {
	b := make([]byte, 0, 128+len(s.modelJSON))
	b = append(b, `data: {"id":"`...)
	b = append(b, j.id...)
	b = append(b, `","object":"`...)
	b = append(b, j.ep.chunkObject...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, j.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, s.modelJSON...)
	b = append(b, `,"choices":[`...)
	return b
}

// sse writes one event at a time from a buffer reused for the whole
// stream, flushing each so that it leaves when it is due.
type sse struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	prefix []byte
	buf    []byte
}

// begin starts a new event in buf.
func (e *sse) begin() { e.buf = append(e.buf[:0], e.prefix...) }

func (e *sse) send() error {
	if _, err := e.w.Write(e.buf); err != nil {
		return err
	}
	return e.rc.Flush()
}
