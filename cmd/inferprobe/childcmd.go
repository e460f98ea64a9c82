package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/common/promslog"

	"github.com/inferprobe/inferprobe/prober/pool"
)

// runWorker is the hidden worker command, the entry point of each child
// process the pool starts (see workerFlags.start): one worker process,
// speaking prober/wire on stdin and stdout and logging JSON to stderr, which
// the parent forwards to its own log.
func runWorker(logConfig *promslog.Config) int {
	// The parent owns shutdown: it drains its requests, then closes our stdin.
	// Ctrl-C and systemd's SIGTERM reach the whole process group, and must not
	// cut the requests the parent means to let finish.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	// Whatever is printed by mistake goes to the log, not into the protocol.
	protocol := os.Stdout
	os.Stdout = os.Stderr
	format := promslog.NewFormat()
	_ = format.Set("json") // the parent parses it
	logger := promslog.New(&promslog.Config{Level: logConfig.Level, Format: format, Writer: os.Stderr})
	if err := pool.ServeWorker(context.Background(), os.Stdin, protocol, logger); err != nil {
		logger.Error("worker stopped", "err", err)
		return 1
	}
	return 0
}
