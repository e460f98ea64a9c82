package main

import (
	"fmt"
	"log/slog"
	"runtime"
	"strconv"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"

	"github.com/inferprobe/inferprobe/prober/pool"
	"github.com/inferprobe/inferprobe/scenarios"
)

// workerFlags configure the worker processes that serve and demo start.
type workerFlags struct {
	n        int
	set      bool // --workers was given, so it wins over global.workers
	logLevel *promslog.Level
}

func addWorkerFlags(cmd *kingpin.CmdClause, logConfig *promslog.Config) *workerFlags {
	f := &workerFlags{logLevel: logConfig.Level}
	cmd.Flag("workers", "Worker processes that send the requests, 1 to "+scenarios.WorkerBound.Format(scenarios.WorkerBound.Max)+". Default: global.workers from the scenario file, else the number of CPUs.").
		// Flag actions, not cmd.Validate: a command keeps only one validator.
		Default(strconv.Itoa(runtime.NumCPU())).IsSetByUser(&f.set).Action(func(*kingpin.ParseContext) error {
		if f.n < 1 {
			return fmt.Errorf("--workers must be at least 1, not %d", f.n)
		}
		return nil
	}).SetValue(whole("workers", &f.n, &scenarios.WorkerBound))
	return f
}

// start starts the pool: --workers if given, else scenarioWorkers if > 0, else
// the default. Workers are this binary's hidden worker command (runWorker, in
// childcmd.go) and log at the daemon's level.
func (f *workerFlags) start(logger *slog.Logger, scenarioWorkers int) (*pool.Pool, error) {
	n := f.n
	if !f.set && scenarioWorkers > 0 {
		n = scenarioWorkers
	}
	return pool.New(pool.Options{
		Workers: n,
		Args:    []string{"worker", "--log.level=" + f.logLevel.String()},
		Logger:  logger,
	})
}
