package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// newTestServer starts the simulator behind an httptest server on 127.0.0.1.
func newTestServer(t testing.TB, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts
}

// fast is a profile that keeps tests quick.
var fast = Profile{TTFT: time.Millisecond, ITL: 100 * time.Microsecond}

func do(t testing.TB, method, url string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp.StatusCode, out
}

func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
	return v
}

// chunk is a stream event, decoded loosely enough to see what is absent.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

// text is the generated text a content chunk carries, or "".
func (c chunk) text() string {
	if len(c.Choices) == 0 {
		return ""
	}
	ch := c.Choices[0]
	switch {
	case ch.Delta != nil && ch.Delta.Content != nil:
		return *ch.Delta.Content
	case ch.Text != nil:
		return *ch.Text
	}
	return ""
}

// parseSSE splits a whole stream into its events' data, checking framing,
// and reports whether it ended with [DONE].
func parseSSE(t testing.TB, body []byte) (events []chunk, done bool) {
	t.Helper()
	s := string(body)
	if !strings.HasSuffix(s, "\n\n") {
		t.Fatalf("stream does not end with a blank line: %q", s)
	}
	for _, ev := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("malformed event %q", ev)
		}
		if done {
			t.Fatalf("event after [DONE]: %q", ev)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		events = append(events, decode[chunk](t, []byte(data)))
	}
	return events, done
}

// event is one flushed write seen by a recorder.
type event struct {
	who  string
	at   time.Time
	data string
}

// eventLog orders the flushes of several recorders. Appends happen in the
// handlers' goroutines, so the order is the server's own.
type eventLog struct {
	mu     sync.Mutex
	events []event
}

func (l *eventLog) add(e event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) snapshot() []event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]event(nil), l.events...)
}

// recorder is a ResponseWriter that logs each flush as an event, for tests
// that need the server-side order or timing of a stream's writes.
type recorder struct {
	who     string
	log     *eventLog
	header  http.Header
	status  int
	pending []byte
	flushed chan string // each flushed event's data, when not nil
}

func newRecorder(who string, log *eventLog) *recorder {
	return &recorder{who: who, log: log, header: http.Header{}, flushed: make(chan string, 4096)}
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	r.pending = append(r.pending, b...)
	return len(b), nil
}
func (r *recorder) Flush() {
	data := string(r.pending)
	r.pending = r.pending[:0]
	r.log.add(event{who: r.who, at: time.Now(), data: data})
	r.flushed <- data
}

// serve runs one request through h in the background, returning a channel
// closed when the handler has returned.
func serve(ctx context.Context, h http.Handler, w http.ResponseWriter, path, body string) <-chan struct{} {
	done := make(chan struct{})
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, strings.NewReader(body))
	go func() {
		defer close(done)
		h.ServeHTTP(w, req)
	}()
	return done
}

// waitFor fails the test instead of hanging when ch never fires.
func waitFor[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("gave up waiting for %s", what)
		var zero T
		return zero
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readAll(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return b
}
