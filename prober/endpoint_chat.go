package prober

import (
	"encoding/json"
	"slices"

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
	msgs := messages(p)
	if slices.ContainsFunc(msgs, func(m chatMessage) bool { return m.media != nil }) {
		return withMedia(body, msgs)
	}
	body["messages"] = msgs
	return body
}

// withMedia is body with msgs, each message's images and audio after its
// text as content parts in AIPerf's order (text, images, audio), and
// messages first, as AIPerf writes them. The parts are encoded once per
// media set, and spliced in, not encoded again for each request.
func withMedia(body map[string]any, msgs []chatMessage) encodedBody {
	rest, _ := json.Marshal(body) // strings, numbers and maps of them always encode
	b := make(encodedBody, 0, len(rest)+256)
	b = append(b, `{"messages":[`...)
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		if m.media == nil {
			enc, _ := json.Marshal(m)
			b = append(b, enc...)
			continue
		}
		role, _ := json.Marshal(m.Role)
		text, _ := json.Marshal(contentPart{Type: "text", Text: m.Content})
		b = append(b, `{"role":`...)
		b = append(b, role...)
		b = append(b, `,"content":[`...)
		b = append(append(b, text...), m.media.Encoded(encodeMedia)...)
		b = append(b, "]}"...)
	}
	b = append(b, ']')
	if len(rest) > 2 { // not {}
		b = append(append(b, ','), rest[1:]...)
	} else {
		b = append(b, '}')
	}
	return b
}

// encodeMedia is the content parts of m, each after a comma.
func encodeMedia(m *dataset.Media) []byte {
	var b []byte
	add := func(p contentPart) {
		enc, _ := json.Marshal(p) // strings always encode
		b = append(append(b, ','), enc...)
	}
	for _, url := range m.Images {
		add(contentPart{Type: "image_url", ImageURL: &imageURL{URL: url}})
	}
	for _, c := range m.Audio {
		add(contentPart{Type: "input_audio", InputAudio: &inputAudio{Data: c.Data, Format: c.Format}})
	}
	return b
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
