package simulator

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Thousands of concurrent streams over real loopback connections run to
// completion, each with every token and its terminator.
func TestManyConcurrentStreams(t *testing.T) {
	const streams, tokens = 2000, 16
	// The TTFT holds the first streams open while the last connect, so
	// that they overlap.
	_, ts := newTestServer(t, Config{Profile: Profile{TTFT: 200 * time.Millisecond, ITL: time.Millisecond}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)
	body := fmt.Sprintf(`{"stream":true,"ignore_eos":true,"max_tokens":%d,"messages":[{"content":"x"}]}`, tokens)

	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for i := range streams {
		wg.Go(func() {
			resp, err := client.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				errs <- fmt.Errorf("stream %d: %w", i, err)
				return
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				errs <- fmt.Errorf("stream %d: %w", i, err)
				return
			}
			if got := strings.Count(string(raw), `{"content":" `); resp.StatusCode != http.StatusOK || got != tokens || !strings.HasSuffix(string(raw), "data: [DONE]\n\n") {
				errs <- fmt.Errorf("stream %d: status %d, %d tokens, want %d and [DONE]", i, resp.StatusCode, got, tokens)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
