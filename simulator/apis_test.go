package simulator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// sseData splits a stream into its events' names and data.
func sseData(t *testing.T, body []byte) (names []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var v map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &v); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
			names, data = append(names, name), append(data, v)
			name = ""
		}
	}
	return names, data
}

// TestOtherAPIs checks the shape of each API beyond chat and completions,
// as the prober reads it: the event sequence of streams, where the token
// counts are, and the replies.
func TestOtherAPIs(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: fast})
	for _, tc := range []struct {
		name, path, body string
		header           http.Header
		check            func(t *testing.T, body []byte)
	}{
		{
			name: "responses stream", path: "/v1/responses",
			body: `{"model":"inferprobe-simulator","input":"one two three","max_output_tokens":3,"stream":true,"ignore_eos":true}`,
			check: func(t *testing.T, body []byte) {
				names, data := sseData(t, body)
				want := []string{"response.created", "response.output_text.delta", "response.output_text.delta", "response.output_text.delta", "response.incomplete"}
				if !slices.Equal(names, want) {
					t.Fatalf("events %q, want %q", names, want)
				}
				usage := data[4]["response"].(map[string]any)["usage"].(map[string]any)
				if usage["input_tokens"] != 3.0 || usage["output_tokens"] != 3.0 {
					t.Errorf("usage %v", usage)
				}
			},
		},
		{
			name: "responses messages", path: "/v1/responses",
			body: `{"input":[{"role":"user","content":"a b"},{"role":"user","content":"c"}],"max_output_tokens":2,"ignore_eos":true}`,
			check: func(t *testing.T, body []byte) {
				var r struct {
					Status string
					Output []struct{ Content []struct{ Text string } }
					Usage  struct{ InputTokens, OutputTokens int } `json:"usage"`
				}
				if err := json.Unmarshal(body, &r); err != nil {
					t.Fatal(err)
				}
				if r.Status != "incomplete" || countWords(r.Output[0].Content[0].Text) != 2 {
					t.Errorf("reply %s", body)
				}
			},
		},
		{
			name: "messages stream", path: "/v1/messages", header: http.Header{"Anthropic-Version": {"2023-06-01"}},
			body: `{"model":"inferprobe-simulator","system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"a b c"}]}],"max_tokens":2,"stream":true,"ignore_eos":true}`,
			check: func(t *testing.T, body []byte) {
				names, data := sseData(t, body)
				want := []string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
				if !slices.Equal(names, want) {
					t.Fatalf("events %q, want %q", names, want)
				}
				in := data[0]["message"].(map[string]any)["usage"].(map[string]any)["input_tokens"]
				out := data[6]["usage"].(map[string]any)["output_tokens"]
				if in != 5.0 || out != 2.0 || data[6]["delta"].(map[string]any)["stop_reason"] != "max_tokens" {
					t.Errorf("input %v output %v, message_delta %v", in, out, data[6])
				}
			},
		},
		{
			name: "tgi generate_stream", path: "/generate_stream",
			body: `{"inputs":"a b c d","parameters":{"max_new_tokens":3,"details":true,"ignore_eos":true}}`,
			check: func(t *testing.T, body []byte) {
				_, data := sseData(t, body)
				if len(data) != 4 {
					t.Fatalf("%d events, want 3 tokens and the end: %s", len(data), body)
				}
				last := data[3]
				if last["token"].(map[string]any)["special"] != true || last["details"].(map[string]any)["generated_tokens"] != 3.0 || last["generated_text"] == nil {
					t.Errorf("last event %v", last)
				}
			},
		},
		{
			name: "tgi generate", path: "/generate", body: `{"inputs":"a b","parameters":{"max_new_tokens":2,"ignore_eos":true}}`,
			check: func(t *testing.T, body []byte) {
				var r struct {
					GeneratedText string          `json:"generated_text"`
					Details       json.RawMessage `json:"details"`
				}
				if err := json.Unmarshal(body, &r); err != nil {
					t.Fatal(err)
				}
				if countWords(r.GeneratedText) != 2 || string(r.Details) != "null" {
					t.Errorf("reply %s: want 2 words and no details (not asked for)", body)
				}
			},
		},
		{
			name: "embeddings", path: "/v1/embeddings", body: `{"model":"inferprobe-simulator","input":"a b c"}`,
			check: func(t *testing.T, body []byte) {
				if !bytes.Contains(body, []byte(`"usage":{"prompt_tokens":3,"total_tokens":3}`)) {
					t.Errorf("reply %s", body)
				}
			},
		},
		{
			name: "nim ranking", path: "/v1/ranking", body: `{"model":"m","query":{"text":"a b"},"passages":[{"text":"c"},{"text":"d e"}]}`,
			check: func(t *testing.T, body []byte) {
				if !bytes.Contains(body, []byte(`"logit"`)) || !bytes.Contains(body, []byte(`"prompt_tokens":5`)) {
					t.Errorf("reply %s", body)
				}
			},
		},
		{
			name: "cohere rerank", path: "/v2/rerank", body: `{"model":"m","query":"a","documents":["b","c d"]}`,
			check: func(t *testing.T, body []byte) {
				if !bytes.Contains(body, []byte(`"relevance_score"`)) || !bytes.Contains(body, []byte(`"input_tokens":4`)) {
					t.Errorf("reply %s", body)
				}
			},
		},
		{
			name: "tei rerank", path: "/rerank", body: `{"query":"a","texts":["b","c"]}`,
			check: func(t *testing.T, body []byte) {
				var r []struct {
					Index int
					Score float64
				}
				if err := json.Unmarshal(body, &r); err != nil || len(r) != 2 {
					t.Errorf("reply %s: %v", body, err)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, ts.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = tc.header
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			if _, err := buf.ReadFrom(resp.Body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, buf.Bytes())
			}
			tc.check(t, buf.Bytes())
		})
	}
}

