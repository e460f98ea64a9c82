package prober

import (
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

// EndpointCompletions is OpenAI's text completions API.
const EndpointCompletions = "completions"

func init() {
	registerEndpoint(scenarios.EndpointType{
		Name: EndpointCompletions, Path: "/completions", Streams: true,
		Description: "OpenAI text completions",
	}, statelessCodec(completionsCodec{}))
}

// completionsCodec reads replies as chat's (endpoint_chat.go), whose shape
// they share.
type completionsCodec struct{ chatLike }

func (completionsCodec) body(t *Target, p dataset.Prompt, params map[string]any) any {
	body := withParams(params, 5)
	body["model"] = t.Model
	if p.OutputTokens > 0 {
		body["max_tokens"] = p.OutputTokens
	}
	openAIStream(t, body)
	body["prompt"] = promptText(p)
	return body
}
