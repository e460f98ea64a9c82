package prober

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/sse"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Each endpoint type has a file of its own, endpoint_NAME.go, that declares
// its description and its codec and registers both in an init function.

// codec is what differs between endpoint types beyond their description:
// what to send, and how to read the answer.
type codec interface {
	// generates reports whether the API generates output tokens (embeddings
	// and rankings do not).
	generates() bool
	// body is the request body for prompt p, to be encoded as JSON, or
	// one encoded already (encodedBody).
	body(t *Target, p dataset.Prompt, params map[string]any) any
	// event decodes one streamed event into info and, when st.wantText,
	// appends the event's generated text (output and reasoning) to st.text.
	event(ev sse.Event, st *eventState) (chunkInfo, error)
	// reply decodes a whole non-streamed reply into info and appends its
	// generated text to *text.
	reply(data []byte, info *chunkInfo, text *[]byte) error
}

// encodedBody is a body a codec encoded itself: sent as it is, since
// encoding/json would scan a RawMessage of megabytes again.
type encodedBody []byte

// newCodecFunc makes the codec of a target of one endpoint type.
type newCodecFunc func(*scenarios.Target) (codec, error)

// codecs holds the codec of each registered endpoint type, by name.
var codecs = map[string]newCodecFunc{}

// registerEndpoint registers an endpoint type's description, for scenarios
// to validate against, and its codec.
func registerEndpoint(desc scenarios.EndpointType, newCodec newCodecFunc) {
	scenarios.RegisterEndpoint(desc)
	codecs[desc.Name] = newCodec
}

// statelessCodec is the newCodecFunc of a codec that keeps nothing of the
// target.
func statelessCodec(c codec) newCodecFunc {
	return func(*scenarios.Target) (codec, error) { return c, nil }
}

// lookupEndpoint returns the description and a codec of t's endpoint.
func lookupEndpoint(t *scenarios.Target) (scenarios.EndpointType, codec, error) {
	desc, ok := scenarios.LookupEndpoint(t.Endpoint)
	newCodec := codecs[t.Endpoint]
	if !ok || newCodec == nil {
		return desc, nil, fmt.Errorf("endpoint %q is not supported; use one of %s", t.Endpoint, strings.Join(scenarios.EndpointNames(), ", "))
	}
	c, err := newCodec(t)
	return desc, c, err
}

// eventState is a stream's decoding state, kept across its events.
type eventState struct {
	fb       chunk // for decodeChunk's fallback; kept for its choices' backing array
	wantText bool
	text     []byte
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
	// media are sent after Content as content parts (chat only).
	media *dataset.Media
}

// messages is p as chat messages: its history when it has one, else its
// text as one user message.
func messages(p dataset.Prompt) []chatMessage {
	if len(p.Messages) == 0 {
		return []chatMessage{{Role: "user", Content: p.Text, media: p.Media}}
	}
	out := make([]chatMessage, len(p.Messages))
	for i, m := range p.Messages {
		out[i] = chatMessage{Role: m.Role, Content: m.Content, media: m.Media}
	}
	out[len(out)-1].media = p.Media
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

var errNotStreamed = errors.New("this endpoint does not stream")

// notStreamed is the part of a codec for APIs that answer with one body and
// generate no tokens (embeddings, rankings).
type notStreamed struct{}

func (notStreamed) generates() bool { return false }
func (notStreamed) event(sse.Event, *eventState) (chunkInfo, error) {
	return chunkInfo{}, errNotStreamed
}
