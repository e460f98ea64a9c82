package prober

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

func specTarget(t *testing.T, st scenarios.Target) *Target {
	t.Helper()
	if st.Model == "" {
		st.Model = "m"
	}
	if st.URL == "" {
		st.URL = "http://127.0.0.1:8000/v1"
	}
	st.Timeout, st.StallTimeout = scenarios.Duration(time.Minute), scenarios.Duration(time.Minute)
	tg, err := NewTarget("t", &st)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestRequestBodies pins the request of every endpoint type: URL, headers
// and the exact body (golden), which is what the server sees.
func TestRequestBodies(t *testing.T) {
	no := false
	text := dataset.Prompt{Text: "one two three four five", InputTokens: 5, OutputTokens: 8}
	chat := dataset.Prompt{Messages: []dataset.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}},
		Session: "s-1", InputTokens: 3, OutputTokens: 8}
	pin := map[string]any{"ignore_eos": true}
	unlimited := dataset.Prompt{Text: "one two", InputTokens: 2} // OutputTokens 0: no limit
	drawn := dataset.Prompt{Text: "one two", Passages: []string{"two three", "four five six"}, InputTokens: 7}
	for _, tc := range []struct {
		name   string
		spec   scenarios.Target
		prompt dataset.Prompt
		params map[string]any
		url    string
		header http.Header // headers that must be there
		body   string
		pinned int
	}{
		{
			name: "chat", spec: scenarios.Target{Endpoint: EndpointChat, APIKey: "k"}, prompt: text, params: pin,
			url:    "http://127.0.0.1:8000/v1/chat/completions",
			header: http.Header{"Authorization": {"Bearer k"}, "Accept": {"text/event-stream"}},
			body:   `{"ignore_eos":true,"max_tokens":8,"messages":[{"role":"user","content":"one two three four five"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}`,
			pinned: 8,
		},
		{
			// AIPerf's content parts: the text, then the images, then the audio.
			name: "chat with images and audio", spec: scenarios.Target{Endpoint: EndpointChat, MaxTokensField: scenarios.MaxCompletionTokens},
			prompt: dataset.Prompt{Messages: chat.Messages, InputTokens: 3, OutputTokens: 8, Media: &dataset.Media{
				Images: []string{"data:image/png;base64,AAA=", "data:image/jpeg;base64,BBB="},
				Audio:  []dataset.Clip{{Data: "UklGRg==", Format: "wav", Seconds: 1.5}}}},
			url: "http://127.0.0.1:8000/v1/chat/completions",
			body: `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi"},` +
				`{"type":"image_url","image_url":{"url":"data:image/png;base64,AAA="}},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,BBB="}},` +
				`{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}],"max_completion_tokens":8,"model":"m","stream":true,"stream_options":{"include_usage":true}}`,
		},
		{
			// A later turn of a conversation: the earlier user message
			// carries its own image again, as AIPerf's history does.
			name: "chat, a later turn with images", spec: scenarios.Target{Endpoint: EndpointChat, Stream: &no},
			prompt: dataset.Prompt{Messages: []dataset.Message{
				{Role: "user", Content: "first", Media: &dataset.Media{Images: []string{"data:image/png;base64,AAA="}}},
				{Role: "assistant", Content: "answer"},
				{Role: "user", Content: "second"}}, InputTokens: 3, Media: &dataset.Media{Images: []string{"data:image/png;base64,CCC="}}},
			url: "http://127.0.0.1:8000/v1/chat/completions",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"first"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAA="}}]},` +
				`{"role":"assistant","content":"answer"},{"role":"user","content":[{"type":"text","text":"second"},{"type":"image_url","image_url":{"url":"data:image/png;base64,CCC="}}]}],"model":"m"}`,
		},
		{
			name: "chat, one message with an image", spec: scenarios.Target{Endpoint: EndpointChat, Stream: &no}, params: map[string]any{"temperature": 0.5},
			prompt: dataset.Prompt{Text: "hi <b>", InputTokens: 1, Media: &dataset.Media{Images: []string{"data:image/png;base64,AAA="}}},
			url:    "http://127.0.0.1:8000/v1/chat/completions",
			body:   `{"messages":[{"role":"user","content":[{"type":"text","text":"hi \u003cb\u003e"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAA="}}]}],"model":"m","temperature":0.5}`,
		},
		{
			name: "chat messages, max_completion_tokens", spec: scenarios.Target{Endpoint: EndpointChat, MaxTokensField: scenarios.MaxCompletionTokens},
			prompt: chat, url: "http://127.0.0.1:8000/v1/chat/completions",
			body: `{"max_completion_tokens":8,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "completions, not streamed", spec: scenarios.Target{Endpoint: EndpointCompletions, Stream: &no}, prompt: text,
			params: map[string]any{"min_tokens": 8}, pinned: 8,
			url:  "http://127.0.0.1:8000/v1/completions",
			body: `{"max_tokens":8,"min_tokens":8,"model":"m","prompt":"one two three four five"}`,
		},
		{
			name: "responses", spec: scenarios.Target{Endpoint: EndpointResponses}, prompt: text, params: pin, pinned: 8,
			url:  "http://127.0.0.1:8000/v1/responses",
			body: `{"ignore_eos":true,"input":"one two three four five","max_output_tokens":8,"model":"m","stream":true}`,
		},
		{
			name: "responses messages", spec: scenarios.Target{Endpoint: EndpointResponses}, prompt: chat,
			url:  "http://127.0.0.1:8000/v1/responses",
			body: `{"input":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"max_output_tokens":8,"model":"m","stream":true}`,
		},
		{
			name: "embeddings", spec: scenarios.Target{Endpoint: EndpointEmbeddings}, prompt: text, params: pin,
			url:    "http://127.0.0.1:8000/v1/embeddings",
			body:   `{"encoding_format":"float","ignore_eos":true,"input":"one two three four five","model":"m"}`,
			pinned: 0, // nothing is generated
		},
		{
			name: "nim_ranking", spec: scenarios.Target{Endpoint: EndpointNIMRanking}, prompt: text,
			url:  "http://127.0.0.1:8000/v1/ranking",
			body: `{"model":"m","passages":[{"text":"two"},{"text":"three"},{"text":"four"},{"text":"five"}],"query":{"text":"one"}}`,
		},
		{
			// A synthetic ranking dataset's query and passages are sent as drawn, not split.
			name: "nim_ranking, drawn passages", spec: scenarios.Target{Endpoint: EndpointNIMRanking}, prompt: drawn,
			url:  "http://127.0.0.1:8000/v1/ranking",
			body: `{"model":"m","passages":[{"text":"two three"},{"text":"four five six"}],"query":{"text":"one two"}}`,
		},
		{
			name: "cohere_rerank, one drawn passage", spec: scenarios.Target{Endpoint: EndpointCohereRerank}, prompt: dataset.Prompt{Text: "a query", Passages: []string{"one passage"}},
			url:  "http://127.0.0.1:8000/v1/rerank",
			body: `{"documents":["one passage"],"model":"m","query":"a query"}`,
		},
		{
			name: "cohere_rerank", spec: scenarios.Target{Endpoint: EndpointCohereRerank, URL: "https://api.cohere.com/v2", APIKey: "k"}, prompt: text,
			url: "https://api.cohere.com/v2/rerank", header: http.Header{"Authorization": {"Bearer k"}},
			body: `{"documents":["two","three","four","five"],"model":"m","query":"one"}`,
		},
		{
			name: "tei_rerank", spec: scenarios.Target{Endpoint: EndpointTEIRerank, URL: "http://127.0.0.1:8080"},
			prompt: dataset.Prompt{Text: "which is it?\nthis one\nthat one", OutputTokens: 8},
			url:    "http://127.0.0.1:8080/rerank",
			body:   `{"query":"which is it?","texts":["this one","that one"]}`,
		},
		{
			name: "messages", spec: scenarios.Target{Endpoint: EndpointMessages, URL: "https://api.anthropic.com/v1", APIKey: "k"},
			prompt: chat, url: "https://api.anthropic.com/v1/messages",
			header: http.Header{"X-Api-Key": {"k"}, "Anthropic-Version": {"2023-06-01"}, "X-Session-Id": {"s-1"}},
			body:   `{"max_tokens":8,"messages":[{"role":"user","content":"hi"}],"model":"m","stream":true,"system":"be brief"}`,
		},
		{
			name: "messages, own version", spec: scenarios.Target{Endpoint: EndpointMessages, Headers: map[string]string{"anthropic-version": "2025-01-01"}},
			prompt: text, url: "http://127.0.0.1:8000/v1/messages",
			header: http.Header{"Anthropic-Version": {"2025-01-01"}},
			body:   `{"max_tokens":8,"messages":[{"role":"user","content":"one two three four five"}],"model":"m","stream":true}`,
		},
		{
			name: "tgi stream", spec: scenarios.Target{Endpoint: EndpointTGI, URL: "http://127.0.0.1:8080"}, prompt: text,
			params: map[string]any{"temperature": 0.5}, url: "http://127.0.0.1:8080/generate_stream",
			body: `{"inputs":"one two three four five","parameters":{"details":true,"max_new_tokens":8,"temperature":0.5}}`,
		},
		{
			name: "chat, no limit", spec: scenarios.Target{Endpoint: EndpointChat, MaxTokensField: scenarios.MaxCompletionTokens, Stream: &no},
			prompt: unlimited, url: "http://127.0.0.1:8000/v1/chat/completions",
			body: `{"messages":[{"role":"user","content":"one two"}],"model":"m"}`,
		},
		{
			name: "completions, no limit", spec: scenarios.Target{Endpoint: EndpointCompletions, Stream: &no}, prompt: unlimited,
			url: "http://127.0.0.1:8000/v1/completions", body: `{"model":"m","prompt":"one two"}`,
		},
		{
			name: "responses, no limit", spec: scenarios.Target{Endpoint: EndpointResponses, Stream: &no}, prompt: unlimited,
			url: "http://127.0.0.1:8000/v1/responses", body: `{"input":"one two","model":"m"}`,
		},
		{
			name: "messages, no limit: the API requires one, AIPerf's 1024", spec: scenarios.Target{Endpoint: EndpointMessages, Stream: &no},
			prompt: unlimited, url: "http://127.0.0.1:8000/v1/messages",
			body: `{"max_tokens":1024,"messages":[{"role":"user","content":"one two"}],"model":"m"}`,
		},
		{
			name: "tgi, no limit", spec: scenarios.Target{Endpoint: EndpointTGI, URL: "http://127.0.0.1:8080", Stream: &no}, prompt: unlimited,
			url: "http://127.0.0.1:8080/generate", body: `{"inputs":"one two","parameters":{"details":true}}`,
		},
		{
			name: "tgi, not streamed", spec: scenarios.Target{Endpoint: EndpointTGI, URL: "http://127.0.0.1:8080", Stream: &no}, prompt: text,
			url:  "http://127.0.0.1:8080/generate",
			body: `{"inputs":"one two three four five","parameters":{"details":true,"max_new_tokens":8}}`,
		},
		{
			name: "template", spec: scenarios.Target{Endpoint: EndpointTemplate, URL: "http://127.0.0.1:9000", SessionHeader: "X-Conv",
				Template: &scenarios.Template{Path: "/v2/infer", TextPath: "text", Body: map[string]any{
					"input": "{{prompt}}", "n": "{{max_tokens}}", "stream": "{{stream}}", "history": "{{messages}}",
					"label": "Q: {{prompt}} ({{model}}, {{max_tokens}})", "fixed": []any{1, "x"},
				}}},
			prompt: dataset.Prompt{Text: "hi", Session: "c-9", OutputTokens: 8}, params: pin, pinned: 8,
			url: "http://127.0.0.1:9000/v2/infer", header: http.Header{"X-Conv": {"c-9"}},
			body: `{"fixed":[1,"x"],"history":[{"role":"user","content":"hi"}],"ignore_eos":true,"input":"hi","label":"Q: hi (m, 8)","n":8,"stream":true}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := specTarget(t, tc.spec)
			req, err := NewRequest(tg, tc.prompt, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			if tg.url != tc.url {
				t.Errorf("url %s, want %s", tg.url, tc.url)
			}
			if string(req.Body) != tc.body {
				t.Errorf("body\n got %s\nwant %s", req.Body, tc.body)
			}
			// AIPerf's num_images: every image part of the body, the history's too.
			images := strings.Count(tc.body, `"image_url":{"url":`)
			if req.Images != images || req.AudioSeconds != tc.prompt.Media.AudioSeconds() {
				t.Errorf("images %d audio %vs, want %d %vs", req.Images, req.AudioSeconds, images, tc.prompt.Media.AudioSeconds())
			}
			if req.PinnedOutputTokens != tc.pinned || req.Session != tc.prompt.Session || req.InputTokens != tc.prompt.InputTokens {
				t.Errorf("pinned %d session %q input %d, want %d %q %d", req.PinnedOutputTokens, req.Session, req.InputTokens, tc.pinned, tc.prompt.Session, tc.prompt.InputTokens)
			}
			h := tg.header.Clone()
			if req.Session != "" {
				h.Set(tg.sessionHeader, req.Session)
			}
			for k, v := range tc.header {
				if !slices.Equal(h.Values(k), v) {
					t.Errorf("header %s = %q, want %q", k, h.Values(k), v)
				}
			}
			if tc.spec.Endpoint == EndpointMessages && h.Get("Authorization") != "" {
				t.Errorf("messages sent Authorization %q: Anthropic takes the key in x-api-key", h.Get("Authorization"))
			}
		})
	}
}

