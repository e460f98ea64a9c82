package prober

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

func testTarget(t *testing.T, url string, mod func(*scenarios.Target)) *Target {
	t.Helper()
	st := &scenarios.Target{URL: url, Endpoint: "chat", Model: "m", APIKey: "sk-test",
		Timeout: scenarios.Duration(5 * time.Second), StallTimeout: scenarios.Duration(5 * time.Second)}
	if mod != nil {
		mod(st)
	}
	tg, err := NewTarget("t", st)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func do(t *testing.T, tg *Target, params map[string]any) *record.Record {
	t.Helper()
	req, err := NewRequest(tg, dataset.Prompt{Text: "hello there", InputTokens: 2, OutputTokens: 3}, params)
	if err != nil {
		t.Fatal(err)
	}
	return NewClient().Do(context.Background(), tg, req)
}

func TestRequestBody(t *testing.T) {
	var got map[string]any
	var header http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("path %q", r.URL.Path)
		}
		_ = json.NewDecoder(r.Body).Decode(&got)
		io.WriteString(w, chat(" a")+chat(" b")+chat(" c")+"data: [DONE]\n\n")
	}))
	defer srv.Close()
	tg := testTarget(t, srv.URL+"/v1/", func(st *scenarios.Target) { st.Headers = map[string]string{"X-Team": "sre"} })
	rec := do(t, tg, map[string]any{"ignore_eos": true, "temperature": 0.5})
	if rec.Outcome != record.OutcomeOK || rec.PinnedOutputTokens != 3 || rec.OutputTokens != 3 {
		t.Fatalf("record %+v", rec)
	}
	want := map[string]any{
		"model": "m", "max_tokens": 3.0, "stream": true, "ignore_eos": true, "temperature": 0.5,
		"stream_options": map[string]any{"include_usage": true},
		"messages":       []any{map[string]any{"role": "user", "content": "hello there"}},
	}
	if g, w := mustJSON(got), mustJSON(want); g != w {
		t.Errorf("body\n got %s\nwant %s", g, w)
	}
	if header.Get("Authorization") != "Bearer sk-test" || header.Get("X-Team") != "sre" || header.Get("Accept") != "text/event-stream" {
		t.Errorf("headers %v", header)
	}
	if rec.Lag() < 0 || rec.Sent.IsZero() {
		t.Errorf("Sent %v Scheduled %v", rec.Sent, rec.Scheduled)
	}
}

func TestCompletionsNonStreaming(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/completions" {
			t.Errorf("path %q", r.URL.Path)
		}
		_ = json.NewDecoder(r.Body).Decode(&got)
		io.WriteString(w, `{"choices":[{"text":" a b c"}],"usage":{"prompt_tokens":2,"completion_tokens":3}}`)
	}))
	defer srv.Close()
	no := false
	tg := testTarget(t, srv.URL+"/v1", func(st *scenarios.Target) { st.Endpoint = "completions"; st.Stream = &no })
	rec := do(t, tg, nil)
	if rec.Outcome != record.OutcomeOK || rec.OutputTokens != 3 || len(rec.Chunks) != 0 || rec.Duration <= 0 {
		t.Fatalf("record %+v", rec)
	}
	if got["prompt"] != "hello there" || got["stream"] != nil || got["stream_options"] != nil {
		t.Errorf("body %v", got)
	}
}

