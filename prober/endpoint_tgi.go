package prober

import (
	"encoding/json"
	"maps"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/sse"
	"github.com/inferprobe/inferprobe/scenarios"
)

// EndpointTGI is Hugging Face TGI's native API.
const EndpointTGI = "tgi"

func init() {
	registerEndpoint(scenarios.EndpointType{
		Name: EndpointTGI, Path: "/generate", StreamPath: "/generate_stream", Streams: true, AtRoot: true,
		Description: "Hugging Face TGI generate_stream, or generate when not streaming, url of the server root",
	}, statelessCodec(tgiCodec{}))
}

// tgiCodec speaks Hugging Face TGI's native API: POST /generate_stream
// (one event per token, the last with details) or /generate. Probe params
// go into "parameters", where TGI reads its generation options; details
// are asked for, as they carry the token counts.
type tgiCodec struct{}

func (tgiCodec) generates() bool { return true }

func (tgiCodec) body(_ *Target, p dataset.Prompt, params map[string]any) any {
	parameters := make(map[string]any, len(params)+2)
	maps.Copy(parameters, params)
	if p.OutputTokens > 0 {
		parameters["max_new_tokens"] = p.OutputTokens
	}
	parameters["details"] = true
	return map[string]any{"inputs": promptText(p), "parameters": parameters}
}

// tgiDetails is TGI's details object: in the last event of a stream, or in
// the reply.
type tgiDetails struct {
	FinishReason    string `json:"finish_reason"`
	GeneratedTokens int    `json:"generated_tokens"`
	InputLength     int    `json:"input_length"` // recent TGI versions only
}

func (d *tgiDetails) into(info *chunkInfo) {
	info.hasUsage = true
	info.usage.CompletionTokens, info.usage.PromptTokens = d.GeneratedTokens, d.InputLength
}

func (tgiCodec) event(ev sse.Event, st *eventState) (chunkInfo, error) {
	var info chunkInfo
	var e struct {
		Token *struct {
			Text    string `json:"text"`
			Special bool   `json:"special"`
		} `json:"token"`
		GeneratedText *string         `json:"generated_text"`
		Details       *tgiDetails     `json:"details"`
		Error         json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return info, err
	}
	info.errValue = e.Error
	// A special token (the EOS that ends generation) is not generated text.
	if e.Token != nil && !e.Token.Special && e.Token.Text != "" {
		info.output = true
		if st.wantText {
			st.text = append(st.text, e.Token.Text...)
		}
	}
	if e.Details != nil {
		e.Details.into(&info)
	}
	info.finished = e.GeneratedText != nil || e.Details != nil
	return info, nil
}

func (tgiCodec) reply(data []byte, info *chunkInfo, text *[]byte) error {
	var r struct {
		GeneratedText string          `json:"generated_text"`
		Details       *tgiDetails     `json:"details"`
		Error         json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	info.errValue = r.Error
	if r.Details != nil {
		r.Details.into(info)
	}
	*text = append(*text, r.GeneratedText...)
	return nil
}
