package prober

import (
	"encoding/json"
)

// codec is what differs between endpoint types: where to send, how the prompt
// goes in the body, and how to read the answer.
type codec interface {
	path() string
	addPrompt(body map[string]any, text string)
}

var codecs = map[string]codec{
	"chat":        chatCodec{},
	"completions": completionsCodec{},
}

type chatCodec struct{}

func (chatCodec) path() string { return "/chat/completions" }
func (chatCodec) addPrompt(body map[string]any, text string) {
	body["messages"] = []map[string]string{{"role": "user", "content": text}}
}

type completionsCodec struct{}

func (completionsCodec) path() string { return "/completions" }
func (completionsCodec) addPrompt(body map[string]any, text string) {
	body["prompt"] = text
}

// usage is the OpenAI usage object.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// chunk is one streamed event of either chat or completions; decoding both into
// one shape keeps a single parse on the hot path.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
		Text         string  `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// reset clears c for reuse while keeping its choices' backing array.
func (c *chunk) reset() {
	// encoding/json decodes into existing elements without zeroing them, so a
	// field absent from this chunk would otherwise keep the last chunk's value.
	clear(c.Choices[:cap(c.Choices)])
	c.Choices = c.Choices[:0]
	c.Usage = nil
	c.Error = nil
}

// content reports whether the chunk carries generated output text and reasoning text.
func (c *chunk) content() (output, reasoning bool) {
	for i := range c.Choices {
		ch := &c.Choices[i]
		output = output || ch.Delta.Content != "" || ch.Text != ""
		reasoning = reasoning || ch.Delta.ReasoningContent != "" || ch.Delta.Reasoning != ""
	}
	return output, reasoning
}

func (c *chunk) finished() bool {
	for i := range c.Choices {
		if c.Choices[i].FinishReason != nil && *c.Choices[i].FinishReason != "" {
			return true
		}
	}
	return false
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
