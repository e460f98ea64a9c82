package simulator

import (
	"context"
	"net/http"
)

type usage struct {
	PromptTokens            int           `json:"prompt_tokens"`
	CompletionTokens        int           `json:"completion_tokens"`
	TotalTokens             int           `json:"total_tokens"`
	CompletionTokensDetails *usageDetails `json:"completion_tokens_details,omitempty"`
}

type usageDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
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
	Role             string `json:"role"`
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content,omitempty"`
}

type textChoice struct {
	Index            int       `json:"index"`
	Text             string    `json:"text"`
	ReasoningContent string    `json:"reasoning_content,omitempty"`
	Logprobs         *struct{} `json:"logprobs"`
	FinishReason     string    `json:"finish_reason"`
}

// respond waits as long as the whole stream would have taken and answers
// with one JSON body, as a server does for a request without stream.
func (s *Server) respond(ctx context.Context, w http.ResponseWriter, j *job) error {
	g := &j.gen
	var reasoning []byte
	for g.reasoning() {
		reasoning, _ = g.appendChunk(reasoning)
	}
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
	var choice any = textChoice{Text: string(text), ReasoningContent: string(reasoning), FinishReason: j.finish}
	if j.ep.chat {
		choice = chatChoice{Message: chatMessageOut{Role: "assistant", Content: string(text), ReasoningContent: string(reasoning)}, FinishReason: j.finish}
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
	u := &usage{PromptTokens: j.promptTokens, CompletionTokens: j.gen.tokens, TotalTokens: j.promptTokens + j.gen.tokens}
	if j.gen.reasoningTokens > 0 {
		u.CompletionTokensDetails = &usageDetails{ReasoningTokens: j.gen.reasoningTokens}
	}
	return u
}
