package simulator

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestStreamShape(t *testing.T) {
	for _, tc := range []struct {
		name         string
		path         string
		perChunk     int
		includeUsage bool
		wantChunks   int
	}{
		{"chat", "/v1/chat/completions", 1, false, 10},
		{"chat usage", "/v1/chat/completions", 1, true, 10},
		{"chat 3 per chunk", "/v1/chat/completions", 3, true, 4},
		{"completions", "/v1/completions", 1, true, 10},
		{"completions 4 per chunk", "/v1/completions", 4, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := newTestServer(t, Config{Profile: fast, TokensPerChunk: tc.perChunk})
			chat := strings.Contains(tc.path, "chat")
			body := map[string]any{"stream": true, "max_tokens": 10, "ignore_eos": true,
				"stream_options": map[string]any{"include_usage": tc.includeUsage}}
			if chat {
				body["messages"] = []map[string]any{{"role": "user", "content": "one two three"}}
			} else {
				body["prompt"] = "one two three"
			}
			resp, err := http.Post(ts.URL+tc.path, "application/json", strings.NewReader(string(mustJSON(t, body))))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type = %q, want text/event-stream", ct)
			}
			raw := readAll(t, resp)
			events, done := parseSSE(t, raw)
			if !done {
				t.Fatal("stream did not end with data: [DONE]")
			}

			wantObject := "text_completion"
			if chat {
				wantObject = "chat.completion.chunk"
				prelude := events[0]
				d := prelude.Choices[0].Delta
				if d == nil || d.Role == nil || *d.Role != "assistant" || d.Content == nil || *d.Content != "" || prelude.Choices[0].FinishReason != nil {
					t.Errorf("first event is not a role prelude: %+v", prelude)
				}
				events = events[1:]
			}
			for _, ev := range events {
				if ev.Object != wantObject || ev.Model != DefaultModel || ev.ID != events[0].ID || ev.Created == 0 {
					t.Errorf("event header = %q %q %q %d, want %q %q, one id", ev.ID, ev.Object, ev.Model, ev.Created, wantObject, DefaultModel)
				}
			}

			var content []chunk
			for len(events) > 0 && events[0].text() != "" {
				content, events = append(content, events[0]), events[1:]
			}
			if len(content) != tc.wantChunks {
				t.Errorf("content chunks = %d, want %d", len(content), tc.wantChunks)
			}
			var words int
			for _, c := range content {
				words += countWords(c.text())
				if c.Choices[0].FinishReason != nil {
					t.Errorf("content chunk has finish_reason %q", *c.Choices[0].FinishReason)
				}
			}
			if words != 10 {
				t.Errorf("tokens streamed = %d, want 10", words)
			}

			if len(events) == 0 {
				t.Fatal("no final chunk")
			}
			final := events[0].Choices[0]
			if final.FinishReason == nil || *final.FinishReason != "length" {
				t.Errorf("final finish_reason = %v, want length", final.FinishReason)
			}
			if chat && (final.Delta == nil || final.Delta.Content != nil || final.Delta.Role != nil) {
				t.Errorf("final delta not empty: %+v", final.Delta)
			}
			events = events[1:]

			if tc.includeUsage {
				if len(events) != 1 || len(events[0].Choices) != 0 || events[0].Usage == nil {
					t.Fatalf("want one usage chunk with choices: [], got %+v", events)
				}
				if u := *events[0].Usage; u != (usage{PromptTokens: 3, CompletionTokens: 10, TotalTokens: 13}) {
					t.Errorf("usage = %+v", u)
				}
				if !strings.Contains(string(raw), `"choices":[],"usage"`) {
					t.Error(`usage chunk lacks "choices":[]`)
				}
			} else if len(events) != 0 {
				t.Errorf("unexpected events after the final chunk: %+v", events)
			}
		})
	}
}

