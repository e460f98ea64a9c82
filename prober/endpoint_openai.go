package prober

import (
	"encoding/json"
	"maps"
	"strings"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/sse"
)

// withParams returns a body map holding params, with room for n more keys.
func withParams(params map[string]any, n int) map[string]any {
	body := make(map[string]any, len(params)+n)
	maps.Copy(body, params)
	return body
}

// chatMessage is one message of a chat-like request.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// messages is p as chat messages: its history when it has one, else its
// text as one user message.
func messages(p dataset.Prompt) []chatMessage {
	if len(p.Messages) == 0 {
		return []chatMessage{{Role: "user", Content: p.Text}}
	}
	out := make([]chatMessage, len(p.Messages))
	for i, m := range p.Messages {
		out[i] = chatMessage{Role: m.Role, Content: m.Content}
	}
	return out
}

// promptText is p as one text: its text, else its messages' contents, one
// per line.
func promptText(p dataset.Prompt) string {
	if p.Text != "" || len(p.Messages) == 0 {
		return p.Text
	}
	parts := make([]string, len(p.Messages))
	for i, m := range p.Messages {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n")
}

// openAIStream adds what an OpenAI streaming request needs: the stream flag
// and a request for usage, so that token counts come from the server.
func openAIStream(t *Target, body map[string]any) {
	if t.stream {
		body["stream"] = true
		body["stream_options"] = map[string]any{"include_usage": true}
	}
}

// chatLike decodes chat and completions replies, which share one shape.
type chatLike struct{}

func (chatLike) streams() bool   { return true }
func (chatLike) generates() bool { return true }

func (chatLike) event(ev sse.Event, st *eventState) (chunkInfo, error) {
	var info chunkInfo
	if err := decodeChunk(ev.Data, &st.fb, &info); err != nil {
		return info, err
	}
	if st.wantText && (info.output || info.reasoning) {
		// Only targets with a tokenizer need the text itself: the scanner
		// does not unescape, so decode this chunk again in full.
		st.fb.reset()
		if err := json.Unmarshal(ev.Data, &st.fb); err != nil {
			return info, err
		}
		st.text = st.fb.appendText(st.text)
	}
	return info, nil
}

// response is a non-streamed chat or completions reply.
type response struct {
	Choices []struct {
		Message struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"message"`
		Text string `json:"text"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (chatLike) reply(data []byte, info *chunkInfo, text *[]byte) error {
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	info.errValue = r.Error
	if r.Usage != nil {
		info.hasUsage, info.usage = true, *r.Usage
	}
	for _, c := range r.Choices {
		*text = append(*text, c.Message.ReasoningContent+c.Message.Reasoning+c.Message.Content+c.Text...)
	}
	return nil
}

type chatCodec struct{ chatLike }

func (chatCodec) path(bool) string { return "/chat/completions" }
func (chatCodec) body(t *Target, p dataset.Prompt, params map[string]any) any {
	body := withParams(params, 5)
	body["model"] = t.Model
	body[t.maxTokensField] = p.OutputTokens
	openAIStream(t, body)
	body["messages"] = messages(p)
	return body
}

type completionsCodec struct{ chatLike }

func (completionsCodec) path(bool) string { return "/completions" }
func (completionsCodec) body(t *Target, p dataset.Prompt, params map[string]any) any {
	body := withParams(params, 5)
	body["model"] = t.Model
	body["max_tokens"] = p.OutputTokens
	openAIStream(t, body)
	body["prompt"] = promptText(p)
	return body
}

// responsesCodec speaks OpenAI's Responses API: typed events, usage in the
// final response.completed (or response.incomplete, when max_output_tokens
// cut the output, as a pinned length does).
type responsesCodec struct{}

func (responsesCodec) path(bool) string { return "/responses" }
func (responsesCodec) streams() bool    { return true }
func (responsesCodec) generates() bool  { return true }
func (responsesCodec) body(t *Target, p dataset.Prompt, params map[string]any) any {
	body := withParams(params, 4)
	body["model"] = t.Model
	body["max_output_tokens"] = p.OutputTokens
	if t.stream {
		body["stream"] = true
	}
	if len(p.Messages) > 0 {
		body["input"] = messages(p)
	} else {
		body["input"] = p.Text
	}
	return body
}

// responsesUsage is the Responses API's usage object.
type responsesUsage struct {
	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func (u *responsesUsage) into(info *chunkInfo) {
	info.hasUsage = true
	info.usage.PromptTokens, info.usage.CompletionTokens = u.InputTokens, u.OutputTokens
	info.usage.CompletionTokensDetails.ReasoningTokens = u.OutputTokensDetails.ReasoningTokens
}

// responsesObject is a whole response: the reply, or inside the final event.
type responsesObject struct {
	Status string `json:"status"`
	Output []struct {
		Type    string `json:"type"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Summary []struct {
			Text string `json:"text"`
		} `json:"summary"`
	} `json:"output"`
	Usage *responsesUsage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type responsesEvent struct {
	Type     string           `json:"type"`
	Delta    string           `json:"delta"`
	Response *responsesObject `json:"response"`
	Message  string           `json:"message"` // of an error event
}

func (responsesCodec) event(ev sse.Event, st *eventState) (chunkInfo, error) {
	var info chunkInfo
	var e responsesEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return info, err
	}
	switch e.Type {
	case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta":
		info.output = e.Delta != ""
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		info.reasoning = e.Delta != ""
	case "response.completed", "response.incomplete":
		info.finished, info.done = true, true
	case "response.failed":
		info.errValue = []byte(`"response.failed"`)
	case "error":
		info.errValue = ev.Data
	}
	if r := e.Response; r != nil {
		if r.Usage != nil && info.done {
			r.Usage.into(&info)
		}
		if hasError(r.Error) {
			info.errValue = r.Error
		}
	}
	if st.wantText && (info.output || info.reasoning) {
		st.text = append(st.text, e.Delta...)
	}
	return info, nil
}

func (responsesCodec) reply(data []byte, info *chunkInfo, text *[]byte) error {
	var r responsesObject
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	info.errValue = r.Error
	if r.Usage != nil {
		r.Usage.into(info)
	}
	for _, o := range r.Output {
		for _, s := range o.Summary {
			*text = append(*text, s.Text...)
		}
		for _, c := range o.Content {
			*text = append(*text, c.Text...)
		}
	}
	return nil
}

// embeddingsCodec speaks OpenAI embeddings: one reply, input tokens only.
type embeddingsCodec struct{ notStreamed }

func (embeddingsCodec) path(bool) string { return "/embeddings" }
func (embeddingsCodec) body(t *Target, p dataset.Prompt, params map[string]any) any {
	body := withParams(params, 3)
	body["model"] = t.Model
	body["input"] = promptText(p)
	if _, ok := body["encoding_format"]; !ok {
		body["encoding_format"] = "float"
	}
	return body
}

func (embeddingsCodec) reply(data []byte, info *chunkInfo, _ *[]byte) error {
	var r struct {
		Usage *struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	info.errValue = r.Error
	if r.Usage != nil {
		info.hasUsage, info.usage.PromptTokens = true, r.Usage.PromptTokens
	}
	return nil
}

// notStreamed is the part of a codec for APIs that answer with one body and
// generate no tokens (embeddings, rankings).
type notStreamed struct{}

func (notStreamed) streams() bool   { return false }
func (notStreamed) generates() bool { return false }
func (notStreamed) event(sse.Event, *eventState) (chunkInfo, error) {
	return chunkInfo{}, errNotStreamed
}
