package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/inferprobe/inferprobe/scenarios"
)

// runCheckConfig validates each file and reports every problem found.
func runCheckConfig(stdout, stderr io.Writer, files []string) int {
	status := 0
	for _, f := range files {
		cfg, err := scenarios.Load(f)
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
		fmt.Fprintf(stdout, "SUCCESS: %s is valid: %d targets, %d probes\n", f, len(cfg.Targets), len(cfg.Probes))
	}
	return status
}