// TestEveryEndpointHasACodec: a description registered with scenarios
// alone, not through registerEndpoint, would pass validation and fail here.
func TestEveryEndpointHasACodec(t *testing.T) {
	for _, name := range scenarios.EndpointNames() {
		st := scenarios.Target{Endpoint: name, Template: &scenarios.Template{Path: "/x", TextPath: "t"}}
		if _, _, err := lookupEndpoint(&st); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestEndpointStreams reads each API's stream shape: which events are
// content, which reasoning, where usage comes from and what ends it.
func TestEndpointStreams(t *testing.T) {
	type want struct {
		chunks          []time.Duration
		firstOutput     int
		out, in, reason int
		outcome         record.Outcome
		reasonCode      record.Reason
	}
	ev := func(name, data string) string {
		if name != "" {
			return "event: " + name + "\ndata: " + data + "\n\n"
		}
		return "data: " + data + "\n\n"
	}
	for _, tc := range []struct {
		name     string
		endpoint string
		reads    []string
		want     want
	}{
		{
			name: "chat reasoning tokens from usage", endpoint: EndpointChat,
			reads: []string{
				ev("", `{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`),
				ev("", `{"choices":[{"delta":{"content":"a"}}]}`),
				ev("", `{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":7}}}`) + "data: [DONE]\n\n",
			},
			want: want{chunks: []time.Duration{10 * ms, 20 * ms}, firstOutput: 1, out: 9, in: 4, reason: 7},
		},
		{
			// Completions carry reasoning beside an empty text, on the choice.
			name: "completions reasoning beside empty text", endpoint: EndpointCompletions,
			reads: []string{
				ev("", `{"choices":[{"index":0,"text":"","reasoning_content":" so","logprobs":null,"finish_reason":null}]}`),
				ev("", `{"choices":[{"index":0,"text":"","reasoning_content":" then","logprobs":null,"finish_reason":null}]}`),
				ev("", `{"choices":[{"index":0,"text":"","reasoning":" hmm","finish_reason":null}]}`),
				ev("", `{"choices":[{"index":0,"text":" a","logprobs":null,"finish_reason":null}]}`),
				ev("", `{"choices":[{"index":0,"text":" b","logprobs":null,"finish_reason":null}]}`),
				ev("", `{"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":5,"completion_tokens_details":{"reasoning_tokens":3}}}`) + "data: [DONE]\n\n",
			},
			want: want{chunks: []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms}, firstOutput: 3, out: 5, in: 4, reason: 3},
		},
		{
			name: "responses", endpoint: EndpointResponses,
			reads: []string{
				ev("response.created", `{"type":"response.created","response":{"status":"in_progress","output":[]}}`),
				ev("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","delta":"think"}`),
				ev("response.output_text.delta", `{"type":"response.output_text.delta","delta":"Hi"}`),
				ev("response.completed", `{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":11,"output_tokens":5,"output_tokens_details":{"reasoning_tokens":3}}}}`),
			},
			want: want{chunks: []time.Duration{20 * ms, 30 * ms}, firstOutput: 1, out: 5, in: 11, reason: 3},
		},
		{
			name: "responses failed", endpoint: EndpointResponses,
			reads: []string{ev("response.failed", `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}`)},
			want:  want{firstOutput: -1, in: 99, outcome: record.OutcomeError, reasonCode: record.ReasonServerErrorEvent},
		},
		{
			name: "messages: input from message_start, output from message_delta", endpoint: EndpointMessages,
			reads: []string{
				ev("message_start", `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":25,"output_tokens":1}}}`) +
					ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`) +
					ev("ping", `{"type": "ping"}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"so"}}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello"}}`),
				ev("content_block_stop", `{"type":"content_block_stop","index":1}`) +
					ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`),
				ev("message_stop", `{"type":"message_stop"}`),
			},
			want: want{chunks: []time.Duration{20 * ms, 30 * ms}, firstOutput: 1, out: 15, in: 25},
		},
		{
			name: "messages error event", endpoint: EndpointMessages,
			reads: []string{ev("", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
			want:  want{firstOutput: -1, in: 99, outcome: record.OutcomeError, reasonCode: record.ReasonServerErrorEvent},
		},
		{
			name: "messages cut before message_stop", endpoint: EndpointMessages,
			reads: []string{ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`)},
			want:  want{chunks: []time.Duration{10 * ms}, firstOutput: 0, in: 99, out: 1, outcome: record.OutcomeError, reasonCode: record.ReasonTruncated},
		},
		{
			name: "tgi: special tokens are not content, details end it", endpoint: EndpointTGI,
			reads: []string{
				ev("", `{"index":1,"token":{"id":1,"text":" a","logprob":-1,"special":false},"generated_text":null,"details":null}`),
				ev("", `{"index":2,"token":{"id":2,"text":" b","logprob":-1,"special":false},"generated_text":null,"details":null}`),
				ev("", `{"index":3,"token":{"id":0,"text":"</s>","logprob":0,"special":true},"generated_text":" a b","details":{"finish_reason":"eos_token","generated_tokens":3,"seed":null}}`),
			},
			want: want{chunks: []time.Duration{10 * ms, 20 * ms}, firstOutput: 0, out: 3, in: 99},
		},
		{
			name: "tgi error", endpoint: EndpointTGI,
			reads: []string{ev("", `{"error":"Request failed during generation: Server error: CUDA out of memory","error_type":"generation"}`)},
			want:  want{firstOutput: -1, in: 99, outcome: record.OutcomeError, reasonCode: record.ReasonServerErrorEvent},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Unix(1000, 0)
			at := make([]time.Duration, len(tc.reads))
			for i := range at {
				at[i] = time.Duration(i+1) * 10 * ms
			}
			s := &script{reads: tc.reads, at: at, t0: t0}
			rec := &record.Record{Sent: t0, FirstOutput: -1, InputTokens: 99}
			readStream(s.clock, specTarget(t, scenarios.Target{Endpoint: tc.endpoint}), s, rec, &Request{})
			w := tc.want
			if !slices.Equal(rec.Chunks, w.chunks) || rec.FirstOutput != w.firstOutput {
				t.Errorf("chunks %v first output %d, want %v %d", rec.Chunks, rec.FirstOutput, w.chunks, w.firstOutput)
			}
			if rec.Outcome != w.outcome || rec.Reason != w.reasonCode {
				t.Fatalf("outcome %v/%q, want %v/%q (err %q)", rec.Outcome, rec.Reason, w.outcome, w.reasonCode, rec.Err)
			}
			if rec.OutputTokens != w.out || rec.InputTokens != w.in || rec.ReasoningTokens != w.reason {
				t.Errorf("tokens out/in/reasoning %d/%d/%d, want %d/%d/%d", rec.OutputTokens, rec.InputTokens, rec.ReasoningTokens, w.out, w.in, w.reason)
			}
		})
	}
}

