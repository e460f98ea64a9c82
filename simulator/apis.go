package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// api is a generation API other than chat and completions: how its
// request reads and how its stream and reply look. The hand-written fast
// path of chat and completions is not needed here: these events are
// marshalled, which is plenty for tests and demos.
type api struct {
	name     string
	idPrefix string
	perToken bool // one event per token whatever TokensPerChunk (TGI)
	// parse reads a request body; stream says whether the client asked for a stream.
	parse func(r *http.Request, body []byte, defaultMax int) (g genRequest, bad *badRequest)
	// start, delta and end are the stream's events: before the first
	// token, with each chunk's text, and after the last token.
	start func(s *Server, j *job) []sseEvent
	delta func(j *job, text string) []sseEvent
	end   func(s *Server, j *job, text string) []sseEvent
	// reply is the body of a non-streamed answer.
	reply func(j *job, text string) any
}

// sseEvent is one server-sent event: an optional event name and JSON data.
type sseEvent struct {
	name string
	data any
}

// serveAPI serves a generation API.
func (s *Server) serveAPI(a *api) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		g, bad := a.parse(r, body, s.cfg.DefaultMaxTokens)
		if bad != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", bad.param, bad.msg)
			return
		}
		s.generate(w, r, g, &job{api: a, id: a.idPrefix})
	}
}

// streamAPI streams j as a's events; like stream, each chunk leaves when
// its last token is due.
func (s *Server) streamAPI(ctx context.Context, w http.ResponseWriter, j *job) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(evs []sseEvent) error {
		var b []byte
		for _, e := range evs {
			if e.name != "" {
				b = append(b, "event: "+e.name+"\n"...)
			}
			data, err := json.Marshal(e.data)
			if err != nil {
				return err
			}
			b = append(b, "data: "...)
			b = append(append(b, data...), "\n\n"...)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := send(j.api.start(s, j)); err != nil {
		return err
	}
	var c clock
	defer c.stop()
	g := &j.gen
	var all []byte
	for g.more() {
		var text []byte
		var due time.Time
		text, due = g.appendChunk(text)
		all = append(all, text...)
		if err := c.sleepUntil(ctx, due); err != nil {
			return err
		}
		if err := send(j.api.delta(j, string(text))); err != nil {
			return err
		}
	}
	if err := c.sleepUntil(ctx, g.finishDue()); err != nil {
		return err
	}
	return send(j.api.end(s, j, string(all)))
}

// readBody reads a request body, answering the client itself when it is too large.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	var raw json.RawMessage
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBody)).Decode(&raw); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "invalid JSON body: "+err.Error())
		return nil, false
	}
	return raw, true
}

// decodeInto decodes body into v, or describes the problem.
func decodeInto(body []byte, v any) *badRequest {
	if err := json.Unmarshal(body, v); err != nil {
		return &badRequest{"", "invalid request: " + err.Error()}
	}
	return nil
}

// pinning are the length options the simulator honours on every generation
// API (real servers differ: it is a stand-in).
type pinning struct {
	MinTokens *int `json:"min_tokens"`
	IgnoreEOS bool `json:"ignore_eos"`
}

// genLimits checks output limits as vLLM does, under the API's own name
// for the cap.
func genLimits(prompt, maxTokens int, param string, p pinning) (limits, *badRequest) {
	l := limits{promptTokens: prompt, maxTokens: maxTokens}
	if p.MinTokens != nil {
		l.minTokens = *p.MinTokens
	}
	switch {
	case l.maxTokens < 1:
		return l, &badRequest{param, fmt.Sprintf("%s must be at least 1, got %d", param, l.maxTokens)}
	case l.minTokens < 0 || l.minTokens > l.maxTokens:
		return l, &badRequest{"min_tokens", fmt.Sprintf("min_tokens must be between 0 and %s (%d), got %d", param, l.maxTokens, l.minTokens)}
	}
	return l, nil
}

