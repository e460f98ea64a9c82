package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/exporter-toolkit/web"

	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/simulator"
)

// runDemo serves the simulator and probes it with the bundled scenario, whose
// target URLs are pointed at wherever the simulator listens.
func runDemo(logger *slog.Logger, webFlags *web.FlagConfig, lifecycle bool, burstAPI *burstAPIFlags, simListen string, simCfg *simulator.Config, workers *workerFlags, daemonFlags *daemonFlags, gpuFlags *gpuFlags) int {
	burstOpts, err := burstAPI.options(logger, webFlags)
	if err != nil {
		logger.Error("cannot start the burst API", "err", err)
		return 1
	}
	sim, err := simulator.New(*simCfg, logger)
	if err != nil {
		logger.Error("invalid simulator settings", "err", err)
		return 2
	}
	// Bound before the banner, so that the addresses it prints answer, and a port in
	// use fails here, before anything starts.
	webListeners, err := listenWeb(webFlags)
	if err != nil {
		logger.Error("cannot listen for the web server; stop what holds the port or pick another --web.listen-address", "err", err)
		return 1
	}
	ln, err := net.Listen("tcp", simListen)
	if err != nil {
		logger.Error("cannot listen for the simulator; pick another --simulator.listen-address", "err", err)
		return 1
	}
	// The meter's load drives the demo's simulated GPUs.
	meter := &simulator.LoadMeter{}
	gpuFlags.simulateWith(meter.RequestSeconds)
	simSrv := &http.Server{Handler: meter.Wrap(sim.Handler()), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = simSrv.Serve(ln) }()
	defer simSrv.Close()
	simURL := "http://" + ln.Addr().String() + "/v1"

	load := func() (*scenarios.Config, error) {
		cfg, err := scenarios.Parse(scenarios.Demo, scenarios.DemoFilename+" (built in)")
		if err != nil {
			return nil, err
		}
		for _, t := range cfg.Targets {
			t.URL = simURL
		}
		return cfg, nil
	}
	p, err := workers.start(logger, 0)
	if err != nil {
		logger.Error("cannot start the worker processes", "err", err)
		return 1
	}
	base := "http://" + displayAddress((*webFlags.WebListenAddresses)[0])
	fmt.Fprintf(os.Stdout, "inferprobe demo\n  metrics:      %s/metrics\n  landing page: %s/\n  simulator:    %s (try %s/models)\n",
		base, base, simURL, simURL)
	if burstOpts.Enabled {
		fmt.Fprintf(os.Stdout, "  burst API:    curl -X POST %s/api/v1/bursts/demo-burst, then GET the status_url it returns\n", base)
	}
	fmt.Fprintf(os.Stdout, "Every %s, a line per probe: its TTFT, ITL and errors over the last 5 minutes.\nPress Ctrl-C to stop.\n", liveEvery)
	return serveDaemon(logger, load, p, webFlags, webListeners, lifecycle, burstOpts, daemonFlags, gpuFlags, os.Stdout)
}

// listenWeb binds every --web.listen-address; with --web.systemd-socket it returns
// none, and the web server takes systemd's sockets itself.
func listenWeb(webFlags *web.FlagConfig) ([]net.Listener, error) {
	if webFlags.WebSystemdSocket != nil && *webFlags.WebSystemdSocket {
		return nil, nil
	}
	var ls []net.Listener
	for _, addr := range *webFlags.WebListenAddresses {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// displayAddress turns a listen address such as ":9470" into one a browser can open.
func displayAddress(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + port
}
