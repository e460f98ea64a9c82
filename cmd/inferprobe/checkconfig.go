package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// runCheckConfig validates each file and reports every problem found.
func runCheckConfig(stdout, stderr io.Writer, files []string) int {
	status := 0
	for _, f := range files {
		cfg, err := scenarios.Load(f)
		var targets map[string]*prober.Target
		if err == nil {
			targets, err = prober.Build(cfg)
		}
		if err == nil {
			if err = buildAll(cfg, targets); err != nil {
				err = fmt.Errorf("%s: %w", f, err)
			}
		}
		if err != nil {
			status = 1
			var errs scenarios.Errors
			if errors.As(err, &errs) {
				for _, e := range errs {
					fmt.Fprintln(stderr, e)
				}
			} else {
				fmt.Fprintln(stderr, err)
			}
			fmt.Fprintf(stderr, "FAILED: %s is not valid\n", f)
			continue
		}
		fmt.Fprintf(stdout, "SUCCESS: %s is valid: %d targets, %d probes, %d bursts\n", f, len(cfg.Targets), len(cfg.Probes), len(cfg.Bursts))
	}
	return status
}

// buildAll prepares every probe and burst as the daemon would, so that what
// only shows when a probe is built — a dataset file's entries — is checked
// too. Nothing is sent.
func buildAll(cfg *scenarios.Config, targets map[string]*prober.Target) error {
	build := func(name string, p *scenarios.Probe) error {
		_, err := prober.NewProbe(name, p, targets[p.Target], cfg.Global.Seed, record.Shard{Count: 1})
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Probes)) {
		if err := build(name, cfg.Probes[name]); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Bursts)) {
		if err := build("burst "+name, cfg.Bursts[name].Probe()); err != nil {
			return err
		}
	}
	return nil
}
