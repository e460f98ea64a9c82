package prober

import (
	"encoding/json"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/sse"
	"github.com/inferprobe/inferprobe/scenarios"
)

// EndpointResponses is OpenAI's Responses API.
const EndpointResponses = "responses"

func init() {
	registerEndpoint(scenarios.EndpointType{
		Name: EndpointResponses, Path: "/responses", Streams: true,
		Description: "OpenAI Responses API",
	}, statelessCodec(responsesCodec{}))
}

// responsesCodec speaks OpenAI's Responses API: typed events, usage in the
// final response.completed (or response.incomplete, when max_output_tokens
// cut the output, as a pinned length does).
type responsesCodec struct{}

func (responsesCodec) generates() bool { return true }
func (responsesCodec) body(t *Target, p dataset.Prompt, params map[string]any) any {
	body := withParams(params, 4)
	body["model"] = t.Model
	if p.OutputTokens > 0 {
		body["max_output_tokens"] = p.OutputTokens
	}
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
