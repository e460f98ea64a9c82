package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/exporter-toolkit/web"

	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/scenarios"
)

func runServe(logger *slog.Logger, configFile string, webFlags *web.FlagConfig, lifecycle bool) int {
	load := func() (*scenarios.Config, error) { return scenarios.Load(configFile) }
	logger.Info("starting inferprobe", "config", configFile)
	return serveDaemon(logger, daemon.New(logger, load, prober.NewClient()), webFlags, lifecycle)
}

// serveDaemon runs d and its web server until SIGINT/SIGTERM, reloading on
// SIGHUP. It returns the process exit status.
func serveDaemon(logger *slog.Logger, d *daemon.Daemon, webFlags *web.FlagConfig, lifecycle bool) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	handler, err := d.Handler(lifecycle)
	if err != nil {
		logger.Error("building web handler", "err", err)
		return 1
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	webErr := make(chan error, 1)
	go func() { webErr <- web.ListenAndServe(srv, webFlags, logger) }()

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
