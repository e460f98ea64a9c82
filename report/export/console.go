package export

import (
	"fmt"
	"io"

	"github.com/inferprobe/inferprobe/collector/gpu"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report"
)

// Console prints AIPerf's console table of r, with inferprobe's extras; d
// is the sequence r sent, with seed.
func Console(w io.Writer, r Run, d prober.Digest, seed uint64) {
	s := r.Summary
	if r.ClientBound != "" {
		fmt.Fprintf(w, "\n!!! CLIENT-BOUND RUN: %s.\n!!! These figures may describe inferprobe, not the server: add --workers, lower the rate, or give inferprobe more CPU.\n", r.ClientBound)
	}
	if r.Interrupted {
		fmt.Fprintln(w, "\n(interrupted: the report covers the requests that finished)")
	}
	fmt.Fprintf(w, "\n%62s\n%-44s %10s %10s %10s %10s %10s %10s %10s\n", "inferprobe | LLM Metrics", "Metric", "avg", "min", "max", "p99", "p90", "p50", "std")
	row := func(name string, st report.Stats, scale float64) {
		if st.Count == 0 {
			return
		}
		fmt.Fprintf(w, "%-44s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", name,
			st.Avg*scale, st.Min*scale, st.Max*scale, st.P99*scale, st.P90*scale, st.P50*scale, st.Std*scale)
	}
	row("Time to First Token (ms)", s.TTFT, 1e3)
	row("Time to First Output Token (ms)", s.TTFOT, 1e3)
	row("Time to Second Token (ms)", s.TTST, 1e3)
	row("Request Latency (ms)", s.Latency, 1e3)
	row("Inter Token Latency (ms)", s.ITL, 1e3)
	row("Inter Chunk Latency (ms)", s.InterChunk, 1e3)
	row("Output Token Throughput Per User (tok/s/user)", s.OutputTokenThroughputPerUser, 1)
	row("Output Sequence Length (tokens)", s.OutputTokens, 1)
	row("Input Sequence Length (tokens)", s.InputTokens, 1)
	row("Schedule Lag (ms)", s.ScheduleLag, 1e3)
	one := func(name string, v float64) { fmt.Fprintf(w, "%-44s %10.2f\n", name, v) }
	fmt.Fprintln(w)
	one("Output Token Throughput (tokens/sec)", s.OutputTokenThroughput)
	one("Total Token Throughput (tokens/sec)", s.TotalTokenThroughput)
	one("Request Throughput (requests/sec)", s.RequestThroughput)
	if r.SLO != (report.SLO{}) {
		one("Goodput (requests/sec)", s.Goodput)
		fmt.Fprintf(w, "%-44s %10d of %d successful\n", "Good Requests", s.Good, s.OK)
	}
	one("Benchmark Duration (sec)", s.DurationSeconds)
	fmt.Fprintf(w, "%-44s %10d ok, %d errors, %d cancelled\n", "Requests", s.OK, s.Failed, s.Cancelled)
	consoleErrors(w, s.Errors, r.Requests)
	if note := connectionNote(s); note != "" {
		fmt.Fprintf(w, "Note: %s.\n", note)
	}
	if note := mismatchNote(s); note != "" {
		fmt.Fprintf(w, "%-44s %10d of %d successful\n", "Output Length Mismatches", s.OutputLengthMismatches, s.OK)
		fmt.Fprintf(w, "Note: %s.\n", note)
	}
	switch {
	case s.TokensFromChunks:
		fmt.Fprintln(w, "Note: the server sent no usage; output lengths count one token per content chunk (give --tokenizer for exact counts).")
	case s.TokensFromTokenizer:
		fmt.Fprintln(w, "Note: the server sent no usage; output lengths were counted with --tokenizer.")
	}
	fmt.Fprintf(w, "\nSequence digest: %s (%d requests, seed %d)\n", d, d.Requests, seed)
}

// ConsoleGPU prints what the GPUs did over the run, or says there was no
// telemetry.
func ConsoleGPU(w io.Writer, st gpu.WindowStats) {
	if len(st.GPUs) == 0 {
		fmt.Fprintln(w, "\nGPU: no telemetry over the run (no DCGM or NVML here, or no samples); see --collector.gpu")
		return
	}
	val := func(v *float64, format string) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf(format, *v)
	}
	fmt.Fprintf(w, "\n%-22s %10s %10s %12s %14s %10s %14s\n", "GPU (over the run)", "avg W", "peak W", "energy J", "J/output tok", "avg util%", "peak FB MiB")
	row := func(name string, g gpu.GPUStats) {
		fmt.Fprintf(w, "%-22s %10s %10s %12s %14s %10s %14s\n", name,
			val(g.AvgPowerWatts, "%.1f"), val(g.PeakPowerWatts, "%.1f"), val(g.EnergyJoules, "%.1f"),
			val(g.EnergyPerOutputTokenJoules, "%.4f"), val(g.AvgGPUUtilPercent, "%.1f"), val(g.PeakFBUsedMiB, "%.0f"))
	}
	for _, g := range st.GPUs {
		row(g.GPU+" "+g.ModelName, g)
	}
	if len(st.GPUs) > 1 {
		row("total", st.Total)
	}
	if st.Total.EnergySource == "power" {
		fmt.Fprintln(w, "Energy is power integrated over time: the GPUs have no energy counter.")
	}
}
