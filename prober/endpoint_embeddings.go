package prober

import (
	"encoding/json"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

// EndpointEmbeddings is OpenAI's embeddings API.
const EndpointEmbeddings = "embeddings"

func init() {
	registerEndpoint(scenarios.EndpointType{
		Name: EndpointEmbeddings, Path: "/embeddings",
		Description: "OpenAI embeddings; latency and input tokens only",
	}, statelessCodec(embeddingsCodec{}))
}

// embeddingsCodec speaks OpenAI embeddings: one reply, input tokens only.
type embeddingsCodec struct{ notStreamed }

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
