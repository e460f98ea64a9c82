package daemon

import (
	"context"
	"fmt"
	"io"
	"time"
)

// LiveLines say, one line per probe, what the landing page's Probes table says of its
// latency and errors now: the target, TTFT p50 and p99, ITL p50 and the error ratio, so that
// a terminal shows a latency number without a browser or a Prometheus.
func (d *Daemon) LiveLines(now time.Time) []string {
	data := d.landingData(now)
	lines := make([]string, 0, len(data.Probes))
	for _, p := range data.Probes {
		line := now.Format(time.TimeOnly) + " " + p.Probe + " → " + p.Target + ": "
		switch {
		case p.Requests == 0:
			line += "no requests in the last 5 min"
		default:
			if p.TTFT.Count > 0 {
				line += "TTFT p50 " + milliseconds(p.TTFT.P50) + ", p99 " + milliseconds(p.TTFT.P99) + "; "
			}
			if p.ITL.Count > 0 {
				line += "ITL p50 " + milliseconds(p.ITL.P50) + "; "
			}
			line += fmt.Sprintf("errors %s (%d of %d, last 5 min)", percent(p.Errors, p.Requests), p.Errors, p.Requests)
		}
		if data.Saturated != "" {
			line += "; inferprobe saturated: " + data.Saturated
		}
		lines = append(lines, line)
	}
	return lines
}

// WriteLive writes LiveLines to w every interval until ctx ends.
func (d *Daemon) WriteLive(ctx context.Context, w io.Writer, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			for _, l := range d.LiveLines(now) {
				fmt.Fprintln(w, l)
			}
		}
	}
}
