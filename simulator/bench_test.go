package simulator

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// discard is a ResponseWriter that throws the stream away, so that the
// benchmark measures the simulator and not a network stack.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) Flush()                      {}

// BenchmarkStream streams 1,024 tokens per op with zero latencies, and
// reports heap allocations per streamed token (the per-request ones
// spread over the stream). "handler" is the simulator alone; "loopback"
// adds net/http on both ends of a 127.0.0.1 connection.
func BenchmarkStream(b *testing.B) {
	const tokens = 1024
	body := fmt.Sprintf(`{"stream":true,"ignore_eos":true,"max_tokens":%d,"stream_options":{"include_usage":true},"messages":[{"content":"x"}]}`, tokens)
	s, err := New(Config{}, nil)
	if err != nil {
		b.Fatal(err)
	}

	b.Run("handler", func(b *testing.B) {
		h := s.Handler()
		measure(b, tokens, func() {
			req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
			h.ServeHTTP(&discard{header: http.Header{}}, req)
		})
	})

	b.Run("loopback", func(b *testing.B) {
		ts := httptest.NewServer(s.Handler())
		defer ts.Close()
		measure(b, tokens, func() {
			resp, err := ts.Client().Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		})
	})
}

func measure(b *testing.B, tokens int, stream func()) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ops := 0
	for b.Loop() {
		stream()
		ops++
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(ops*tokens), "allocs/token")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ops*tokens), "ns/token")
}
