package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// daemonFlags are the settings of the probing daemon shared by serve and demo.
type daemonFlags struct {
	grace       time.Duration
	shard       record.Shard
	storagePath string
	historySize int
	cluster     *clusterFlags // nil where there are no replicas (demo)
}

// addDaemonFlags registers the daemon's flags; --shard only where replicas
// make sense (serve).
func addDaemonFlags(cmd *kingpin.CmdClause, withShard bool) *daemonFlags {
	f := &daemonFlags{shard: record.Shard{Count: 1}}
	cmd.Flag("shutdown.grace-period", "On SIGTERM, stop sending and let requests in flight finish for up to this long; the rest are cancelled (counted as outcome=\"cancelled\").").
		Default("10s").Action(func(*kingpin.ParseContext) error {
		if f.grace < 0 {
			return fmt.Errorf("--shutdown.grace-period=%s: must be ≥ 0 (0 cancels the requests in flight at once)", f.grace)
		}
		return scenarios.DurationBound.Check("--shutdown.grace-period", float64(f.grace))
	}).DurationVar(&f.grace)
	cmd.Flag("storage.path", "Directory that keeps finished burst runs (one JSON file each, and a directory of each one's HTML report and AIPerf artifacts), so their reports and the last-run gauges survive a restart; created if missing. Empty keeps them in memory only (the artifacts up to 64 MiB).").
		StringVar(&f.storagePath)
	cmd.Flag("storage.history-size", "Finished burst runs kept (in memory, and in --storage.path); the oldest go first.").
		Default("100").Action(func(*kingpin.ParseContext) error {
		if f.historySize < 1 {
			return fmt.Errorf("--storage.history-size=%d: must be >= 1", f.historySize)
		}
		return nil
	}).IntVar(&f.historySize)
	if withShard {
		var shard string
		cmd.Flag("shard", "Send only share i of n (0-based, i/n) of every probe's seeded request sequence, at the unsharded send times, so that n replicas together send exactly what one would. In a StatefulSet, i is the pod's ordinal and n the replica count.").
			Default("0/1").Action(func(*kingpin.ParseContext) error {
			var err error
			f.shard, err = record.ParseShard(shard)
			return err
		}).StringVar(&shard)
		f.cluster = addClusterFlags(cmd)
	}
	return f
}

// checkCluster refuses cluster flags that do not fit --shard.
func (f *daemonFlags) checkCluster() error {
	if f.cluster == nil {
		return nil
	}
	return f.cluster.check(f.shard)
}

// options are the daemon's options; the cluster's calls take the burst
// API's token and the web config's certificates.
func (f *daemonFlags) options(logger *slog.Logger, token, webConfigFile string) ([]daemon.Option, error) {
	opts := []daemon.Option{daemon.WithGracePeriod(f.grace), daemon.WithShard(f.shard), daemon.WithHistory(f.storagePath, f.historySize)}
	if f.cluster != nil {
		o, err := f.cluster.option(logger, token, webConfigFile)
		if err != nil {
			return nil, err
		}
		if o != nil {
			opts = append(opts, o)
		}
	}
	return opts, nil
}
