package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/prober/pool"
	"github.com/inferprobe/inferprobe/scenarios"
)

func runServe(logger *slog.Logger, configFile string, webFlags *web.FlagConfig, lifecycle bool, burstAPI *burstAPIFlags, workers *workerFlags, daemonFlags *daemonFlags, gpuFlags *gpuFlags) int {
	load := func() (*scenarios.Config, error) { return scenarios.Load(configFile) }
	logger.Info("starting inferprobe", "config", configFile)
	burstOpts, err := burstAPI.options(logger, webFlags)
	if err != nil {
		logger.Error("cannot start the burst API", "err", err)
		return 1
	}
	if err := daemonFlags.checkCluster(); err != nil {
		logger.Error("cannot start the cluster", "err", err)
		return 1
	}
	// The pool is sized once, before the daemon loads the file for itself;
	// a file that does not load is reported by the daemon.
	var scenarioWorkers int
	if cfg, err := load(); err == nil {
		scenarioWorkers = cfg.Global.Workers
	}
	p, err := workers.start(logger, scenarioWorkers)
	if err != nil {
		logger.Error("cannot start the worker processes", "err", err)
		return 1
	}
	return serveDaemon(logger, load, p, webFlags, nil, lifecycle, burstOpts, daemonFlags, gpuFlags, nil)
}

// workersStopTimeout bounds how long shutdown waits for the workers once the
// daemon has drained its requests (its grace period is over): records still
// on their way back, then the workers' exit; a worker that does not exit is killed.
const workersStopTimeout = 5 * time.Second

// liveEvery is how often the demo prints its probes' latency lines.
const liveEvery = 5 * time.Second

func drain(logger *slog.Logger, workers *pool.Pool) {
	ctx, cancel := context.WithTimeout(context.Background(), workersStopTimeout)
	defer cancel()
	if err := workers.Drain(ctx); err != nil {
		logger.Warn("worker pool did not drain in time", "err", err)
	}
}

// serveDaemon runs a daemon of the scenario that load reads, sending with
// workers, and its web server until SIGINT/SIGTERM, reloading on SIGHUP,
// then drains the worker pool. It returns the process exit status. The web
// server serves listeners when the caller has bound them already, else it
// binds webFlags' addresses itself. With live set, the probes' latency lines
// go to it every liveEvery.
func serveDaemon(logger *slog.Logger, load func() (*scenarios.Config, error), workers *pool.Pool, webFlags *web.FlagConfig, listeners []net.Listener, lifecycle bool, burstAPI daemon.BurstAPIOptions, daemonFlags *daemonFlags, gpuFlags *gpuFlags, live io.Writer) int {
	defer drain(logger, workers)
	reg := prometheus.NewRegistry()
	reg.MustRegister(workers)
	opts, err := daemonFlags.options(logger, burstAPI.Token, *webFlags.WebConfigFile)
	if err != nil {
		logger.Error("cannot start the cluster", "err", err)
		return 1
	}
	opts = append(opts, daemon.WithClientLoad(workers.Utilisation))
	gpus, err := gpuFlags.start(logger, reg)
	if err != nil {
		logger.Error("cannot start GPU telemetry; fix --collector.gpu.fields-file or turn it off with --no-collector.gpu", "err", err)
		return 1
	}
	if gpus != nil {
		defer gpus.Close()
		opts = append(opts, daemon.WithGPUWindow(gpus.Window()))
	}
	d := daemon.New(logger, reg, load, workers, opts...)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	handler, err := d.Handler(lifecycle, burstAPI)
	if err != nil {
		logger.Error("building web handler", "err", err)
		return 1
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	webErr := make(chan error, 1)
	go func() {
		if listeners != nil {
			webErr <- web.ServeMultiple(listeners, srv, webFlags, logger)
			return
		}
		webErr <- web.ListenAndServe(srv, webFlags, logger)
	}()

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-hup:
				logger.Info("SIGHUP: reloading configuration")
				_ = d.RequestReload(ctx) // the daemon logs the outcome
			case <-ctx.Done():
				return
			}
		}
	}()

	runErr := make(chan error, 1)
	go func() { runErr <- d.Run(ctx) }()
	if live != nil {
		go d.WriteLive(ctx, live, liveEvery)
	}

	status := 0
	select {
	case err := <-runErr:
		if err != nil {
			logger.Error("cannot start: fix the scenario file (check it with inferprobe check-config)", "err", err)
			status = 1
		}
	case err := <-webErr:
		if !errors.Is(err, http.ErrServerClosed) {
			logger.Error("web server failed", "err", err)
			status = 1
		}
		stop()
		<-runErr
	case <-ctx.Done():
		logger.Info("shutting down")
		<-runErr
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	return status
}
