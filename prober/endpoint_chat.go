package prober

import (
	"encoding/json"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/sse"
	"github.com/inferprobe/inferprobe/scenarios"
)

// EndpointChat is OpenAI's chat completions API.
const EndpointChat = "chat"

func init() {
	registerEndpoint(scenarios.EndpointType{
		Name: EndpointChat, Path: "/chat/completions", Streams: true, MaxTokensField: true,
		Description: "OpenAI chat completions, as vLLM, SGLang, TensorRT-LLM, llama.cpp and NIM serve them",
	}, statelessCodec(chatCodec{}))
}

type chatCodec struct{ chatLike }

func (chatCodec) body(t *Target, p dataset.Prompt, params map[string]any) any {
	body := withParams(params, 5)
	body["model"] = t.Model
	if p.OutputTokens > 0 {
		body[t.maxTokensField] = p.OutputTokens
	}
	openAIStream(t, body)
	body["messages"] = messages(p)
	return body
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
		// Completions carry reasoning on the choice.
		ReasoningContent string `json:"reasoning_content"`
		Reasoning        string `json:"reasoning"`
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
		*text = append(*text, c.Message.ReasoningContent+c.Message.Reasoning+c.Message.Content+c.ReasoningContent+c.Reasoning+c.Text...)
	}
	return nil
}
