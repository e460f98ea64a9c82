package export

import (
	"fmt"
	"io"

	"github.com/inferprobe/inferprobe/collector/gpu"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/stats"
)

// Console prints AIPerf's console table of r, with inferprobe's extras; d
// is the sequence r sent, with seed.
func Console(w io.Writer, r Run, d record.Digest, seed uint64) {
	s := r.Summary
	if r.ClientBound != "" {
		fmt.Fprintf(w, "\n!!! CLIENT-BOUND RUN: %s.\n!!! These figures may describe inferprobe, not the server: add --workers, lower the rate, or give inferprobe more CPU.\n", r.ClientBound)
	}
	if r.Interrupted {
		fmt.Fprintln(w, "\n(interrupted: the report covers the requests that finished)")
	}
	if r.GraceExpired {
		fmt.Fprintf(w, "\n(%d requests were still in flight when the grace period ended and were cut)\n", r.GraceCut)
	}
	fmt.Fprintf(w, "\n%62s\n%-52s %10s %10s %10s %10s %10s %10s %10s\n", "inferprobe | LLM Metrics", "Metric", "avg", "min", "max", "p99", "p90", "p50", "std")
	row := func(name string, st *stats.Stats) {
		fmt.Fprintf(w, "%-52s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", name,
			st.Avg, st.Min, st.Max, st.P99, st.P90, st.P50, st.Std)
	}
	// AIPerf's metrics, under its names (profile_export_aiperf.json has
	// the same), then inferprobe's schedule lag.
	for _, m := range distributions(s) {
		if !m.trace { // AIPerf shows them only with --show-trace-timing
			row(m.Name+" ("+m.Unit+")", m.Stats)
		}
	}
	if lag := scaled(s.ScheduleLag, ms); lag != nil {
		row("Schedule Lag (ms)", lag)
	}
	fmt.Fprintln(w)
	for _, m := range singles(r) {
		fmt.Fprintf(w, "%-52s %10.2f\n", csvName(m), m.Value)
	}
	if r.SLO != (report.SLO{}) {
		fmt.Fprintf(w, "%-52s %10d of %d successful\n", "Good Requests", s.Good, s.OK)
	}
	consoleIntervals(w, r)
	fmt.Fprintf(w, "%-52s %10d ok, %d errors, %d cancelled", "Requests", s.OK, s.Failed, s.Cancelled)
	if s.Lost > 0 {
		fmt.Fprintf(w, ", %d lost by inferprobe (worker_lost: its worker died, not the server's failure)", s.Lost)
	}
	fmt.Fprintln(w)
	if s.ClientPaused > 0 {
		fmt.Fprintf(w, "%-52s %10d left out of every figure above: a client process did not run (stopped, CPU-throttled or paused) while they were due or in flight (client_paused_ms in profile_export.jsonl)\n", "Client-Paused Requests", s.ClientPaused)
	}
	consoleErrors(w, s.Errors, r.Requests)
	if note := connectionNote(s); note != "" {
		fmt.Fprintf(w, "Note: %s.\n", note)
	}
	if note := mismatchNote(s); note != "" {
		fmt.Fprintf(w, "%-52s %10d of %d successful\n", "Output Length Mismatches", s.OutputLengthMismatches, s.OK)
		fmt.Fprintf(w, "Note: %s.\n", note)
	}
	if s.UsageDiscrepancies > 0 {
		fmt.Fprintf(w, "Note: %d of %d successful requests (%.1f%%) have a server token count (usage) more than %d%% from the client's (Usage Prompt Diff %%, Usage Completion Diff %%): "+
			"the chat template and special tokens count on the server, and a tokenizer other than the model's counts differently; give --tokenizer with the model's tokenizer, or compare usage_prompt_tokens.\n",
			s.UsageDiscrepancies, s.OK, 100*float64(s.UsageDiscrepancies)/float64(s.OK), report.UsageDiffThresholdPct)
	}
	if s.DetailsDropped > 0 {
		fmt.Fprintf(w, "Note: %d requests are in profile_export.jsonl without their inter-chunk latencies and in inputs.json without their payloads: the run kept %d MiB of those details; the statistics include them all.\n", s.DetailsDropped, report.MaxKeptBytes>>20)
	}
	switch {
	case s.TokensFromChunks:
		fmt.Fprintln(w, "Note: the server sent no usage; output lengths count one token per content chunk (give --tokenizer for exact counts).")
	case s.TokensFromTokenizer:
		fmt.Fprintln(w, "Note: the server sent no usage; output lengths were counted with --tokenizer.")
	}
	fmt.Fprintf(w, "\nSequence digest: %s (%d requests, seed %d)\n", d, d.Requests, seed)
}

// ConsoleGPU prints what the GPUs did over the run. Without telemetry it
// says so only when GPU telemetry was asked for: unasked, a machine without
// GPUs is the ordinary case, which the daemon logs at debug level only.
func ConsoleGPU(w io.Writer, st gpu.WindowStats, asked bool) {
	if len(st.GPUs) == 0 {
		if asked {
			fmt.Fprintln(w, "\nGPU: no telemetry over the run (no DCGM or NVML here, or no samples); see --collector.gpu")
		}
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