func TestOutputLength(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: fast, DefaultMaxTokens: 20, NaturalTokens: 2})
	for _, tc := range []struct {
		name       string
		params     string
		wantTokens int // 0: any below the cap
		wantFinish string
	}{
		{"ignore_eos takes the default cap", `"ignore_eos":true`, 20, "length"},
		{"ignore_eos takes max_tokens", `"ignore_eos":true,"max_tokens":7`, 7, "length"},
		{"max_completion_tokens beats max_tokens", `"ignore_eos":true,"max_tokens":5,"max_completion_tokens":9`, 9, "length"},
		{"min_tokens raises the natural length", `"min_tokens":15,"max_tokens":19`, 15, "stop"},
		{"min_tokens equal to the cap", `"min_tokens":12,"max_tokens":12`, 12, "length"},
		{"natural stop", `"max_tokens":1000`, 0, "stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				body := fmt.Sprintf(`{"messages":[{"role":"user","content":"hi"}],"stream":%t,"stream_options":{"include_usage":true},%s}`, stream, tc.params)
				code, out := do(t, http.MethodPost, ts.URL+"/v1/chat/completions", body)
				if code != http.StatusOK {
					t.Fatalf("status %d: %s", code, out)
				}
				tokens, finish, text := summarize(t, out, stream)
				if tc.wantTokens != 0 && tokens != tc.wantTokens || tc.wantTokens == 0 && tokens >= 1000 {
					t.Errorf("stream=%t: completion_tokens = %d, want %d", stream, tokens, tc.wantTokens)
				}
				if finish != tc.wantFinish {
					t.Errorf("stream=%t: finish_reason = %q, want %q", stream, finish, tc.wantFinish)
				}
				if n := countWords(text); n != tokens {
					t.Errorf("stream=%t: text has %d words, usage says %d tokens", stream, n, tokens)
				}
			}
		})
	}
}

// summarize returns usage's completion tokens, the finish reason and the
// generated text of a plain or streamed chat response.
func summarize(t *testing.T, body []byte, stream bool) (int, string, string) {
	t.Helper()
	if !stream {
		r := decode[struct {
			Choices []struct {
				Message struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage usage `json:"usage"`
		}](t, body)
		if len(r.Choices) != 1 || r.Choices[0].Message.Role != "assistant" {
			t.Fatalf("unexpected response %s", body)
		}
		return r.Usage.CompletionTokens, r.Choices[0].FinishReason, r.Choices[0].Message.Content
	}
	events, _ := parseSSE(t, body)
	var text strings.Builder
	var finish string
	var tokens int
	for _, ev := range events {
		text.WriteString(ev.text())
		if len(ev.Choices) > 0 && ev.Choices[0].FinishReason != nil {
			finish = *ev.Choices[0].FinishReason
		}
		if ev.Usage != nil {
			tokens = ev.Usage.CompletionTokens
		}
	}
	return tokens, finish, text.String()
}

func TestPlainJSON(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: fast})
	t.Run("chat", func(t *testing.T) {
		code, out := do(t, http.MethodPost, ts.URL+"/v1/chat/completions",
			`{"model":"inferprobe-simulator","max_tokens":6,"ignore_eos":true,"messages":[
				{"role":"system","content":"be brief"},
				{"role":"user","content":[{"type":"text","text":"one two  three"},{"type":"image_url","image_url":{"url":"x"}}]}]}`)
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, out)
		}
		r := decode[completionResponse](t, out)
		if r.Object != "chat.completion" || !strings.HasPrefix(r.ID, "chatcmpl-") || r.Model != DefaultModel || len(r.Choices) != 1 {
			t.Errorf("unexpected response %s", out)
		}
		if r.Usage == nil || *r.Usage != (usage{PromptTokens: 5, CompletionTokens: 6, TotalTokens: 11}) {
			t.Errorf("usage = %+v", r.Usage)
		}
	})
	t.Run("completions", func(t *testing.T) {
		code, out := do(t, http.MethodPost, ts.URL+"/v1/completions", `{"prompt":["a b","c"],"max_tokens":4,"ignore_eos":true}`)
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, out)
		}
		r := decode[struct {
			Object  string `json:"object"`
			ID      string `json:"id"`
			Choices []textChoice
			Usage   usage
		}](t, out)
		if r.Object != "text_completion" || !strings.HasPrefix(r.ID, "cmpl-") || len(r.Choices) != 1 || countWords(r.Choices[0].Text) != 4 || r.Choices[0].FinishReason != "length" {
			t.Errorf("unexpected response %s", out)
		}
		if r.Usage != (usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}) {
			t.Errorf("usage = %+v", r.Usage)
		}
	})
}

func TestPromptWords(t *testing.T) {
	for in, want := range map[string]int{
		`"one two three"`:              3,
		`"  leading\tand\ntrailing  "`: 3,
		`""`:                           0,
		`null`:                         0,
		`["a b", "c"]`:                 3,
		`[{"type":"text","text":"a b"},{"type":"image_url","image_url":{"url":"u"}}]`: 2,
		`[1, 2, 3]`:           3,
		`[[1, 2], [3]]`:       3,
		`"non\u00a0breaking"`: 2,
	} {
		got := decode[promptWords](t, []byte(in))
		if int(got) != want {
			t.Errorf("%s: %d tokens, want %d", in, got, want)
		}
	}
}

