package servermetrics

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/stats"
)

// vllmText is a vLLM-style /metrics after n requests, each with a TTFT of
// 0.05 s but the last of every ten, 0.3 s.
func vllmText(n int) string {
	slow := n / 10
	fast := n - slow
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n# TYPE vllm:num_requests_waiting gauge\n")
	fmt.Fprintf(&b, "vllm:num_requests_waiting{model_name=\"m\"} %d\n", n%3)
	fmt.Fprintf(&b, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\n")
	fmt.Fprintf(&b, "vllm:num_requests_running{model_name=\"m\"} 4\n")
	fmt.Fprintf(&b, "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n# TYPE vllm:kv_cache_usage_perc gauge\n")
	fmt.Fprintf(&b, "vllm:kv_cache_usage_perc{model_name=\"m\"} 0.25\n")
	fmt.Fprintf(&b, "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n# TYPE vllm:prompt_tokens_total counter\n")
	fmt.Fprintf(&b, "vllm:prompt_tokens_total{model_name=\"m\"} %d\n", 100*n)
	fmt.Fprintf(&b, "# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.\n# TYPE vllm:time_to_first_token_seconds histogram\n")
	for _, le := range []struct {
		le string
		n  int
	}{{"0.04", 0}, {"0.06", fast}, {"0.25", fast}, {"0.5", n}, {"+Inf", n}} {
		fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_bucket{le=%q,model_name=\"m\"} %d\n", le.le, le.n)
	}
	fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_sum{model_name=\"m\"} %g\n", 0.05*float64(fast)+0.3*float64(slow))
	fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_count{model_name=\"m\"} %d\n", n)
	return b.String()
}

// fakeEngine serves vllmText; requests is what it has "served", set by the test.
func fakeEngine(t *testing.T, requests *atomic.Int64) string {
	url, _ := countedEngine(t, requests)
	return url
}

// countedEngine is fakeEngine, with the number of scrapes it answered.
func countedEngine(t *testing.T, requests *atomic.Int64) (string, *atomic.Int64) {
	var scrapes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, vllmText(int(requests.Load())))
		scrapes.Add(1) // after the read: a scrape counted after a change saw it
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics", &scrapes
}

func TestCollectorCountsTheRunOnly(t *testing.T) {
	var requests atomic.Int64
	requests.Store(50) // served before the run: not the run's
	url, scrapes := countedEngine(t, &requests)
	c := Start(Options{URLs: []string{url}, Interval: 10 * time.Millisecond})
	start := c.Mark()
	// Each count is read at least once, so the waiting gauge (requests mod 3) reaches 2
	// however slowly the machine scrapes.
	for range 20 {
		requests.Add(1)
		for seen := scrapes.Load(); scrapes.Load() < seen+2; {
			time.Sleep(time.Millisecond)
		}
	}
	col := c.Stop(start)

	m := col.Metrics(col.Start, col.End)
	ttft := m["vllm:time_to_first_token_seconds"]
	if ttft == nil || ttft.Type != "histogram" || ttft.Unit != "seconds" || len(ttft.Series) != 1 {
		t.Fatalf("TTFT metric = %+v", ttft)
	}
	st := ttft.Series[0].Stats.(HistogramStats)
	if st.Count != 20 {
		t.Errorf("TTFT count over the run = %d, want 20 (not the 50 before it)", st.Count)
	}
	if got := ttft.Series[0].Labels["model_name"]; got != "m" {
		t.Errorf("labels = %v", ttft.Series[0].Labels)
	}
	if c := m["vllm:prompt_tokens_total"].Series[0].Stats.(CounterStats); c.Total != 2000 || c.Rate <= 0 {
		t.Errorf("prompt tokens over the run = %+v, want total 2000", c)
	}
	if g := m["vllm:num_requests_running"].Series[0].Stats.(GaugeStats); g.Avg != 4 || g.Max != 4 || g.Std != 0 {
		t.Errorf("running = %+v", g)
	}

	sums := col.Summaries()
	if len(sums) != 1 || sums[0].Engine != "vllm" || len(sums[0].Lacks) != 0 {
		t.Fatalf("summaries = %+v", sums)
	}
	s := sums[0]
	if s.Running.Avg != 4 || s.KVCache.Max != 0.25 || s.Waiting.Max != 2 {
		t.Errorf("levels: running %+v, KV %+v, waiting %+v", s.Running, s.KVCache, s.Waiting)
	}
	// 18 fast (0.04–0.06 s) and 2 slow (0.25–0.5 s): p50 interpolates in the
	// fast bucket, p99 in the slow one.
	if s.TTFT.Count != 20 || s.TTFT.P50 < 0.04 || s.TTFT.P50 > 0.06 || s.TTFT.P99 < 0.25 || s.TTFT.P99 > 0.5 {
		t.Errorf("server TTFT = %+v", s.TTFT)
	}
	// Only the readings at the start, the measured requests' start and the
	// end keep their histograms; the others only their gauges.
	whole := 0
	for _, s := range col.Endpoints[0].Scrapes {
		if _, ok := s.Families["vllm:time_to_first_token_seconds"]; ok {
			whole++
		}
		if _, ok := s.Families["vllm:num_requests_running"]; !ok {
			t.Error("a reading lost its gauges")
		}
	}
	if n := len(col.Endpoints[0].Scrapes); whole != 3 || n < 4 {
		t.Errorf("%d of %d readings kept whole, want 3", whole, n)
	}
	info := col.Info()[col.Endpoints[0].URL]
	if info.TotalFetches < 3 || info.UniqueUpdates < 2 {
		t.Errorf("endpoint info = %+v", info)
	}
}

