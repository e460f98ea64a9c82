package prober

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
)

// Request is one prepared request: everything needed to send it, built ahead of
// its send time so that building never delays sending.
type Request struct {
	Seq       uint64
	Scheduled time.Time
	Body      []byte
	// InputTokens is the prompt length the dataset intended; used when the
	// server reports no usage.
	InputTokens int
	// PinnedOutputTokens is the output length the request pins (0 = not pinned).
	PinnedOutputTokens int
}

// NewRequest builds the body for prompt p on target t, merging params (which
// validation keeps away from the keys set here).
func NewRequest(t *Target, p dataset.Prompt, params map[string]any) (*Request, error) {
	body := make(map[string]any, len(params)+5)
	maps.Copy(body, params)
	body["model"] = t.Model
	body["max_tokens"] = p.OutputTokens
	if t.stream {
		body["stream"] = true
		// Ask for usage so token counts come from the server, not from chunk counts.
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	t.codec.addPrompt(body, p.Text)
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding request body: %w", err)
	}
	return &Request{Body: b, InputTokens: p.InputTokens, PinnedOutputTokens: pinned(p.OutputTokens, params)}, nil
}

// pinned returns the output length a request forces: max_tokens when the server
// is told to ignore EOS or to generate at least max_tokens.
func pinned(maxTokens int, params map[string]any) int {
	if v, ok := params["ignore_eos"].(bool); ok && v {
		return maxTokens
	}
	if minTokens, ok := asInt(params["min_tokens"]); ok && minTokens >= maxTokens {
		return maxTokens
	}
	return 0
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case uint64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}
