package simulator

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// kvCacheTokens is the simulated KV cache's size in tokens: a request holds its prompt and
// its whole planned output from admission to its end (vLLM allocates blocks as it goes;
// reserving at once keeps the figure simple and never under the real one).
const kvCacheTokens = 1 << 16

// serverMetrics is the simulator's own /metrics in vLLM's names, types, buckets and
// model_name label (vLLM 0.11's V1 engine), so that dashboards and tools that read a vLLM
// server's metrics have something of the same shape to read.
type serverMetrics struct {
	registry                      *prometheus.Registry
	running, waiting              prometheus.Gauge
	kvUsage, gpuCacheUsage        prometheus.Gauge // vLLM exports both names of the same figure
	ttft, itl, e2e                prometheus.Histogram
	promptTokens, generatedTokens prometheus.Counter
	success                       *prometheus.CounterVec

	mu     sync.Mutex
	kvHeld int // tokens the admitted requests hold in the simulated KV cache
}

func newServerMetrics(model string) *serverMetrics {
	labels := prometheus.Labels{"model_name": model}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})
	}
	m := &serverMetrics{
		registry:      prometheus.NewRegistry(),
		running:       gauge("vllm:num_requests_running", "Number of requests in model execution batches."),
		waiting:       gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed."),
		kvUsage:       gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."),
		gpuCacheUsage: gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage."),
		ttft: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "vllm:time_to_first_token_seconds", Help: "Histogram of time to first token in seconds.", ConstLabels: labels,
			Buckets: []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0},
		}),
		itl: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "vllm:inter_token_latency_seconds", Help: "Histogram of inter-token latency in seconds.", ConstLabels: labels,
			Buckets: []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0},
		}),
		e2e: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "vllm:e2e_request_latency_seconds", Help: "Histogram of e2e request latency in seconds.", ConstLabels: labels,
			Buckets: []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0},
		}),
		promptTokens:    prometheus.NewCounter(prometheus.CounterOpts{Name: "vllm:prompt_tokens_total", Help: "Number of prefill tokens processed.", ConstLabels: labels}),
		generatedTokens: prometheus.NewCounter(prometheus.CounterOpts{Name: "vllm:generation_tokens_total", Help: "Number of generation tokens processed.", ConstLabels: labels}),
		success: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vllm:request_success_total", Help: "Count of successfully processed requests.", ConstLabels: labels,
		}, []string{"finished_reason"}),
	}
	// Every finish reason the simulator gives is exported from 0, as vLLM exports its own.
	for _, reason := range []string{"stop", "length"} {
		m.success.WithLabelValues(reason)
	}
	m.registry.MustRegister(m.running, m.waiting, m.kvUsage, m.gpuCacheUsage, m.ttft, m.itl, m.e2e, m.promptTokens, m.generatedTokens, m.success)
	return m
}

func (m *serverMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// admit moves a request from the queue into the batch, holding tokens of the KV cache.
// The cache is held before the request counts as running, and released below before it
// stops counting, so that a scrape never sees a request in the batch without its cache.
func (m *serverMetrics) admit(tokens int) {
	m.hold(tokens)
	m.waiting.Dec()
	m.running.Inc()
}

// done ends an admitted request: queued is when it arrived, firstDue when its first token
// was due, and finish its finish reason, "" when the client left before the end.
func (m *serverMetrics) done(tokens, promptTokens, outputTokens int, queued, firstDue time.Time, finish string) {
	now := time.Now()
	m.hold(-tokens)
	m.running.Dec()
	if !now.Before(firstDue) {
		m.ttft.Observe(firstDue.Sub(queued).Seconds())
	}
	m.promptTokens.Add(float64(promptTokens))
	if finish == "" {
		return
	}
	m.generatedTokens.Add(float64(outputTokens))
	m.e2e.Observe(now.Sub(queued).Seconds())
	m.success.WithLabelValues(finish).Inc()
}

func (m *serverMetrics) hold(tokens int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kvHeld += tokens
	usage := min(float64(m.kvHeld)/kvCacheTokens, 1)
	m.kvUsage.Set(usage)
	m.gpuCacheUsage.Set(usage)
}