// TestEndpointReplies reads each API's non-streamed reply.
func TestEndpointReplies(t *testing.T) {
	for _, tc := range []struct {
		name, endpoint, body string
		out, in, reason      int
		source               record.TokenSource
		reasonCode           record.Reason
	}{
		{"responses", EndpointResponses, `{"status":"incomplete","output":[{"type":"message","content":[{"type":"output_text","text":"hi"}]}],"usage":{"input_tokens":6,"output_tokens":8,"output_tokens_details":{"reasoning_tokens":2}}}`, 8, 6, 2, record.TokensFromUsage, record.ReasonNone},
		{"embeddings", EndpointEmbeddings, `{"data":[{"embedding":[0.1]}],"usage":{"prompt_tokens":12,"total_tokens":12}}`, 0, 12, 0, record.TokensFromUsage, record.ReasonNone},
		{"embeddings without usage", EndpointEmbeddings, `{"data":[{"embedding":[0.1]}]}`, 0, 99, 0, record.TokensFromChunks, record.ReasonNone},
		{"embeddings error", EndpointEmbeddings, `{"error":{"message":"input too long"}}`, 0, 99, 0, record.TokensFromUsage, record.ReasonServerErrorEvent},
		{"nim_ranking", EndpointNIMRanking, `{"rankings":[{"index":1,"logit":0.3}],"usage":{"prompt_tokens":40}}`, 0, 40, 0, record.TokensFromUsage, record.ReasonNone},
		{"cohere_rerank", EndpointCohereRerank, `{"results":[{"index":0,"relevance_score":0.9}],"meta":{"billed_units":{"search_units":1},"tokens":{"input_tokens":33}}}`, 0, 33, 0, record.TokensFromUsage, record.ReasonNone},
		{"tei_rerank", EndpointTEIRerank, `[{"index":0,"score":0.9},{"index":1,"score":0.1}]`, 0, 99, 0, record.TokensFromChunks, record.ReasonNone},
		{"tei_rerank error", EndpointTEIRerank, `{"error":"Input validation error","error_type":"Validation"}`, 0, 99, 0, record.TokensFromUsage, record.ReasonServerErrorEvent},
		{"messages", EndpointMessages, `{"content":[{"type":"thinking","thinking":"x"},{"type":"text","text":"Hi"}],"usage":{"input_tokens":10,"output_tokens":4}}`, 4, 10, 0, record.TokensFromUsage, record.ReasonNone},
		{"messages error", EndpointMessages, `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`, 0, 99, 0, record.TokensFromUsage, record.ReasonServerErrorEvent},
		{"tgi", EndpointTGI, `{"generated_text":" a b","details":{"finish_reason":"length","generated_tokens":2}}`, 2, 99, 0, record.TokensFromUsage, record.ReasonNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			no := false
			tg := specTarget(t, scenarios.Target{Endpoint: tc.endpoint, Stream: &no})
			t0 := time.Unix(1000, 0)
			rec := &record.Record{Sent: t0, FirstOutput: -1, InputTokens: 99}
			readResponse(func() time.Time { return t0.Add(70 * ms) }, tg, strings.NewReader(tc.body), rec)
			if rec.Reason != tc.reasonCode {
				t.Fatalf("reason %q, want %q (err %q)", rec.Reason, tc.reasonCode, rec.Err)
			}
			if tc.reasonCode != record.ReasonNone {
				return
			}
			if rec.OutputTokens != tc.out || rec.InputTokens != tc.in || rec.ReasoningTokens != tc.reason || rec.TokenSource != tc.source {
				t.Errorf("tokens out/in/reasoning/source %d/%d/%d/%v, want %d/%d/%d/%v",
					rec.OutputTokens, rec.InputTokens, rec.ReasoningTokens, rec.TokenSource, tc.out, tc.in, tc.reason, tc.source)
			}
		})
	}
}
