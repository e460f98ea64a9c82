package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/inferprobe/inferprobe/report/export"
)

// plots draws --auto-plot's PNGs with write into dir/plots and says where.
// A plot that cannot be drawn is a warning, the artifacts being written,
// unless --plot-required makes it the run's failure (exit 1), as in AIPerf.
func (b *bencher) plots(dir string, write func() ([]string, error)) int {
	if !b.f.autoPlot {
		return exitOK
	}
	names, err := write()
	switch {
	case err != nil && b.f.plotRequired:
		fmt.Fprintf(b.stderr, "inferprobe bench: --auto-plot: %v (--plot-required)\n", err)
		return exitCannotRun
	case err != nil:
		fmt.Fprintf(b.stderr, "inferprobe bench: warning: --auto-plot: %v; the other artifacts are written\n", err)
	case len(names) == 0:
		fmt.Fprintln(b.stdout, "Plots: none (no successful request to plot)")
	default:
		fmt.Fprintf(b.stdout, "Plots: %s (%s)\n", filepath.Join(dir, export.PlotsDir), strings.Join(names, ", "))
	}
	return exitOK
}
