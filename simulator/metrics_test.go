package simulator

import (
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
)

// scrapeSim returns the samples of the simulator's /metrics by series, as the text format
// writes them (name{labels}).
func scrapeSim(t *testing.T, url string) map[string]float64 {
	t.Helper()
	code, body := do(t, http.MethodGet, url+"/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	samples := map[string]float64{}
	for _, m := range regexp.MustCompile(`(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$`).FindAllStringSubmatch(string(body), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("%s: %v", m[0], err)
		}
		samples[m[1]] = v
	}
	return samples
}

// TestVLLMMetrics: /metrics has vLLM's queue, batch, KV-cache and latency series, by
// model_name, and they follow the requests: one in the batch and one queued behind it
// while a slot is taken, all back to zero after.
func TestVLLMMetrics(t *testing.T) {
	const ttft = 300 * time.Millisecond
	_, ts := newTestServer(t, Config{MaxConcurrency: 1, Profile: Profile{TTFT: ttft, ITL: time.Millisecond}})
	const model = `{model_name="inferprobe-simulator"}`
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			code, _ := do(t, http.MethodPost, ts.URL+"/v1/chat/completions", map[string]any{
				"messages": []any{map[string]any{"role": "user", "content": "hello there"}}, "max_tokens": 4, "ignore_eos": true, "stream": true,
			})
			if code != http.StatusOK {
				t.Errorf("completion: %d", code)
			}
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := scrapeSim(t, ts.URL)
		if s["vllm:num_requests_running"+model] == 1 && s["vllm:num_requests_waiting"+model] == 1 {
			if s["vllm:kv_cache_usage_perc"+model] <= 0 || s["vllm:gpu_cache_usage_perc"+model] != s["vllm:kv_cache_usage_perc"+model] {
				t.Errorf("KV-cache usage %v / %v with a request in the batch; want the same positive figure under both names",
					s["vllm:kv_cache_usage_perc"+model], s["vllm:gpu_cache_usage_perc"+model])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw one request running and one waiting: %v", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	s := scrapeSim(t, ts.URL)
	for series, want := range map[string]float64{
		"vllm:num_requests_running" + model:                                                      0,
		"vllm:num_requests_waiting" + model:                                                      0,
		"vllm:kv_cache_usage_perc" + model:                                                       0,
		"vllm:time_to_first_token_seconds_count" + model:                                         2,
		"vllm:e2e_request_latency_seconds_count" + model:                                         2,
		"vllm:generation_tokens_total" + model:                                                   8,
		`vllm:request_success_total{finished_reason="length",model_name="inferprobe-simulator"}`: 2,
		// Exported from the start, so that rate() sees the first request that stops.
		`vllm:request_success_total{finished_reason="stop",model_name="inferprobe-simulator"}`: 0,
	} {
		if got, ok := s[series]; !ok || got != want {
			t.Errorf("%s = %v (present: %v), want %v", series, got, ok, want)
		}
	}
	// The second request waited for the first (about one TTFT) before its own: vLLM's TTFT
	// counts from arrival, so the sum is near 3 TTFTs, and 2 without the queue.
	if sum := s["vllm:time_to_first_token_seconds_sum"+model]; sum < 2.5*ttft.Seconds() {
		t.Errorf("TTFT sum %.3fs: want about %.3fs (%s, then %s behind the first request), at least %.3fs", sum, 3*ttft.Seconds(), ttft, 2*ttft, 2.5*ttft.Seconds())
	}
	if s["vllm:prompt_tokens_total"+model] <= 0 {
		t.Errorf("vllm:prompt_tokens_total = %v, want the prompts' tokens", s["vllm:prompt_tokens_total"+model])
	}
	if _, ok := s[`vllm:time_to_first_token_seconds_bucket{model_name="inferprobe-simulator",le="0.25"}`]; !ok {
		t.Error("TTFT has no le=\"0.25\" bucket: want vLLM's bucket layout")
	}
}
