package simulator

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/inferprobe/inferprobe/mp3"
)

// request is the part of a chat or completions body the simulator acts
// on. Other parameters (temperature, n, ...) are accepted and ignored.
type request struct {
	Model         string       `json:"model"`
	Messages      []message    `json:"messages"` // chat
	Prompt        *promptWords `json:"prompt"`   // completions
	Stream        bool         `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
	MinTokens           *int `json:"min_tokens"`
	IgnoreEOS           bool `json:"ignore_eos"`
}

type message struct {
	Content promptWords
	media
}

// media is what a message's content parts carry besides text.
type media struct {
	images       int
	audioSeconds float64
}

func (m *message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if len(raw.Content) == 0 {
		return nil // nothing to count
	}
	if err := m.Content.UnmarshalJSON(raw.Content); err != nil {
		return err
	}
	// Decoding the parts again costs a copy of each image: only when some
	// are there.
	if raw.Content[0] != '[' || !bytes.Contains(raw.Content, []byte(`"image_url"`)) && !bytes.Contains(raw.Content, []byte(`"input_audio"`)) {
		return nil
	}
	var parts []struct {
		Type       string `json:"type"`
		InputAudio struct {
			Data   string `json:"data"`
			Format string `json:"format"`
		} `json:"input_audio"`
	}
	if err := json.Unmarshal(raw.Content, &parts); err != nil {
		return err
	}
	for _, p := range parts {
		switch p.Type {
		case "image_url":
			m.images++
		case "input_audio":
			switch p.InputAudio.Format {
			case "wav":
				m.audioSeconds += wavSeconds(p.InputAudio.Data)
			case "mp3":
				m.audioSeconds += mp3Seconds(p.InputAudio.Data)
			}
		}
	}
	return nil
}

// wavSeconds is the duration of a base64 WAV file: the bytes past its
// 44-byte header over its byte rate; 0 when it is not one.
func wavSeconds(b64 string) float64 {
	head, err := base64.StdEncoding.DecodeString(b64[:min(len(b64), 60)])
	if err != nil || len(head) < 44 || string(head[0:4]) != "RIFF" || string(head[8:12]) != "WAVE" {
		return 0
	}
	rate := binary.LittleEndian.Uint32(head[28:32])
	size := base64.StdEncoding.DecodedLen(len(b64)) - strings.Count(b64[max(0, len(b64)-2):], "=") - 44
	if rate == 0 || size <= 0 {
		return 0
	}
	return float64(size) / float64(rate)
}

// mp3Seconds is the duration of a base64 MP3 file, read from its frame
// headers (and its Info tag's gapless trim); 0 when it is not one.
func mp3Seconds(b64 string) float64 {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return 0
	}
	s, err := mp3.Read(b)
	if err != nil {
		return 0
	}
	return s.Seconds()
}

// promptWords is the simulator's tokenizer applied to a prompt field: one
// token per whitespace-separated word. It takes a string, an array of
// strings (summed: the simulator answers with a single choice), content
// parts ({"type": "text", "text": ...}; other parts count nothing) and
// token-id arrays (one token per number).
type promptWords int

func (n *promptWords) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return errors.New("empty value")
	}
	switch b[0] {
	case 'n': // null: nothing to count
		return nil
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*n = promptWords(countWords(s))
	case '[':
		var items []promptWords
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
		*n = 0
		for _, v := range items {
			*n += v
		}
	case '{':
		var part struct {
			Text promptWords `json:"text"`
		}
		if err := json.Unmarshal(b, &part); err != nil {
			return err
		}
		*n = part.Text
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var id float64
		if err := json.Unmarshal(b, &id); err != nil {
			return err
		}
		*n = 1 // a token id
	default:
		return fmt.Errorf("want a string, an array of strings, text parts or token ids, got %.20s", b)
	}
	return nil
}

func countWords(s string) int {
	n, inWord := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			inWord = false
		} else if !inWord {
			inWord = true
			n++
		}
	}
	return n
}

// badRequest is a client error: its message goes back with a 400 naming
// the offending field.
type badRequest struct{ param, msg string }

// limits are a request's checked token counts.
type limits struct {
	promptTokens int
	maxTokens    int // output cap
	minTokens    int // output floor
	media            // what the prompt carries besides text
}

// limits checks the request like vLLM does and counts its prompt.
func (r *request) limits(chat bool, defaultMax int) (limits, *badRequest) {
	var l limits
	switch {
	case chat && len(r.Messages) == 0:
		return l, &badRequest{"messages", "messages must be a non-empty array"}
	case chat:
		for _, m := range r.Messages {
			l.promptTokens += int(m.Content)
			l.images += m.images
			l.audioSeconds += m.audioSeconds
		}
	case r.Prompt == nil:
		return l, &badRequest{"prompt", "prompt is required"}
	default:
		l.promptTokens = int(*r.Prompt)
	}

	l.maxTokens = defaultMax
	param := "max_tokens"
	switch {
	case r.MaxCompletionTokens != nil:
		l.maxTokens, param = *r.MaxCompletionTokens, "max_completion_tokens"
	case r.MaxTokens != nil:
		l.maxTokens = *r.MaxTokens
	}
	if l.maxTokens < 1 {
		return l, &badRequest{param, fmt.Sprintf("%s must be at least 1, got %d", param, l.maxTokens)}
	}
	if r.MinTokens != nil {
		l.minTokens = *r.MinTokens
	}
	if l.minTokens < 0 {
		return l, &badRequest{"min_tokens", fmt.Sprintf("min_tokens must be greater than or equal to 0, got %d", l.minTokens)}
	}
	if l.minTokens > l.maxTokens {
		return l, &badRequest{"min_tokens", fmt.Sprintf("min_tokens must be less than or equal to %s (%d), got %d", param, l.maxTokens, l.minTokens)}
	}
	return l, nil
}

// outputLength picks how many tokens to generate and why generation ends.
// Without ignore_eos the natural length is geometric with mean natural,
// the shape of a per-token chance of emitting EOS. It always takes one
// draw from rng, so later draws do not depend on the request's options.
func outputLength(rng *rand.Rand, natural, minTokens, maxTokens int, ignoreEOS bool) (int, string) {
	// Geometric on 1, 2, ... with success probability 1/natural, by
	// inversion from an exponential draw; natural 1 gives +Inf rate, so 1.
	rate := -math.Log1p(-1 / float64(natural))
	n := max(1+math.Floor(rng.ExpFloat64()/rate), float64(minTokens))
	if ignoreEOS || n >= float64(maxTokens) {
		return maxTokens, "length"
	}
	return int(n), "stop"
}
