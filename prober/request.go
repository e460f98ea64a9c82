package prober

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
)

// Request is one prepared request: everything needed to send it, built ahead of
// its send time so that building never delays sending.
type Request struct {
	Seq       uint64
	Scheduled time.Time
	// ID is the request's identity, sent in its ID headers.
	ID   record.RequestID
	Body []byte
	// Session is the multi-turn session the request belongs to, sent in the
	// target's session header; empty for single requests.
	Session string
	// URL is which of the target's base URLs the request goes to (see
	// Target.ForURL): the probe gives each session the next in turn.
	URL int
	// InputTokens is the prompt length: the tokenizer's count of the prompt
	// text when the target has one, else the length the dataset intended.
	// Used when the server reports no usage.
	InputTokens int
	// PinnedOutputTokens is the output length the request pins (0 = not pinned).
	PinnedOutputTokens int
	// Images is the number of images the request carries (its history's
	// too), and AudioSeconds the duration of its first audio clip (0: none).
	Images       int
	AudioSeconds float64
	// Cancel makes the client cancel the request CancelAfter after it was
	// written (0: as soon as it is written), as a user who gives up does.
	Cancel      bool
	CancelAfter time.Duration
	// Prefill, when set, is the prefill slot the request holds until its
	// first token (see PrefillSlot); the executor calls FirstToken then.
	Prefill PrefillSlot
	hold    prefillHold
}

// NewRequest builds the body for prompt p on target t, merging params (which
// validation keeps away from the keys set here).
func NewRequest(t *Target, p dataset.Prompt, params map[string]any) (*Request, error) {
	var b []byte
	switch body := t.codec.body(t, p, params).(type) {
	case encodedBody:
		b = body
	default:
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("encoding request body: %w", err)
		}
	}
	req := &Request{Body: b, Session: p.Session, InputTokens: p.InputTokens}
	req.Images = imagesSent(p)
	if p.Media != nil {
		req.AudioSeconds = p.Media.AudioSeconds()
	}
	if t.codec.generates() {
		req.PinnedOutputTokens = pinned(p.OutputTokens, params)
	}
	if t.tok != nil {
		req.InputTokens = t.tok.Count(promptText(p))
		for _, s := range p.Passages {
			req.InputTokens += t.tok.Count(s)
		}
	}
	return req, nil
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

// imagesSent is the images of p's messages, history included, as AIPerf
// counts a request's num_images: every image part of its body.
func imagesSent(p dataset.Prompt) int {
	n := 0
	for _, m := range messages(p) {
		if m.media != nil {
			n += len(m.media.Images)
		}
	}
	return n
}