func TestOtherAPIErrors(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: fast})
	for _, tc := range []struct{ name, path, version, body, want string }{
		{"messages without anthropic-version", "/v1/messages", "", `{"messages":[{"role":"user","content":"a"}],"max_tokens":2}`, "anthropic-version"},
		{"messages without max_tokens", "/v1/messages", "2023-06-01", `{"messages":[{"role":"user","content":"a"}]}`, "max_tokens"},
		{"tgi without inputs", "/generate", "", `{"parameters":{}}`, "inputs"},
		{"ranking without passages", "/v1/ranking", "", `{"query":{"text":"a"}}`, "passages"},
		{"responses min_tokens over the cap", "/v1/responses", "", `{"input":"a","max_output_tokens":2,"min_tokens":3}`, "min_tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, ts.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.version != "" {
				req.Header.Set("Anthropic-Version", tc.version)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out bytes.Buffer
			if _, err := out.ReadFrom(resp.Body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(out.String(), tc.want) {
				t.Errorf("status %d body %s, want 400 naming %s", resp.StatusCode, out.Bytes(), tc.want)
			}
		})
	}
}

// TestIgnoreMinTokensAndOmitUsage: the fault knobs that test a client's
// mismatch counter and its token counting.
func TestIgnoreMinTokensAndOmitUsage(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"a"}],"max_tokens":64,"min_tokens":64,"ignore_eos":true,"stream_options":{"include_usage":true}}`
	for _, tc := range []struct {
		name      string
		cfg       Config
		pinned    bool
		withUsage bool
	}{
		{"honest", Config{Profile: fast, NaturalTokens: 2}, true, true},
		{"ignores min_tokens and ignore_eos", Config{Profile: fast, NaturalTokens: 2, IgnoreMinTokens: true}, false, true},
		{"omits usage", Config{Profile: fast, OmitUsage: true}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := newTestServer(t, tc.cfg)
			code, out := do(t, http.MethodPost, ts.URL+"/v1/chat/completions", body)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, out)
			}
			r := decode[completionResponse](t, out)
			text := r.Choices[0].(map[string]any)["message"].(map[string]any)["content"].(string)
			if got := countWords(text) == 64; got != tc.pinned {
				t.Errorf("%d words, want pinned to 64: %v", countWords(text), tc.pinned)
			}
			if (r.Usage != nil) != tc.withUsage {
				t.Errorf("usage %v, want present: %v", r.Usage, tc.withUsage)
			}
			// Streams: no usage chunk either.
			code, out = do(t, http.MethodPost, ts.URL+"/v1/chat/completions", strings.Replace(body, "{", `{"stream":true,`, 1))
			if code != http.StatusOK || bytes.Contains(out, []byte(`"usage"`)) != tc.withUsage {
				t.Errorf("stream %d %s: want usage present: %v", code, out, tc.withUsage)
			}
		})
	}
}

// TestReasoningTokens: with ReasoningTokens the first tokens come as
// reasoning, in chunks of their own, where each API puts it (chat's
// delta.reasoning_content, completions' choice reasoning_content beside an
// empty text), and usage counts them.
func TestReasoningTokens(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: fast, ReasoningTokens: 3, TokensPerChunk: 2})
	// message is where a chat choice holds its texts.
	message := func(c map[string]any, stream bool) any {
		if stream {
			return c["delta"]
		}
		return c["message"]
	}
	for _, tc := range []struct {
		name, path, input string
		// reasoning and text read a choice's reasoning and output text.
		reasoning, text func(choice map[string]any, stream bool) string
	}{
		{
			"chat", "/v1/chat/completions", `"messages":[{"role":"user","content":"a b"}]`,
			func(c map[string]any, stream bool) string {
				return str(message(c, stream), "reasoning_content")
			},
			func(c map[string]any, stream bool) string {
				return str(message(c, stream), "content")
			},
		},
		{
			"completions", "/v1/completions", `"prompt":"a b"`,
			func(c map[string]any, _ bool) string { return str(c, "reasoning_content") },
			func(c map[string]any, _ bool) string { return str(c, "text") },
		},
	} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s stream=%v", tc.name, stream), func(t *testing.T) {
				body := fmt.Sprintf(`{%s,"max_tokens":8,"ignore_eos":true,"stream":%v,"stream_options":{"include_usage":true}}`, tc.input, stream)
				code, out := do(t, http.MethodPost, ts.URL+tc.path, body)
				if code != http.StatusOK {
					t.Fatalf("status %d: %s", code, out)
				}
				var events []map[string]any
				if stream {
					_, events = sseData(t, bytes.TrimSuffix(out, []byte("data: [DONE]\n\n")))
				} else {
					events = []map[string]any{decode[map[string]any](t, out)}
				}
				var kinds []string // "r2" is a reasoning chunk of two tokens, "t1" a text chunk of one
				var u map[string]any
				for _, ev := range events {
					if v, ok := ev["usage"].(map[string]any); ok {
						u = v
					}
					choices, _ := ev["choices"].([]any)
					if len(choices) == 0 {
						continue
					}
					c := choices[0].(map[string]any)
					r, x := tc.reasoning(c, stream), tc.text(c, stream)
					if r != "" && x != "" && stream {
						t.Errorf("a chunk mixes reasoning %q and text %q", r, x)
					}
					if r != "" {
						kinds = append(kinds, fmt.Sprintf("r%d", countWords(r)))
					}
					if x != "" {
						kinds = append(kinds, fmt.Sprintf("t%d", countWords(x)))
					}
				}
				want := []string{"r2", "r1", "t2", "t2", "t1"}
				if !stream {
					want = []string{"r3", "t5"}
				}
				if !slices.Equal(kinds, want) {
					t.Errorf("chunks %v, want %v", kinds, want)
				}
				details, _ := u["completion_tokens_details"].(map[string]any)
				if u["completion_tokens"] != 8.0 || details["reasoning_tokens"] != 3.0 {
					t.Errorf("usage %v, want 8 completion tokens of which 3 reasoning", u)
				}
			})
		}
	}
}

// str is m[key] when m is an object holding a string there, else "".
func str(m any, key string) string {
	obj, _ := m.(map[string]any)
	s, _ := obj[key].(string)
	return s
}
