package dashboards

import "fmt"

// bursts follows burst runs: when they ran and how they ended, the exact
// results of each burst's last run, and how that run compares with the
// runs before it.
func bursts() *Dashboard {
	vars := append(append([]Variable{datasourceVar()}, jobVars("inferprobe_burst_runs_total")...),
		labelVar("target", "Target", "inferprobe_burst_runs_total", selector(), "Targets that have bursts configured."),
		labelVar("burst", "Burst", "inferprobe_burst_runs_total", selector(matchTarget), "Bursts of the scenario file (the burst label; the scenario label of their requests)."))
	vars = append(vars, gpuVars()...)
	sel := selector(`burst=~"$burst"`, matchTarget)
	with := func(extra string) string { return selector(`burst=~"$burst"`, matchTarget, extra) }
	// A burst's requests carry phase="burst" and the burst's name as scenario.
	reqSel := selector(matchTarget, `scenario=~"$burst"`, `phase="burst"`)
	last := func(metric string) string { return metric + sel }
	vsMedian := func(metric string) string {
		s := with(`quantile="0.99"`)
		return fmt.Sprintf("%s%s\n/\nquantile_over_time(0.5, %s%s%s)", metric, s, metric, s, rangeWindow)
	}

	history := row{"Runs (over the time range)", []*Panel{
		withMappings(timeline("Running", "When each burst was running: sending or finishing its requests.",
			"none", 12, 5, q("max by (burst) ("+last("inferprobe_burst_running")+")", "{{burst}}")),
			map[string][2]string{"0": {"idle", "transparent"}, "1": {"running", "orange"}}),
		stat("Runs by result", "Runs that ended in the time range: succeeded (ran to its end), failed (could not run), cancelled.",
			"short", 4, 5, greenBase, q(sumBy("result", increase("inferprobe_burst_runs_total", sel)), "{{result}}")),
		stat("Skipped and queued starts", "Scheduled starts skipped (overlap: skip) or queued (overlap: queue) because the target was busy with another burst.",
			"short", 4, 5, thresholds("green", 1.0, "orange"),
			q(sumBy("", increase("inferprobe_burst_skipped_total", sel)), "skipped"),
			q(sumBy("", increase("inferprobe_burst_queued_total", sel)), "queued")),
		stat("Since the last run ended", "Time since each burst's last completed run ended.",
			"s", 4, 5, greenBase, q("time() - max by (burst) ("+last("inferprobe_burst_last_end_timestamp_seconds")+")", "{{burst}}")),
	}}

	lastRun := row{"Last completed run (exact quantiles of its own samples)", []*Panel{
		bars("Time to first token", "Exact quantiles of TTFT over the last run's requests.",
			"s", 8, 7, q(last("inferprobe_burst_last_time_to_first_token_seconds"), "{{burst}} q{{quantile}}")),
		bars("Inter-token latency", "Exact quantiles of inter-token latency over the last run's requests.",
			"s", 8, 7, q(last("inferprobe_burst_last_inter_token_latency_seconds"), "{{burst}} q{{quantile}}")),
		bars("Request latency", "Exact quantiles of request duration over the last run's requests.",
			"s", 8, 7, q(last("inferprobe_burst_last_request_duration_seconds"), "{{burst}} q{{quantile}}")),
		stat("Goodput ratio", "Share of the last run's finished requests that succeeded and met every SLO of the burst.",
			"percentunit", 5, 4, thresholds("red", 0.95, "orange", 0.99, "green"), q(last("inferprobe_burst_last_goodput_ratio"), "{{burst}}")),
		stat("Error ratio", "Share of the last run's finished requests that failed.",
			"percentunit", 5, 4, thresholds("green", 0.01, "orange", 0.05, "red"), q(last("inferprobe_burst_last_error_ratio"), "{{burst}}")),
		stat("Request throughput", "Successful requests per second, from the first send to the end of the last response.",
			"reqps", 5, 4, greenBase, q(last("inferprobe_burst_last_request_throughput"), "{{burst}}")),
		stat("Output token throughput", "Output tokens per second of the last run.",
			"suffix: tok/s", 5, 4, greenBase, q(last("inferprobe_burst_last_output_token_throughput"), "{{burst}}")),
		stat("Duration", "Length of the last run, from its first send to the end of its last response.",
			"s", 4, 4, greenBase, q(last("inferprobe_burst_last_duration_seconds"), "{{burst}}")),
	}}

	compare := row{"Compared with earlier runs", []*Panel{
		timeseries("p99 of each run", "Each step is one completed run's exact p99: a regression shows as a step up.",
			"s", 12, 8,
			q("inferprobe_burst_last_time_to_first_token_seconds"+with(`quantile="0.99"`), "{{burst}} TTFT p99"),
			q("inferprobe_burst_last_inter_token_latency_seconds"+with(`quantile="0.99"`), "{{burst}} ITL p99"),
			q("inferprobe_burst_last_request_duration_seconds"+with(`quantile="0.99"`), "{{burst}} request p99")),
		withRightAxis(timeseries("Throughput of each run", "Each step is one completed run: requests per second (left) and output tokens per second (right).",
			"reqps", 12, 8,
			q(last("inferprobe_burst_last_request_throughput"), "{{burst}} requests"),
			q(last("inferprobe_burst_last_output_token_throughput"), "{{burst}} output tokens")), "B", "suffix: tok/s"),
		stat("Last run's p99 against the runs before", "The last run's p99 divided by the median of the p99s shown over the time range (each run weighted by how long its result stood): 100 % is typical, above is slower.",
			"percentunit", 12, 5, thresholds("green", 1.1, "orange", 1.5, "red"),
			q("max by (burst) ("+vsMedian("inferprobe_burst_last_time_to_first_token_seconds")+")", "{{burst}} TTFT"),
			q("max by (burst) ("+vsMedian("inferprobe_burst_last_inter_token_latency_seconds")+")", "{{burst}} ITL"),
			q("max by (burst) ("+vsMedian("inferprobe_burst_last_request_duration_seconds")+")", "{{burst}} request")),
		timeseries("Burst requests as they run (p99)", "From the request histograms (phase=\"burst\"), while a run is in progress: TTFT and inter-token latency p99 per burst.",
			"s", 12, 5,
			q(hq(0.99, "inferprobe_time_to_first_token_seconds", reqSel, "scenario"), "{{scenario}} TTFT p99"),
			q(hq(0.99, "inferprobe_inter_token_latency_seconds", reqSel, "scenario"), "{{scenario}} ITL p99")),
		// Only while a burst runs does one load dominate the GPUs, so only then
		// is GPU energy over output tokens a figure about that load.
		timeseries("GPU energy per output token while a burst runs", "Energy of the selected GPUs (the ones serving the burst's target) per second / the burst's output tokens per second, shown only while a burst is running; bench reports the same per run.",
			"joule", 24, 6, q(sumBy("", rate("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", gpuSelector()))+" / 1000\n/\n"+
				sumBy("", rate("inferprobe_output_tokens_total", reqSel))+"\nand on ()\n(max("+last("inferprobe_burst_running")+") == 1)", "J per output token")),
	}}

	return newDashboard("inferprobe-bursts", "inferprobe / Bursts",
		"Burst runs: history, the exact results of each burst's last run, and comparison with earlier runs.",
		vars, []Annotation{burstAnnotation(sel)}, history, lastRun, compare)
}
