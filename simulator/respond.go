package simulator

import (
	"context"
	"net/http"
)

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type completionResponse struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []any  `json:"choices"`
	Usage   *usage `json:"usage,omitempty"`
}

type chatChoice struct {
	Index        int            `json:"index"`
	Message      chatMessageOut `json:"message"`
	Logprobs     *struct{}      `json:"logprobs"`
	FinishReason string         `json:"finish_reason"`
}

type chatMessageOut struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type textChoice struct {
	Index        int       `json:"index"`
	Text         string    `json:"text"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason string    `json:"finish_reason"`
}

// respond waits as long as the whole stream would have taken and answers
// with one JSON body, as a server does for a request without stream.
func (s *Server) respond(ctx context.Context, w http.ResponseWriter, j *job) error {
	g := &j.gen
	text := make([]byte, 0, g.tokens*6)
	for g.more() {
		text, _ = g.appendChunk(text)
	}
	var c clock
	defer c.stop()
	if err := c.sleepUntil(ctx, g.finishDue()); err != nil {
		return err
	}
	if j.api != nil {
		writeJSON(w, http.StatusOK, j.api.reply(j, string(text)))
		return nil
	}
	var choice any = textChoice{Text: string(text), FinishReason: j.finish}
	if j.ep.chat {
		choice = chatChoice{Message: chatMessageOut{Role: "assistant", Content: string(text)}, FinishReason: j.finish}
	}
	writeJSON(w, http.StatusOK, completionResponse{
		ID:      j.id,
		Object:  j.ep.object,
		Created: j.created,
		Model:   s.cfg.Model,
		Choices: []any{choice},
		Usage:   s.usage(j),
	})
	return nil
}

// usage is j's usage object, nil when the server is set to omit it.
func (s *Server) usage(j *job) *usage {
	if s.cfg.OmitUsage {
		return nil
	}
	return &usage{PromptTokens: j.promptTokens, CompletionTokens: j.gen.tokens, TotalTokens: j.promptTokens + j.gen.tokens}
}
