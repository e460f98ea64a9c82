package prober

import (
	"errors"
	"fmt"
	"strings"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/sse"
	"github.com/inferprobe/inferprobe/scenarios"
)

// codec is what differs between endpoint types: where to send, what to
// send, and how to read the answer.
type codec interface {
	// path is appended to the target's url.
	path(stream bool) string
	// streams reports whether the API streams at all.
	streams() bool
	// generates reports whether the API generates output tokens (embeddings
	// and rankings do not).
	generates() bool
	// body is the request body for prompt p, to be encoded as JSON.
	body(t *Target, p dataset.Prompt, params map[string]any) any
	// event decodes one streamed event into info and, when st.wantText,
	// appends the event's generated text (output and reasoning) to st.text.
	event(ev sse.Event, st *eventState) (chunkInfo, error)
	// reply decodes a whole non-streamed reply into info and appends its
	// generated text to *text.
	reply(data []byte, info *chunkInfo, text *[]byte) error
}

// eventState is a stream's decoding state, kept across its events.
type eventState struct {
	fb       chunk // for decodeChunk's fallback; kept for its choices' backing array
	wantText bool
	text     []byte
}

// newCodec returns the codec of t's endpoint.
func newCodec(t *scenarios.Target) (codec, error) {
	switch t.Endpoint {
	case scenarios.EndpointChat:
		return chatCodec{}, nil
	case scenarios.EndpointCompletions:
		return completionsCodec{}, nil
	case scenarios.EndpointResponses:
		return responsesCodec{}, nil
	case scenarios.EndpointEmbeddings:
		return embeddingsCodec{}, nil
	case scenarios.EndpointNIMRanking:
		return rankingCodec{api: nimRanking}, nil
	case scenarios.EndpointCohereRerank:
		return rankingCodec{api: cohereRerank}, nil
	case scenarios.EndpointTEIRerank:
		return rankingCodec{api: teiRerank}, nil
	case scenarios.EndpointMessages:
		return messagesCodec{}, nil
	case scenarios.EndpointTGI:
		return tgiCodec{}, nil
	case scenarios.EndpointTemplate:
		if t.Template == nil {
			return nil, errors.New("endpoint template needs a template")
		}
		return newTemplateCodec(t.Template), nil
	}
	return nil, fmt.Errorf("endpoint %q is not supported; use one of %s", t.Endpoint, strings.Join(scenarios.EndpointNames(), ", "))
}

// usage is the OpenAI usage object; the other APIs' token counts are
// mapped onto it.
type usage struct {
	PromptTokens            int `json:"prompt_tokens"`
	CompletionTokens        int `json:"completion_tokens"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// chunkInfo is what the prober takes from one streamed chunk.
type chunkInfo struct {
	output    bool // some choice carries generated text
	reasoning bool // some choice carries reasoning text
	finished  bool // some choice has a non-empty finish_reason: the stream may end
	done      bool // the API's last event (not chat's [DONE]): stop reading
	hasUsage  bool
	usage     usage
	// errValue is the raw "error" value, nil when absent; see hasError.
	errValue []byte
}
