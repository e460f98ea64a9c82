package dashboards

// client tells whether the numbers describe the server or inferprobe: how
// late requests left, whether the client saturated, and how its worker
// processes fare.
func client() *Dashboard {
	sel := selector(matchTarget, matchModel, matchScenario)
	yesNo := func(no, yes string) map[string][2]string {
		return map[string][2]string{"0": {no, "green"}, "1": {yes, "red"}}
	}

	status := row{"Status", []*Panel{
		withMappings(stat("Client saturated", "1 when inferprobe itself may be the bottleneck: a request in the last minute overlapped a pause of the client, schedule lag p99 >= 10 ms, a worker using >= 0.9 cores, or Go scheduling latency p99 >= 10 ms. Latency measured meanwhile may be inflated.",
			"none", 4, 4, thresholds("green", 1.0, "red"), q("max("+own("inferprobe_client_saturated")+")", "saturated")), yesNo("no", "SATURATED")),
		stat("Workers up", "Worker processes running, and configured.", "short", 4, 4, greenBase,
			q("sum("+own("inferprobe_workers_up")+")", "up"), q("sum("+own("inferprobe_workers")+")", "configured")),
		stat("Worker restarts", "Worker processes restarted over the time range after dying or being declared stuck.",
			"short", 4, 4, thresholds("green", 1.0, "orange"), q(sumBy("", increase("inferprobe_worker_restarts_total", selector())), "restarts")),
		withMappings(stat("Crash looping", "1 while workers keep dying (5 exits within a minute).",
			"none", 4, 4, thresholds("green", 1.0, "red"), q("max("+own("inferprobe_worker_crash_looping")+")", "crash looping")), yesNo("no", "CRASH LOOP")),
		withMappings(stat("Last reload", "Whether the last load of the scenario file succeeded; after a failed one the previous configuration keeps running.",
			"none", 4, 4, thresholds("red", 1.0, "green"), q("min("+own("inferprobe_config_last_reload_successful")+")", "config")),
			map[string][2]string{"0": {"FAILED", "red"}, "1": {"ok", "green"}}),
		stat("Probes running", "Probes of the scenario file that are running.", "short", 4, 4, greenBase, q("sum("+own("inferprobe_probes")+")", "probes")),
	}}

	lag := row{"Schedule lag and load", []*Panel{
		timeseries("Schedule lag", "Actual send - scheduled send, less any concurrency wait: how far inferprobe fell behind its schedule. Saturation is flagged at p99 >= 10 ms.",
			"s", 8, 8,
			q(hq(0.5, "inferprobe_schedule_lag_seconds", sel, "target"), "{{target}} p50"),
			q(hq(0.99, "inferprobe_schedule_lag_seconds", sel, "target"), "{{target}} p99")),
		timeseries("Concurrency wait p99", "How long max_concurrency held requests past their scheduled send (0 without a cap). Not part of TTFT or lag.",
			"s", 8, 8, q(hq(0.99, "inferprobe_concurrency_wait_seconds", sel, "target"), "{{target}}")),
		timeseries("Requests in flight", "Requests sent and not finished, per target.",
			"short", 8, 8, q(sumBy("target", "inferprobe_in_flight_requests"+sel), "{{target}}")),
		timeseries("Requests paused or lost by the client", "Per target: requests left out of every measurement because an inferprobe process did not run for longer than its watchdog's threshold while they were in flight (stopped, CPU-throttled, paused), and requests lost with a worker that died. Neither is the server's doing.",
			"reqps", 24, 6,
			q(sumBy("target", rate("inferprobe_client_paused_requests_total", sel)), "{{target}} paused"),
			q(sumBy("target", rate("inferprobe_requests_total", selector(matchTarget, matchModel, matchScenario, `outcome="lost"`))), "{{target}} lost")),
		withMappings(timeline("Saturation over time", "When inferprobe flagged itself as saturated.",
			"none", 24, 4, q("max("+own("inferprobe_client_saturated")+")", "client")), yesNo("ok", "saturated")),
	}}

	workers := row{"Worker processes", []*Panel{
		timeseries("Worker CPU", "CPU used by all worker processes together (a worker near 0.9 cores flags saturation).",
			"suffix: cores", 8, 8, q(sumBy("", rate("inferprobe_worker_cpu_seconds_total", selector())), "workers")),
		timeseries("Go scheduling latency p99", "Per worker, over its last heartbeat: time goroutines waited to run. Saturation is flagged at 10 ms.",
			"s", 8, 8, q(own("inferprobe_worker_sched_latency_p99_seconds"), "worker {{worker}}")),
		timeseries("Requests in flight per worker", "Dispatch sends each request to the worker with the fewest in flight.",
			"short", 8, 8, q(own("inferprobe_worker_in_flight_requests"), "worker {{worker}}")),
		timeseries("Workers and restarts", "Workers running and configured, and restarts per rate interval.",
			"short", 12, 7,
			q("sum("+own("inferprobe_workers_up")+")", "up"),
			q("sum("+own("inferprobe_workers")+")", "configured"),
			q(sumBy("", "increase("+own("inferprobe_worker_restarts_total")+rateWindow+")"), "restarts")),
		timeseries("GPU collector read time", "How long inferprobe's latest read of GPU telemetry took; absent without the GPU collector.",
			"s", 12, 7, q("inferprobe_collector_scrape_duration_seconds"+selector(`collector="gpu"`), "read time")),
	}}

	return newDashboard("inferprobe-client", "inferprobe / Client health",
		"Whether inferprobe's own numbers can be trusted: schedule lag, saturation, worker processes, restarts and reloads.",
		requestVars(), nil, status, lag, workers)
}
