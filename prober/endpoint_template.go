package prober

import (
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"strings"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/sse"
	"github.com/inferprobe/inferprobe/scenarios"
)

// EndpointTemplate is any JSON API, described by the target's template.
const EndpointTemplate = "template"

func init() {
	registerEndpoint(scenarios.EndpointType{
		Name: EndpointTemplate, Streams: true, NeedsTemplate: true,
		Description: "any JSON API, described by a body template and JSON paths in a scenario file",
	}, newTemplateCodec)
}

// templateCodec speaks a user-described JSON API: a body template with
// placeholders, and JSON paths to the text and the token counts in each
// streamed event or in the reply. Whether a stream is complete cannot be
// known, so it ends well at [DONE] or at the end of the body.
type templateCodec struct {
	tmpl          map[string]any
	text          jsonPath
	output, input jsonPath // nil when not given
}

// jsonPath is a parsed path: object keys, and array indexes where a part is
// a number.
type jsonPath []string

func parsePath(s string) jsonPath {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// lookup returns the value at p in v, or nil.
func (p jsonPath) lookup(v any) any {
	for _, part := range p {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func newTemplateCodec(t *scenarios.Target) (codec, error) {
	tp := t.Template
	if tp == nil {
		return nil, errors.New("endpoint template needs a template")
	}
	return &templateCodec{
		tmpl:   tp.Body,
		text:   parsePath(tp.TextPath),
		output: parsePath(tp.OutputTokensPath),
		input:  parsePath(tp.InputTokensPath),
	}, nil
}

func (c *templateCodec) generates() bool { return true }

// body fills the template; params are merged at its top level.
func (c *templateCodec) body(t *Target, p dataset.Prompt, params map[string]any) any {
	text := promptText(p)
	// No limit (0) fills the placeholder with null, or nothing inside a string, as AIPerf's None.
	var maxTokens string
	var maxTokensValue any
	if p.OutputTokens > 0 {
		maxTokens, maxTokensValue = strconv.Itoa(p.OutputTokens), p.OutputTokens
	}
	replacer := strings.NewReplacer(scenarios.PlaceholderPrompt, text, scenarios.PlaceholderMaxTokens, maxTokens, scenarios.PlaceholderModel, t.Model)
	var fill func(v any) any
	fill = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[k] = fill(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = fill(e)
			}
			return out
		case string:
			switch x {
			case scenarios.PlaceholderPrompt:
				return text
			case scenarios.PlaceholderMessages:
				return messages(p)
			case scenarios.PlaceholderMaxTokens:
				return maxTokensValue
			case scenarios.PlaceholderModel:
				return t.Model
			case scenarios.PlaceholderStream:
				return t.stream
			}
			return replacer.Replace(x)
		}
		return v
	}
	body := fill(c.tmpl).(map[string]any)
	maps.Copy(body, params)
	return body
}

// decode reads one event or reply: its text, its token counts and any error.
func (c *templateCodec) decode(data []byte, info *chunkInfo) (string, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return "", err
	}
	if m, ok := v.(map[string]any); ok && m["error"] != nil {
		info.errValue, _ = json.Marshal(m["error"])
	}
	text, _ := c.text.lookup(v).(string)
	if n, ok := c.output.lookup(v).(float64); ok && c.output != nil {
		info.hasUsage, info.usage.CompletionTokens = true, int(n)
	}
	if n, ok := c.input.lookup(v).(float64); ok && c.input != nil {
		info.usage.PromptTokens = int(n) // hasUsage is about the output count
	}
	return text, nil
}

func (c *templateCodec) event(ev sse.Event, st *eventState) (chunkInfo, error) {
	var info chunkInfo
	text, err := c.decode(ev.Data, &info)
	if err != nil {
		return info, err
	}
	info.output, info.finished = text != "", true
	if st.wantText {
		st.text = append(st.text, text...)
	}
	return info, nil
}

func (c *templateCodec) reply(data []byte, info *chunkInfo, text *[]byte) error {
	s, err := c.decode(data, info)
	*text = append(*text, s...)
	return err
}