func TestErrorReasons(t *testing.T) {
	handler := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		target  func(*scenarios.Target)
		reason  record.Reason
		errHas  string
		// lasts: a request we cut ends when we gave up, not at the last
		// byte before the silence. The timeout also runs while connecting,
		// before the time origin, hence some slack.
		lasts time.Duration
	}{
		{"400", handler(400, `{"error":{"message":"bad request"}}`), nil, record.ReasonHTTP4xx, "bad request", 0},
		{"401", handler(401, `unauthorized`), nil, record.ReasonHTTP4xx, "HTTP 401", 0},
		{"429", handler(429, `slow down`), nil, record.ReasonHTTP429, "HTTP 429", 0},
		{"500", handler(500, `<html>oops</html>`), nil, record.ReasonHTTP5xx, "oops", 0},
		{"503", handler(503, ``), nil, record.ReasonHTTP5xx, "HTTP 503", 0},
		{"redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) }, nil, record.ReasonProtocol, "HTTP 302", 0},
		{"stall", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, chat(" a"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, func(st *scenarios.Target) { st.StallTimeout = scenarios.Duration(50 * time.Millisecond) }, record.ReasonStall, "", 50 * time.Millisecond},
		{"timeout after a chunk", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, chat(" a"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, func(st *scenarios.Target) { st.Timeout = scenarios.Duration(100 * time.Millisecond) }, record.ReasonTimeout, "", 80 * time.Millisecond},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			for {
				if _, err := io.WriteString(w, ": ping\n\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}, func(st *scenarios.Target) { st.Timeout = scenarios.Duration(100 * time.Millisecond) }, record.ReasonTimeout, "", 80 * time.Millisecond},
		{"no headers", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			func(st *scenarios.Target) { st.Timeout = scenarios.Duration(50 * time.Millisecond) }, record.ReasonTimeout, "", 40 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(drained(tc.handler))
			defer srv.Close()
			rec := do(t, testTarget(t, srv.URL, tc.target), nil)
			if rec.Outcome != record.OutcomeError || rec.Reason != tc.reason || !strings.Contains(rec.Err, tc.errHas) {
				t.Errorf("outcome %v reason %q err %q, want error %q containing %q", rec.Outcome, rec.Reason, rec.Err, tc.reason, tc.errHas)
			}
			if rec.Duration < tc.lasts {
				t.Errorf("duration %v, want at least %v: the request ends when the client gave up", rec.Duration, tc.lasts)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rec := do(t, testTarget(t, "http://"+addr, nil), nil)
	if rec.Reason != record.ReasonConnect || rec.Status != 0 {
		t.Fatalf("reason %q status %d err %q, want connect", rec.Reason, rec.Status, rec.Err)
	}
	// No connection was had: no phases, not a setup timed from when it was
	// asked for to the attempt's start.
	if rec.Phases != (record.Phases{}) {
		t.Errorf("phases %+v without a connection, want none", rec.Phases)
	}
}

func TestCancelledIsNotAnError(t *testing.T) {
	srv := httptest.NewServer(drained(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, chat(" a"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	tg := testTarget(t, srv.URL, nil)
	req, _ := NewRequest(tg, dataset.Prompt{Text: "x", InputTokens: 1, OutputTokens: 4}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	rec := NewClient().Do(ctx, tg, req)
	if rec.Outcome != record.OutcomeCancelled || rec.Reason != record.ReasonNone {
		t.Fatalf("outcome %v reason %q, want cancelled", rec.Outcome, rec.Reason)
	}
}

// TestCancelAfterWrite: a request the client cancels on purpose with no
// delay is still sent whole — AIPerf's "send the full request, then
// disconnect" — and comes back cancelled, saying who cancelled it, not as
// an error.
func TestCancelAfterWrite(t *testing.T) {
	bodies := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- len(b)
		<-r.Context().Done()
	}))
	defer srv.Close()
	tg := testTarget(t, srv.URL, nil)
	req, _ := NewRequest(tg, dataset.Prompt{Text: strings.Repeat("word ", 2000), InputTokens: 2000, OutputTokens: 4}, nil)
	req.Cancel = true
	rec := NewClient().Do(context.Background(), tg, req)
	if rec.Outcome != record.OutcomeCancelled || rec.Reason != record.ReasonNone || rec.Sent.IsZero() {
		t.Fatalf("outcome %v reason %q sent %v, want cancelled after its send", rec.Outcome, rec.Reason, rec.Sent)
	}
	if !strings.Contains(rec.Err, "cancelled by the client") {
		t.Errorf("err %q does not say the client cancelled it", rec.Err)
	}
	if n := <-bodies; n != len(req.Body) {
		t.Errorf("server read %d of the body's %d bytes before the cancel", n, len(req.Body))
	}
}

// drained reads the request body before calling h: only then does the server
// watch the connection and cancel the request's context when the client leaves,
// which the handlers that wait for the client rely on.
func drained(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h(w, r)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The transport's connection buffers are smaller than a long header line, a
// long event or a long prompt: each must still pass whole, across reads and
// writes.
func TestLongerThanConnBuffers(t *testing.T) {
	long := strings.Repeat("x", 3*connBufferBytes)
	prompt := strings.Repeat("word ", 2*connBufferBytes)
	var gotPrompt string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err == nil && len(body.Messages) == 1 {
			gotPrompt = body.Messages[0].Content
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Long", long)
		io.WriteString(w, chat(" a"))
		w.(http.Flusher).Flush()
		io.WriteString(w, chat(long)+"data: [DONE]\n\n")
	}))
	defer srv.Close()
	tg := testTarget(t, srv.URL+"/v1/", nil)
	req, err := NewRequest(tg, dataset.Prompt{Text: prompt, InputTokens: 2 * connBufferBytes, OutputTokens: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := NewClient().Do(context.Background(), tg, req)
	if rec.Outcome != record.OutcomeOK || len(rec.Chunks) != 2 {
		t.Fatalf("record %+v", rec)
	}
	if gotPrompt != prompt {
		t.Errorf("the server got a prompt of %d bytes, want %d", len(gotPrompt), len(prompt))
	}
}
