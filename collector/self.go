package collector

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
)

// Self holds the exporter's own health: is its configuration current, and what
// is it running.
type Self struct {
	ReloadSuccessful prometheus.Gauge
	ReloadTimestamp  prometheus.Gauge
	Probes           prometheus.Gauge
}

// NewSelf registers the self-metrics, build info and the Go and process
// collectors with reg.
func NewSelf(reg prometheus.Registerer) *Self {
	s := &Self{
		ReloadSuccessful: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "config_last_reload_successful",
			Help: "Whether the last configuration load or reload succeeded (1) or kept the previous configuration (0).",
		}),
		ReloadTimestamp: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "config_last_reload_success_timestamp_seconds",
			Help: "Unix time of the last successful configuration load.",
		}),
		Probes: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "probes",
			Help: "Probes configured and running.",
		}),
	}
	reg.MustRegister(s.ReloadSuccessful, s.ReloadTimestamp, s.Probes,
		versioncollector.NewCollector(namespace),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return s
}
