package e2e

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
)

// startDemo runs `inferprobe demo` with a constant 200ms TTFT and 10ms ITL and
// returns its /metrics URL once it answers, which must be within 10s.
func startDemo(t *testing.T) (addr, metricsURL string) {
	t.Helper()
	addr = freeAddr(t)
	p := inferprobe(t, "inferprobe demo", t.TempDir(), "demo",
		"--web.listen-address="+addr, "--sim.ttft=200ms", "--sim.itl=10ms", "--sim.distribution=constant")
	metricsURL = "http://" + addr + "/metrics"
	waitHealthy(t, p, metricsURL, 10*time.Second)
	return addr, metricsURL
}

func TestDemoNativeHistogramsInPrometheus(t *testing.T) {
	requirePrometheus(t)
	addr, _ := startDemo(t)
	prom := startPrometheus(t, "inferprobe", addr)

	const (
		ttft = `inferprobe_time_to_first_token_seconds{scenario="chat-steady"}`
		itl  = `inferprobe_inter_token_latency_seconds{scenario="chat-steady"}`
		// Enough requests in the rate window that the median is not a
		// handful of samples: 10s of the demo's 4 req/s.
		minRequests = 40
	)
	// histogram_count only accepts native histograms, so data here already
	// says the series was ingested as one.
	eventually(t, 60*time.Second, "Prometheus has "+fmt.Sprint(minRequests)+" TTFT samples in the last minute", func() error {
		n, err := prom.scalar(`histogram_count(sum(increase(` + ttft + `[1m])))`)
		if err != nil {
			return err
		}
		if n < minRequests {
			return fmt.Errorf("%.1f samples", n)
		}
		return nil
	})

	// The aggregated rate is a histogram sample in the API's answer, not a float.
	res, err := prom.query(`sum(rate(` + ttft + `[1m]))`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || len(res[0].Histogram) != 2 || res[0].Value != nil {
		t.Fatalf("sum(rate(TTFT)) = %+v, want one native histogram sample", res)
	}

	for _, c := range []struct {
		name, series string
		want         time.Duration
	}{
		{"time to first token", ttft, 200 * time.Millisecond},
		{"inter-token latency", itl, 10 * time.Millisecond},
	} {
		// Native histograms need no `by (le)`: the buckets travel inside the sample.
		expr := `histogram_quantile(0.5, sum(rate(` + c.series + `[1m])))`
		got, err := prom.scalar(expr)
		if err != nil {
			t.Fatal(err)
		}
		want := c.want.Seconds()
		t.Logf("%s median: %.5fs (configured %s)", c.name, got, c.want)
		if math.Abs(got-want)/want > 0.10 {
			t.Errorf("%s: %s = %.5fs, want within 10%% of %s", c.name, expr, got, c.want)
		}
	}
}

func TestProtobufScrapeHasNativeHistograms(t *testing.T) {
	_, metricsURL := startDemo(t)
	histograms := []string{
		"inferprobe_time_to_first_token_seconds",
		"inferprobe_inter_token_latency_seconds",
		"inferprobe_inter_chunk_latency_seconds",
		"inferprobe_request_duration_seconds",
	}
	eventually(t, 15*time.Second, "every histogram of the chat probe has native and classic buckets", func() error {
		fams, format, err := scrape(metricsURL, protobufAccept)
		if err != nil {
			t.Fatal(err)
		}
		if format.FormatType() != expfmt.TypeProtoDelim {
			t.Fatalf("asked for protobuf, got %q", format)
		}
		for _, name := range histograms {
			series := matching(fams, name, "scenario", "chat-steady")
			if len(series) != 1 {
				return fmt.Errorf("%s: %d chat-steady series, want 1", name, len(series))
			}
			h := series[0].GetHistogram()
			switch {
			case h.GetSampleCount() == 0:
				return fmt.Errorf("%s: no samples yet", name)
			case h.GetSchema() != 5:
				t.Fatalf("%s: native schema %d, want 5 (bucket factor 1.03)", name, h.GetSchema())
			case len(h.GetPositiveSpan()) == 0 || len(h.GetPositiveDelta()) == 0:
				t.Fatalf("%s: %d samples but no native buckets (spans %v, deltas %v)", name, h.GetSampleCount(), h.GetPositiveSpan(), h.GetPositiveDelta())
			case len(h.GetBucket()) == 0:
				t.Fatalf("%s: no classic buckets", name)
			}
		}
		return nil
	})
}
