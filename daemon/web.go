package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
)

// Handler serves the daemon's HTTP surface (docs/http-api.md). The reload endpoint
// only acts when enableLifecycle is set, as in Prometheus; the burst API only
// when burstAPI.Enabled.
func (d *Daemon) Handler(enableLifecycle bool, burstAPI BurstAPIOptions) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.InstrumentMetricHandler(d.registry,
		promhttp.HandlerFor(d.registry, promhttp.HandlerOpts{
			ErrorLog: promhttpLogger{d}, Registry: d.registry,
			// OpenMetrics text carries the classic buckets' exemplars;
			// protobuf, which Prometheus asks for when it scrapes native
			// histograms, carries the native histograms' too.
			EnableOpenMetrics: true,
		})))
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "Healthy.")
	})
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !d.ready() {
			http.Error(w, "Not ready: no configuration loaded yet.", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "Ready.")
	})
	mux.HandleFunc("/-/reload", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost && r.Method != http.MethodPut {
			w.Header().Set("Allow", "POST, PUT")
			http.Error(w, "Use POST or PUT to reload.", http.StatusMethodNotAllowed)
			return
		}
		if !enableLifecycle {
			http.Error(w, "Lifecycle API is not enabled; start with --web.enable-lifecycle.", http.StatusForbidden)
			return
		}
		if err := d.RequestReload(r.Context()); err != nil {
			http.Error(w, "Reload failed; the previous configuration stays in effect:\n"+err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "Configuration reloaded.")
	})
	mux.HandleFunc("/api/v1/status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(d.status())
	})
	bursts := NewBurstAPI(d, burstAPI, d.logger)
	mux.Handle(burstAPIPath, bursts)
	mux.Handle(burstAPIPath+"/", bursts)
	mux.Handle(clusterPath+"/", bursts)
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "inferprobe",
		Description: "Continuous benchmark of LLM inference endpoints",
		Version:     version.Info(),
		// No pprof handlers are served, so the toolkit's profiling links would 404.
		Profiling: "false",
		ExtraHTML: targetErrorsMark,
		ExtraCSS:  targetErrorsCSS,
		Links:     landingLinks(burstAPI),
	})
	if err != nil {
		return nil, err
	}
	page, err := d.landingPage(landing, burstAPI)
	if err != nil {
		return nil, err
	}
	mux.Handle("/", page)
	return mux, nil
}

// promhttpLogger sends metric-gathering errors to the daemon's logger.
type promhttpLogger struct{ d *Daemon }

func (l promhttpLogger) Println(v ...any) { l.d.logger.Error(fmt.Sprint(v...)) }

// landingLinks are the landing page's links; the burst API's only when it is on, since
// off it answers every request 403. With a token, a browser's click would answer 401: the
// link then goes to the page's own section that says how to call it.
func landingLinks(burstAPI BurstAPIOptions) []web.LandingLinks {
	links := []web.LandingLinks{
		{Address: "/metrics", Text: "Metrics", Description: "TTFT, inter-token latency and the rest, as native histograms"},
		{Address: "/api/v1/status", Text: "Status", Description: "Configuration state, running probes and the last error of each target (JSON)"},
	}
	switch {
	case burstAPI.Enabled && burstAPI.Token != "":
		links = append(links, web.LandingLinks{Address: "#burst-api", Text: "Bursts", Description: "the burst API needs the bearer token of --web.burst-api.token-file, which a browser cannot send: see below how to call it with curl"})
	case burstAPI.Enabled:
		links = append(links, web.LandingLinks{Address: burstAPIPath, Text: "Bursts", Description: "Configured bursts and recent runs (JSON); POST /api/v1/bursts/NAME starts one"})
	}
	return append(links, web.LandingLinks{Address: "/-/healthy", Text: "Health"}, web.LandingLinks{Address: "/-/ready", Text: "Readiness"})
}
