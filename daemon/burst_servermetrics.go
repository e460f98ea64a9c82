package daemon

import (
	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/scenarios"
)

// withServerMetrics has a burst run scrape its target's own metrics, at its
// server_metrics URL or else its URL's origin + /metrics, for the run's
// report; Prometheus scrapes the engine for the dashboards, so nothing of
// it is served on /metrics. A target without them is logged once per run
// and the report has none; server_metrics: off reads nothing.
func withServerMetrics(t *prober.Target) finite.Option {
	none := func(*finite.Run) {}
	if t.Spec.ServerMetrics == scenarios.ServerMetricsOff {
		return none
	}
	o, err := finite.ServerMetricsOptions(finite.ServerMetricsSource{APIBase: t.Spec.URL, URL: t.Spec.ServerMetrics, TLS: t.TLSConfig()})
	if err != nil {
		return none
	}
	return finite.WithServerMetrics(o)
}
