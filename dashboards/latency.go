package dashboards

// latency looks inside the latency histograms: whole distributions over
// time, quantiles beyond p99, the other timings, and probe against burst.
func latency() *Dashboard {
	sel := selector(matchTarget, matchModel, matchScenario)
	// The heatmaps and the quantiles beside them show the same traffic.
	probe := selector(matchTarget, matchModel, matchScenario, `phase=~"$phase"`)

	deep := func(metric string) []query {
		return []query{
			q(hq(0.5, metric, probe, ""), "p50"),
			q(hq(0.9, metric, probe, ""), "p90"),
			q(hq(0.99, metric, probe, ""), "p99"),
			q(hq(0.999, metric, probe, ""), "p99.9"),
			q(hmean(metric, probe, ""), "mean"),
		}
	}
	byPhase := func(metric string) []query {
		return []query{
			q(hq(0.5, metric, sel, "phase"), "{{phase}} p50"),
			q(hq(0.99, metric, sel, "phase"), "{{phase}} p99"),
		}
	}

	heatmaps := row{"Distributions over time (selected phase)", []*Panel{
		heatmap("Time to first token", "Every request's TTFT, bucketed by the native histogram (buckets about 2 % wide), or by the classic buckets (about 9 % wide) where Prometheus stores only those.",
			"s", 12, 9, hbuckets("inferprobe_time_to_first_token_seconds", probe)),
		heatmap("Inter-token latency", "Per-request inter-token latency.",
			"s", 12, 9, hbuckets("inferprobe_inter_token_latency_seconds", probe)),
		heatmap("Request latency", "Request duration, from the request being written to the end of the response.",
			"s", 12, 9, hbuckets("inferprobe_request_duration_seconds", probe)),
		heatmap("Inter-chunk latency", "Every gap between consecutive content chunks (vLLM's ITL): stalls and batching hiccups show here first.",
			"s", 12, 9, hbuckets("inferprobe_inter_chunk_latency_seconds", probe)),
	}}

	tails := row{"Quantiles and mean (selected phase)", []*Panel{
		timeseries("Time to first token", "p50, p90, p99, p99.9 and mean of the selected probes (and phase) together.",
			"s", 8, 9, deep("inferprobe_time_to_first_token_seconds")...),
		timeseries("Inter-token latency", "p50, p90, p99, p99.9 and mean of the selected probes (and phase) together.",
			"s", 8, 9, deep("inferprobe_inter_token_latency_seconds")...),
		timeseries("Request latency", "p50, p90, p99, p99.9 and mean of the selected probes (and phase) together.",
			"s", 8, 9, deep("inferprobe_request_duration_seconds")...),
		timeseries("First output token and second token (p99)", "Time to first output token (after any reasoning) and time from the first to the second content chunk, p99 per target.",
			"s", 12, 8,
			q(hq(0.99, "inferprobe_time_to_first_output_token_seconds", probe, "target"), "{{target}} first output token"),
			q(hq(0.99, "inferprobe_time_to_second_token_seconds", probe, "target"), "{{target}} second token")),
		timeseries("Sequence lengths (p50, p99)", "Input and output tokens per request.",
			"short", 12, 8,
			q(hq(0.5, "inferprobe_input_tokens", probe, "target"), "{{target}} input p50"),
			q(hq(0.99, "inferprobe_input_tokens", probe, "target"), "{{target}} input p99"),
			q(hq(0.5, "inferprobe_output_tokens", probe, "target"), "{{target}} output p50"),
			q(hq(0.99, "inferprobe_output_tokens", probe, "target"), "{{target}} output p99")),
	}}

	phases := row{"Probe vs burst", []*Panel{
		timeseries("Time to first token by phase", "The steady probes beside burst runs on the same targets: how much a burst's load moves TTFT.",
			"s", 8, 8, byPhase("inferprobe_time_to_first_token_seconds")...),
		timeseries("Inter-token latency by phase", "Decode speed under the probes' load and under a burst's.",
			"s", 8, 8, byPhase("inferprobe_inter_token_latency_seconds")...),
		timeseries("Request latency by phase", "Whole-request latency by phase.",
			"s", 8, 8, byPhase("inferprobe_request_duration_seconds")...),
		timeseries("Requests by phase", "Finished requests per second by phase: the load each phase puts on the targets.",
			"reqps", 24, 6, q(sumBy("phase", rate("inferprobe_requests_total", sel)), "{{phase}}")),
	}}

	return newDashboard("inferprobe-latency", "inferprobe / Latency deep dive",
		"Latency heatmaps, tail quantiles over time, and probe against burst latency.",
		append(requestVars(), phaseVar()), []Annotation{burstAnnotation(selector(matchTarget))}, heatmaps, tails, phases)
}