// orDefault is *v, or def when v is nil.
func orDefault(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

// responsesAPI is OpenAI's Responses API (POST /v1/responses).
var responsesAPI = api{
	name:     "responses",
	idPrefix: "resp_",
	parse: func(_ *http.Request, body []byte, defaultMax int) (genRequest, *badRequest) {
		var req struct {
			pinning
			Input           json.RawMessage `json:"input"`
			MaxOutputTokens *int            `json:"max_output_tokens"`
			Stream          bool            `json:"stream"`
		}
		if bad := decodeInto(body, &req); bad != nil {
			return genRequest{}, bad
		}
		var prompt promptWords
		if len(req.Input) == 0 || json.Unmarshal(req.Input, &prompt) != nil {
			var msgs []message
			if json.Unmarshal(req.Input, &msgs) != nil || len(msgs) == 0 {
				return genRequest{}, &badRequest{"input", "input must be a string or a non-empty array of messages"}
			}
			for _, m := range msgs {
				prompt += m.Content
			}
		}
		l, bad := genLimits(int(prompt), orDefault(req.MaxOutputTokens, defaultMax), "max_output_tokens", req.pinning)
		return genRequest{lim: l, stream: req.Stream, ignoreEOS: req.IgnoreEOS}, bad
	},
	start: func(_ *Server, j *job) []sseEvent {
		return []sseEvent{{"response.created", map[string]any{"type": "response.created", "response": responsesObject(j, "in_progress", "", false)}}}
	},
	delta: func(j *job, text string) []sseEvent {
		return []sseEvent{{"response.output_text.delta", map[string]any{
			"type": "response.output_text.delta", "item_id": "msg_" + j.id, "output_index": 0, "content_index": 0, "delta": text,
		}}}
	},
	end: func(_ *Server, j *job, text string) []sseEvent {
		status := "completed"
		if j.finish == "length" {
			status = "incomplete" // max_output_tokens cut it
		}
		return []sseEvent{{"response." + status, map[string]any{"type": "response." + status, "response": responsesObject(j, status, text, true)}}}
	},
	reply: func(j *job, text string) any {
		status := "completed"
		if j.finish == "length" {
			status = "incomplete"
		}
		return responsesObject(j, status, text, true)
	},
}

func responsesObject(j *job, status, text string, final bool) map[string]any {
	r := map[string]any{"id": j.id, "object": "response", "created_at": j.created, "status": status, "output": []any{}}
	if final {
		r["output"] = []any{map[string]any{
			"type": "message", "id": "msg_" + j.id, "role": "assistant", "status": status,
			"content": []any{map[string]any{"type": "output_text", "text": text}},
		}}
		r["usage"] = map[string]any{
			"input_tokens": j.promptTokens, "output_tokens": j.gen.tokens, "total_tokens": j.promptTokens + j.gen.tokens,
			"output_tokens_details": map[string]int{"reasoning_tokens": 0},
		}
		if status == "incomplete" {
			r["incomplete_details"] = map[string]string{"reason": "max_output_tokens"}
		}
	}
	return r
}

// messagesAPI is Anthropic's Messages API (POST /v1/messages).
var messagesAPI = api{
	name:     "messages",
	idPrefix: "msg_",
	parse: func(r *http.Request, body []byte, _ int) (genRequest, *badRequest) {
		if r.Header.Get("anthropic-version") == "" {
			return genRequest{}, &badRequest{"", "anthropic-version: header is required"}
		}
		var req struct {
			pinning
			Messages  []message   `json:"messages"`
			System    promptWords `json:"system"`
			MaxTokens *int        `json:"max_tokens"`
			Stream    bool        `json:"stream"`
		}
		if bad := decodeInto(body, &req); bad != nil {
			return genRequest{}, bad
		}
		if len(req.Messages) == 0 {
			return genRequest{}, &badRequest{"messages", "messages: at least one message is required"}
		}
		if req.MaxTokens == nil {
			return genRequest{}, &badRequest{"max_tokens", "max_tokens: Field required"}
		}
		prompt := req.System
		for _, m := range req.Messages {
			prompt += m.Content
		}
		l, bad := genLimits(int(prompt), *req.MaxTokens, "max_tokens", req.pinning)
		return genRequest{lim: l, stream: req.Stream, ignoreEOS: req.IgnoreEOS}, bad
	},
	start: func(s *Server, j *job) []sseEvent {
		return []sseEvent{
			{"message_start", map[string]any{"type": "message_start", "message": map[string]any{
				"id": j.id, "type": "message", "role": "assistant", "content": []any{}, "model": s.cfg.Model,
				"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": j.promptTokens, "output_tokens": 1},
			}}},
			{"content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]string{"type": "text", "text": ""}}},
			{"ping", map[string]string{"type": "ping"}},
		}
	},
	delta: func(_ *job, text string) []sseEvent {
		return []sseEvent{{"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "text_delta", "text": text}}}}
	},
	end: func(_ *Server, j *job, _ string) []sseEvent {
		return []sseEvent{
			{"content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}},
			{"message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": anthropicStop(j), "stop_sequence": nil},
				"usage": map[string]int{"output_tokens": j.gen.tokens}}},
			{"message_stop", map[string]string{"type": "message_stop"}},
		}
	},
	reply: func(j *job, text string) any {
		return map[string]any{
			"id": j.id, "type": "message", "role": "assistant",
			"content":     []any{map[string]string{"type": "text", "text": text}},
			"stop_reason": anthropicStop(j), "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": j.promptTokens, "output_tokens": j.gen.tokens},
		}
	},
}

func anthropicStop(j *job) string {
	if j.finish == "length" {
		return "max_tokens"
	}
	return "end_turn"
}

// tgiAPI is Hugging Face TGI's native API: POST /generate_stream streams
// one event per token, the last with the generated text and, when asked
// for, details with the token count; POST /generate answers at once.
func tgiAPI(stream bool) *api {
	return &api{
		name:     "tgi",
		perToken: true,
		parse: func(_ *http.Request, body []byte, defaultMax int) (genRequest, *badRequest) {
			var req struct {
				Inputs     *promptWords `json:"inputs"`
				Parameters struct {
					pinning
					MaxNewTokens *int `json:"max_new_tokens"`
					Details      bool `json:"details"`
				} `json:"parameters"`
			}
			if bad := decodeInto(body, &req); bad != nil {
				return genRequest{}, bad
			}
			if req.Inputs == nil {
				return genRequest{}, &badRequest{"inputs", "Input validation error: `inputs` is required"}
			}
			p := req.Parameters
			l, bad := genLimits(int(*req.Inputs), orDefault(p.MaxNewTokens, defaultMax), "max_new_tokens", p.pinning)
			// includeUsage carries details: TGI's token count comes with them.
			return genRequest{lim: l, stream: stream, includeUsage: p.Details, ignoreEOS: p.IgnoreEOS}, bad
		},
		start: func(*Server, *job) []sseEvent { return nil },
		delta: func(j *job, text string) []sseEvent {
			e := map[string]any{
				"index": j.gen.emitted, "token": map[string]any{"id": j.gen.emitted, "text": text, "logprob": -0.5, "special": false},
				"generated_text": nil, "details": nil,
			}
			return []sseEvent{{"", e}}
		},
		end: func(_ *Server, j *job, text string) []sseEvent {
			// The last token event ends the stream: send the text and details
			// in an event of its own, as TGI does after the EOS token.
			e := map[string]any{
				"index": j.gen.tokens + 1, "token": map[string]any{"id": 0, "text": "</s>", "logprob": 0, "special": true},
				"generated_text": strings.TrimSpace(text), "details": tgiDetails(j),
			}
			return []sseEvent{{"", e}}
		},
		reply: func(j *job, text string) any {
			return map[string]any{"generated_text": text, "details": tgiDetails(j)}
		},
	}
}

func tgiDetails(j *job) any {
	if !j.includeUsage {
		return nil
	}
	reason := "eos_token"
	if j.finish == "length" {
		reason = "length"
	}
	return map[string]any{"finish_reason": reason, "generated_tokens": j.gen.tokens, "seed": nil}
}
