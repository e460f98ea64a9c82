package dashboards

import "fmt"

// overview is the first dashboard to open: is every target within its SLOs,
// how fast is it, how much does it serve, and how often does it fail.
func overview() *Dashboard {
	vars := append(requestVars(), phaseVar())
	sel := selector(matchTarget, matchModel, matchScenario, `phase=~"$phase"`)
	// Finished by the target: neither cancelled nor lost by inferprobe.
	finished := selector(matchTarget, matchModel, matchScenario, `phase=~"$phase"`, `outcome=~"ok|error"`)
	errored := selector(matchTarget, matchModel, matchScenario, `phase=~"$phase"`, `outcome="error"`)

	goodRatio := ratio(increase("inferprobe_good_requests_total", sel), increase("inferprobe_requests_total", finished), "target")
	errRatio := ratio(increase("inferprobe_requests_total", errored), increase("inferprobe_requests_total", finished), "target")

	slo := row{"SLO status (over the time range)", []*Panel{
		stat("Goodput ratio", "Share of finished requests (cancelled ones excluded) that succeeded and met every SLO of their probe, per target, over the time range.",
			"percentunit", 6, 5, thresholds("red", 0.95, "orange", 0.99, "green"), q(goodRatio, "{{target}}")),
		stat("Error ratio", "Failed requests / finished requests (cancelled ones excluded), per target, over the time range. The runbook's error alert fires above 5 % over 15m.",
			"percentunit", 6, 5, thresholds("green", 0.01, "orange", 0.05, "red"), q(errRatio, "{{target}}")),
		stat("p99 time to first token", "99th percentile of TTFT per target over the time range, from the native histograms.",
			"s", 6, 5, greenBase, q(hqRange(0.99, "inferprobe_time_to_first_token_seconds", sel, "target"), "{{target}}")),
		stat("p99 inter-token latency", "99th percentile of per-request inter-token latency per target over the time range.",
			"s", 6, 5, greenBase, q(hqRange(0.99, "inferprobe_inter_token_latency_seconds", sel, "target"), "{{target}}")),
	}}

	latency := row{"Latency per target (p50, p90, p99)", []*Panel{
		timeseries("Time to first token", "From the request being written to the first content chunk (reasoning counts).",
			"s", 8, 9, quantiles("inferprobe_time_to_first_token_seconds", sel, "target", "{{target}}")...),
		timeseries("Inter-token latency", "Per request: time between the first and last content chunk per output token after the first chunk.",
			"s", 8, 9, quantiles("inferprobe_inter_token_latency_seconds", sel, "target", "{{target}}")...),
		timeseries("Request latency", "From the request being written to the end of the response.",
			"s", 8, 9, quantiles("inferprobe_request_duration_seconds", sel, "target", "{{target}}")...),
	}}

	throughput := row{"Throughput, goodput and errors", []*Panel{
		timeseries("Requests", "Finished requests per second by target and outcome (ok, error, cancelled, lost by inferprobe).",
			"reqps", 8, 8, q(sumBy("target, outcome", rate("inferprobe_requests_total", sel)), "{{target}} {{outcome}}")),
		timeseries("Goodput", "Requests per second that succeeded and met every SLO of their probe, beside all finished requests.",
			"reqps", 8, 8,
			q(sumBy("target", rate("inferprobe_good_requests_total", sel)), "{{target}} good"),
			q(sumBy("target", rate("inferprobe_requests_total", finished)), "{{target}} finished")),
		timeseries("Goodput ratio", "Good requests / finished requests (cancelled ones excluded).",
			"percentunit", 8, 8, q(ratio(rate("inferprobe_good_requests_total", sel), rate("inferprobe_requests_total", finished), "target"), "{{target}}")),
		timeseries("Error ratio by reason", "Failed requests by reason / finished requests. Reasons: connect, timeout, stall, http_4xx, http_429, http_5xx, protocol, truncated, server_error_event, worker_lost.",
			"percentunit", 8, 8, q(fmt.Sprintf("%s\n/ ignoring (reason) group_left\n%s",
				sumBy("target, reason", rate("inferprobe_request_errors_total", sel)),
				sumBy("target", rate("inferprobe_requests_total", finished))), "{{target}} {{reason}}")),
		timeseries("Token throughput", "Input and output tokens per second of successful requests.",
			"suffix: tok/s", 8, 8,
			q(sumBy("target", rate("inferprobe_output_tokens_total", sel)), "{{target}} output"),
			q(sumBy("target", rate("inferprobe_input_tokens_total", sel)), "{{target}} input")),
		timeseries("Output length mismatches", "Successful requests per second whose output length differed from the length the probe pinned (ignore_eos, or min_tokens >= max_tokens): the server ignored them.",
			"reqps", 8, 8, q(sumBy("target", rate("inferprobe_output_length_mismatches_total", sel)), "{{target}}")),
	}}

	return newDashboard("inferprobe-overview", "inferprobe / Overview",
		"SLO status, latency quantiles, goodput, errors and throughput per target, from inferprobe's probes.",
		vars, []Annotation{burstAnnotation(selector(matchTarget))}, slo, latency, throughput, engineRow(sel))
}
