package e2e

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// TestNativeQuantileAccuracy measures what the native bucket factor costs:
// the product's own TTFT histogram is filled with known samples, a real
// Prometheus scrapes it, and histogram_quantile is compared with the exact
// quantile of the same samples (nearest rank: the ceil(q·n)-th smallest).
func TestNativeQuantileAccuracy(t *testing.T) {
	requirePrometheus(t)
	lognormal := func(median, sigma float64) func(*rand.Rand) float64 {
		return func(r *rand.Rand) float64 { return median * math.Exp(sigma*r.NormFloat64()) }
	}
	dists := []struct {
		name string
		n    int
		draw func(*rand.Rand) float64 // seconds
	}{
		// A server's TTFT: right-skewed around 300ms.
		{"lognormal-300ms", 20000, lognormal(0.3, 0.5)},
		// Most prompts hit the prefix cache, 15 % queue behind a long
		// prefill: p99 sits in the second mode.
		{"bimodal-120ms-1.5s", 20000, func(r *rand.Rand) float64 {
			if r.Float64() < 0.15 {
				return lognormal(1.5, 0.3)(r)
			}
			return lognormal(0.12, 0.25)(r)
		}},
		// A steady decode step: narrow, so every quantile falls in a few buckets.
		{"normal-50ms-2ms", 20000, func(r *rand.Rand) float64 { return 0.05 + 0.002*r.NormFloat64() }},
		// Five minutes of a 1 req/s probe. With few samples per bucket the
		// interpolation inside a bucket no longer hides its width, so this
		// is the case the bucket factor has to cover.
		{"lognormal-300ms-sparse", 300, lognormal(0.3, 0.5)},
		// A wide spread (about 370 populated buckets): the bucket cap must
		// not make client_golang halve the resolution, which would cost the 3 %.
		{"lognormal-wide", 20000, lognormal(0.2, 1.2)},
	}

	reg := prometheus.NewRegistry()
	requests := collector.NewRequests(reg)
	samples := map[string][]float64{}
	for i, d := range dists {
		series := requests.Series(collector.Labels{Target: "accuracy", Model: "none", Scenario: d.name, Phase: "bench"}, report.SLO{})
		r := rand.New(rand.NewPCG(uint64(i+1), 2026))
		for range d.n {
			ttft := time.Duration(d.draw(r) * float64(time.Second))
			series.Started()
			series.Observe(&record.Record{Chunks: []time.Duration{ttft}, FirstOutput: 0})
			// What the histogram saw, after the round trip through Duration.
			samples[d.name] = append(samples[d.name], ttft.Seconds())
		}
	}
	schemas := nativeLayout(t, reg)

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, "accuracy", u.Host)
	eventually(t, 30*time.Second, "Prometheus scraped the histograms twice", func() error {
		scrapes, err := prom.scalar(`count_over_time(up{job="accuracy"}[1m])`)
		if err != nil {
			return err
		}
		if scrapes < 2 {
			return fmt.Errorf("%v scrapes", scrapes)
		}
		return nil
	})

	var table strings.Builder
	fmt.Fprintf(&table, "%-24s %-7s %-22s %-5s %-10s %-10s %s\n", "distribution", "samples", "native layout", "q", "exact", "prometheus", "rel. error")
	for _, d := range dists {
		sorted := slices.Sorted(slices.Values(samples[d.name]))
		for _, q := range []float64{0.5, 0.9, 0.99} {
			exact := sorted[int(math.Ceil(q*float64(len(sorted))))-1]
			expr := fmt.Sprintf(`histogram_quantile(%g, inferprobe_time_to_first_token_seconds{job="accuracy",scenario=%q})`, q, d.name)
			got, err := prom.scalar(expr)
			if err != nil {
				t.Fatal(err)
			}
			relErr := (got - exact) / exact
			fmt.Fprintf(&table, "%-24s %-7d %-22s %-5g %-10.5f %-10.5f %+.2f %%\n", d.name, d.n, schemas[d.name], q, exact, got, 100*relErr)
			if !strings.HasPrefix(schemas[d.name], "schema 5,") {
				t.Errorf("%s: native layout %s, want schema 5 (bucket factor 1.03, cap not reached)", d.name, schemas[d.name])
			}
			if q == 0.99 && math.Abs(relErr) > 0.03 {
				t.Errorf("%s: p99 from Prometheus %.5fs, exact %.5fs: %+.2f %%, want within 3 %%", d.name, got, exact, 100*relErr)
			}
		}
	}
	t.Logf("histogram_quantile over native histograms vs exact nearest-rank quantiles:\n%s", table.String())
}

// nativeLayout describes each TTFT series' native histogram as exported:
// its schema and how many buckets hold samples (what the bucket cap counts).
func nativeLayout(t *testing.T, reg *prometheus.Registry) map[string]string {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, mf := range fams {
		if mf.GetName() != "inferprobe_time_to_first_token_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			buckets, count := 0, int64(0)
			for _, delta := range h.GetPositiveDelta() {
				if count += delta; count > 0 {
					buckets++
				}
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == "scenario" {
					out[l.GetValue()] = fmt.Sprintf("schema %d, %d buckets", h.GetSchema(), buckets)
				}
			}
		}
	}
	return out
}
