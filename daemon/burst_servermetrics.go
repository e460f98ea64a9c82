package daemon

import (
	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/servermetrics"
)

// withServerMetrics has a burst run scrape its target's own metrics, at its
// server_metrics URL or else its URL's origin + /metrics, for the run's
// report; Prometheus scrapes the engine for the dashboards, so nothing of
// it is served on /metrics. A target without them is logged once per run
// and the report has none; server_metrics: off reads nothing.
func withServerMetrics(t *prober.Target) finite.Option {
	none := func(*finite.Run) {}
	u := t.Spec.ServerMetrics
	switch u {
	case scenarios.ServerMetricsOff:
		return none
	case "":
		var err error
		if u, err = servermetrics.DiscoveredURL(t.Spec.URL); err != nil {
			return none
		}
	}
	return finite.WithServerMetrics(servermetrics.Options{URLs: []string{u}, TLS: t.TLSConfig()})
}
