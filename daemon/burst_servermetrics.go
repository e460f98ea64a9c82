package daemon

import (
	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/servermetrics"
)

// withServerMetrics has a burst run scrape its target's own metrics, at its
// URL's origin + /metrics, for the run's report; Prometheus scrapes the
// engine for the dashboards, so nothing of it is served on /metrics. A
// target without them is logged once per run and the report has none.
func withServerMetrics(t *prober.Target) finite.Option {
	u, err := servermetrics.DiscoveredURL(t.Spec.URL)
	if err != nil {
		return func(*finite.Run) {}
	}
	return finite.WithServerMetrics(servermetrics.Options{URLs: []string{u}})
}