func TestModelsAndHealth(t *testing.T) {
	_, ts := newTestServer(t, Config{Model: "my-model"})
	code, out := do(t, http.MethodGet, ts.URL+"/v1/models", nil)
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	m := decode[struct {
		Object string
		Data   []struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			OwnedBy string `json:"owned_by"`
		}
	}](t, out)
	if m.Object != "list" || len(m.Data) != 1 || m.Data[0].ID != "my-model" || m.Data[0].Object != "model" || m.Data[0].OwnedBy != "inferprobe-simulator" {
		t.Errorf("models = %s", out)
	}
	if code, _ := do(t, http.MethodGet, ts.URL+"/health", nil); code != http.StatusOK {
		t.Errorf("/health status %d", code)
	}
}

func TestRequestErrors(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: fast})
	for _, tc := range []struct {
		name, method, path, body string
		wantCode                 int
		wantType, wantMsg        string
	}{
		{"bad json", "POST", "/v1/chat/completions", `{"messages":`, 400, "invalid_request_error", "invalid JSON"},
		{"missing messages", "POST", "/v1/chat/completions", `{"max_tokens":3}`, 400, "invalid_request_error", "messages"},
		{"empty messages", "POST", "/v1/chat/completions", `{"messages":[]}`, 400, "invalid_request_error", "messages"},
		{"missing prompt", "POST", "/v1/completions", `{"messages":[{"content":"x"}]}`, 400, "invalid_request_error", "prompt is required"},
		{"bad prompt", "POST", "/v1/completions", `{"prompt":true}`, 400, "invalid_request_error", "invalid JSON"},
		{"zero max_tokens", "POST", "/v1/completions", `{"prompt":"x","max_tokens":0}`, 400, "invalid_request_error", "max_tokens must be at least 1"},
		{"min above max", "POST", "/v1/completions", `{"prompt":"x","max_completion_tokens":3,"min_tokens":4}`, 400, "invalid_request_error", "min_tokens must be less than or equal to max_completion_tokens"},
		{"negative min", "POST", "/v1/completions", `{"prompt":"x","min_tokens":-1}`, 400, "invalid_request_error", "min_tokens"},
		{"unknown model", "POST", "/v1/chat/completions", `{"model":"gpt-9","messages":[{"content":"x"}]}`, 404, "NotFoundError", "The model `gpt-9` does not exist."},
		{"wrong method", "GET", "/v1/chat/completions", "", 405, "", ""},
		{"wrong method on models", "POST", "/v1/models", "", 405, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := do(t, tc.method, ts.URL+tc.path, tc.body)
			if code != tc.wantCode {
				t.Fatalf("status %d, want %d: %s", code, tc.wantCode, out)
			}
			if tc.wantType == "" {
				return
			}
			checkAPIError(t, out, tc.wantCode, tc.wantType, tc.wantMsg)
		})
	}
}

func checkAPIError(t *testing.T, body []byte, code int, typ, msg string) {
	t.Helper()
	e := decode[apiError](t, body)
	if e.Error.Code != code || e.Error.Type != typ || !strings.Contains(e.Error.Message, msg) {
		t.Errorf("error body %s, want code %d, type %q, message containing %q", body, code, typ, msg)
	}
}

func TestErrorRate(t *testing.T) {
	p := fast
	p.ErrorRate = 1
	_, ts := newTestServer(t, Config{Profile: p})
	for _, stream := range []bool{false, true} {
		code, out := do(t, http.MethodPost, ts.URL+"/v1/chat/completions", fmt.Sprintf(`{"stream":%t,"messages":[{"content":"x"}]}`, stream))
		if code != http.StatusInternalServerError {
			t.Fatalf("status %d, want 500", code)
		}
		checkAPIError(t, out, 500, "server_error", "simulated")
	}
}

func TestSameSeedSameLengths(t *testing.T) {
	run := func(seed uint64) (lengths []int, texts []string) {
		_, ts := newTestServer(t, Config{Profile: fast, Seed: seed, NaturalTokens: 20})
		for range 15 {
			_, out := do(t, http.MethodPost, ts.URL+"/v1/chat/completions", `{"messages":[{"content":"x"}]}`)
			n, _, text := summarize(t, out, false)
			lengths, texts = append(lengths, n), append(texts, text)
		}
		return lengths, texts
	}
	l1, t1 := run(7)
	l2, t2 := run(7)
	l3, _ := run(8)
	if !slices.Equal(l1, l2) || !slices.Equal(t1, t2) {
		t.Errorf("same seed, different output: %v vs %v", l1, l2)
	}
	if slices.Equal(l1, l3) {
		t.Errorf("different seeds, same lengths %v", l1)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{MaxConcurrency: -1},
		{TokensPerChunk: -2},
		{Profile: Profile{Distribution: "uniform"}},
	} {
		if _, err := New(cfg, nil); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}