// The client's TTFT less the engine's is a number only where it is at least
// the width of the engine's bucket that percentile was interpolated in.
func TestTTFTGapOnlyBeyondTheBucket(t *testing.T) {
	var requests atomic.Int64
	c := Start(Options{URLs: []string{fakeEngine(t, &requests)}, Interval: 10 * time.Millisecond})
	start := c.Mark()
	requests.Store(20) // 18 in (0.04, 0.06], 2 in (0.25, 0.5]
	col := c.Stop(start)
	engine := col.Summaries()[0].TTFT
	// p50 and p90 in a bucket 20 ms wide, p99 in one 250 ms wide.
	client := stats.Stats{Count: 20, P50: engine.P50 + 0.005, P90: engine.P90 + 0.1, P99: engine.P99 - 0.1}
	r := col.Report(client)
	g := r.Engines[0].TTFTGap
	if g == nil || g.P50 != nil || g.P99 != nil || g.P90 == nil || math.Abs(*g.P90-0.1) > 1e-9 || !g.Unresolved() {
		t.Fatalf("gap = %+v for client %+v against engine %+v; want p50 and p99 unresolved, p90 0.1", g, client, engine)
	}
	if js, err := json.Marshal(r); err != nil || !strings.Contains(string(js), `"p50":null`) {
		t.Errorf("JSON %s (%v): want an unresolved percentile as null", js, err)
	}
}

// A target without Prometheus metrics is off for the run, said once in the
// log, and never an error.
func TestCollectorOffWhenAbsent(t *testing.T) {
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<html><body>not metrics {{</body></html>\n")
	}))
	defer garbage.Close()
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	for name, u := range map[string]string{"garbage": garbage.URL, "404": missing.URL, "unreachable": closed.URL} {
		t.Run(name, func(t *testing.T) {
			var log bytes.Buffer
			c := Start(Options{URLs: []string{MetricsURL(u)}, Interval: 5 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			start := c.Mark()
			time.Sleep(30 * time.Millisecond)
			col := c.Stop(start)
			if off := col.Endpoints[0].Off; off == "" || len(col.Endpoints[0].Scrapes) != 0 {
				t.Errorf("endpoint = %+v, want off", col.Endpoints[0])
			}
			if n := strings.Count(log.String(), "server metrics off"); n != 1 {
				t.Errorf("logged %d times, want once:\n%s", n, log.String())
			}
			if len(col.Successful()) != 0 || col.Metrics(col.Start, col.End) != nil || col.Summaries() != nil {
				t.Error("an endpoint that is off gave metrics")
			}
		})
	}
}

func TestQuantileAsPrometheus(t *testing.T) {
	// 10 in (0, 1], 10 in (1, 2], none above.
	b := []bucket{{1, 10}, {2, 20}, {math.Inf(1), 20}}
	for _, c := range []struct{ q, want float64 }{{0.5, 1}, {0.25, 0.5}, {0.75, 1.5}, {1, 2}} {
		if got, w := quantile(c.q, b, series{}); math.Abs(got-c.want) > 1e-9 || w != 1 {
			t.Errorf("quantile(%g) = %g in a bucket %g wide, want %g in one 1 wide", c.q, got, w, c.want)
		}
	}
	// Above the highest finite bound: that bound, as histogram_quantile.
	if got, w := quantile(0.99, []bucket{{1, 1}, {math.Inf(1), 10}}, series{}); got != 1 || !math.IsInf(w, 1) {
		t.Errorf("quantile in +Inf = %g in a bucket %g wide, want 1 in an unbounded one", got, w)
	}
	// From a base: only the increase counts.
	base := series{Buckets: []bucket{{1, 100}, {2, 100}, {math.Inf(1), 100}}}
	if got, _ := quantile(0.5, []bucket{{1, 100}, {2, 110}, {math.Inf(1), 110}}, base); got != 1.5 {
		t.Errorf("quantile of the increase = %g, want 1.5", got)
	}
}

func TestMetricsURL(t *testing.T) {
	for in, want := range map[string]string{
		"node1:8081": "http://node1:8081/metrics", "http://h:9090/metrics": "http://h:9090/metrics",
		"https://h/x/": "https://h/x/metrics",
	} {
		if got := MetricsURL(in); got != want {
			t.Errorf("MetricsURL(%q) = %q, want %q", in, got, want)
		}
	}
	if got, _ := DiscoveredURL("http://127.0.0.1:8000/v1"); got != "http://127.0.0.1:8000/metrics" {
		t.Errorf("DiscoveredURL = %q", got)
	}
}

// An https engine with a private CA is read with the target's TLS settings,
// and is off without them.
func TestCollectorUsesTargetTLS(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, vllmText(int(requests.Load())))
	}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	for name, tc := range map[string]struct {
		tls    *tls.Config
		wantOn bool
	}{"the target's CA": {&tls.Config{RootCAs: pool}, true}, "Go's defaults": {nil, false}} {
		t.Run(name, func(t *testing.T) {
			c := Start(Options{URLs: []string{srv.URL + "/metrics"}, Interval: 5 * time.Millisecond, TLS: tc.tls})
			start := c.Mark()
			time.Sleep(20 * time.Millisecond)
			col := c.Stop(start)
			if on := col.Endpoints[0].Off == ""; on != tc.wantOn {
				t.Errorf("endpoint on = %v, want %v (off: %q)", on, tc.wantOn, col.Endpoints[0].Off)
			}
		})
	}
}
