package finite

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/servermetrics"
)

// engineExec is a fakeExec whose server counts the requests it served in a
// vLLM-style TTFT histogram, as an engine's /metrics does.
type engineExec struct {
	fakeExec
	served atomic.Int64
}

func (e *engineExec) Do(ctx context.Context, t *prober.Target, req *prober.Request) *record.Record {
	rec := e.fakeExec.Do(ctx, t, req)
	e.served.Add(1)
	return rec
}

func (e *engineExec) metrics(w http.ResponseWriter, _ *http.Request) {
	n := e.served.Load()
	fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n")
	fmt.Fprintf(w, "# TYPE vllm:time_to_first_token_seconds histogram\n")
	fmt.Fprintf(w, "vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} %d\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} %d\n", n, n)
	fmt.Fprintf(w, "vllm:time_to_first_token_seconds_sum %g\nvllm:time_to_first_token_seconds_count %d\n", 0.05*float64(n), n)
}

// TestServerMetricsOverTheMeasuredRequests: the server's metrics count the
// measured requests, not the warmup's.
func TestServerMetricsOverTheMeasuredRequests(t *testing.T) {
	exec := &engineExec{fakeExec: fakeExec{delay: 5 * time.Millisecond}}
	srv := httptest.NewServer(http.HandlerFunc(exec.metrics))
	defer srv.Close()
	s := spec(t, nil)
	s.Limit, s.Warmup = prober.Limit{Requests: 6}, prober.Limit{Requests: 3}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	res := New(p, exec, WithServerMetrics(servermetrics.Options{URLs: []string{srv.URL + "/metrics"}, Interval: 10 * time.Millisecond})).
		Execute(context.Background(), context.Background())
	col := res.ServerMetrics
	if col == nil || col.WarmupStart.IsZero() || !col.WarmupStart.Before(col.Start) {
		t.Fatalf("server metrics = %+v, want a warmup window before the profiling one", col)
	}
	sums := col.Summaries()
	if len(sums) != 1 || sums[0].TTFT == nil || sums[0].TTFT.Count != 6 {
		t.Fatalf("summaries = %+v, want the 6 measured requests' TTFT", sums)
	}
	warm := col.Metrics(col.WarmupStart, col.Start)["vllm:time_to_first_token_seconds"]
	if got := warm.Series[0].Stats.(servermetrics.HistogramStats).Count; got != 3 {
		t.Errorf("warmup TTFT count = %d, want 3", got)
	}
}
