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
	if p.Media != nil {
		body["messages"] = withMedia(messages(p), p.Media)
	} else {
		body["messages"] = messages(p)
	}
	return body
}

// withMedia is msgs with media's images and audio after the last message's
// text, as content parts in AIPerf's order: text, images, audio.
func withMedia(msgs []chatMessage, media *dataset.Media) []any {
	out := make([]any, len(msgs))
	for i, m := range msgs {
		out[i] = m
	}
	last := msgs[len(msgs)-1]
	parts := []contentPart{{Type: "text", Text: last.Content}}
	for _, url := range media.Images {
		parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{URL: url}})
	}
	for _, c := range media.Audio {
		parts = append(parts, contentPart{Type: "input_audio", InputAudio: &inputAudio{Data: c.Data, Format: c.Format}})
	}
	out[len(out)-1] = partsMessage{Role: last.Role, Content: parts}
	return out
}

// partsMessage is a chat message whose content is a list of parts.
type partsMessage struct {
	Role    string        `json:"role"`
	Content []contentPart `json:"content"`
}

// contentPart is one part of a message's content, in OpenAI's shape.
type contentPart struct {
	Type       string      `json:"type"`
	Text       string      `json:"text,omitempty"`
	ImageURL   *imageURL   `json:"image_url,omitempty"`
	InputAudio *inputAudio `json:"input_audio,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type inputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
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
