package prober

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/sse"
	"github.com/inferprobe/inferprobe/scenarios"
)

// EndpointMessages is Anthropic's Messages API.
const EndpointMessages = "messages"

// anthropicVersion is the API version sent unless the target's headers name
// another.
const anthropicVersion = "2023-06-01"

func init() {
	registerEndpoint(scenarios.EndpointType{
		Name: EndpointMessages, Path: "/messages", Streams: true,
		APIKeyHeader: "x-api-key", Headers: map[string]string{"Anthropic-Version": anthropicVersion},
		Description: "Anthropic Messages, key sent as x-api-key, url https://api.anthropic.com/v1",
	}, statelessCodec(messagesCodec{}))
}

// messagesCodec speaks Anthropic's Messages API: system prompts go in their
// own field, the stream is typed events (message_start with the input
// usage, content_block_delta with text or thinking, message_delta with the
// output usage, message_stop), and there is no [DONE].
type messagesCodec struct{}

// messagesMaxTokens is max_tokens for a prompt that asks for no limit: the
// Messages API requires one, and this is AIPerf's (the API's own default).
const messagesMaxTokens = 1024

func (messagesCodec) generates() bool { return true }

func (messagesCodec) body(t *Target, p dataset.Prompt, params map[string]any) any {
	body := withParams(params, 5)
	body["model"] = t.Model
	body["max_tokens"] = cmp.Or(p.OutputTokens, messagesMaxTokens)
	if t.stream {
		body["stream"] = true
	}
	var system []string
	msgs := messages(p)
	turns := msgs[:0:0]
	for _, m := range msgs {
		if m.Role == "system" {
			system = append(system, m.Content)
		} else {
			turns = append(turns, m)
		}
	}
	if len(system) > 0 {
		body["system"] = strings.Join(system, "\n")
	}
	body["messages"] = turns
	return body
}

// anthropicUsage is the Messages API's usage object.
type anthropicUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

func (u *anthropicUsage) into(info *chunkInfo) {
	info.hasUsage = true
	info.usage.PromptTokens, info.usage.CompletionTokens = u.InputTokens, u.OutputTokens
}

type anthropicEvent struct {
	Type  string `json:"type"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Message *struct {
		Usage *anthropicUsage `json:"usage"`
	} `json:"message"`
	Usage *anthropicUsage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (messagesCodec) event(ev sse.Event, st *eventState) (chunkInfo, error) {
	var info chunkInfo
	var e anthropicEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return info, err
	}
	switch e.Type {
	case "message_start":
		if e.Message != nil && e.Message.Usage != nil {
			e.Message.Usage.into(&info)
		}
	case "content_block_delta":
		info.output = e.Delta.Text != "" || e.Delta.PartialJSON != ""
		info.reasoning = e.Delta.Thinking != ""
		if st.wantText {
			st.text = append(st.text, e.Delta.Thinking+e.Delta.Text+e.Delta.PartialJSON...)
		}
	case "message_delta":
		if e.Usage != nil {
			e.Usage.into(&info) // output_tokens here is the final count
		}
		info.finished = e.Delta.StopReason != ""
	case "message_stop":
		info.finished, info.done = true, true
	case "error":
		info.errValue = e.Error
		if !hasError(info.errValue) {
			info.errValue = ev.Data
		}
	}
	return info, nil
}

func (messagesCodec) reply(data []byte, info *chunkInfo, text *[]byte) error {
	var r struct {
		Content []struct {
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		} `json:"content"`
		Usage *anthropicUsage `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	info.errValue = r.Error
	if r.Usage != nil {
		r.Usage.into(info)
	}
	for _, c := range r.Content {
		*text = append(*text, c.Thinking+c.Text...)
	}
	return nil
}
