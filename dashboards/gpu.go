package dashboards

// gpu shows the GPUs under the targets (dcgm-exporter's metric names, from
// inferprobe's own collector or from dcgm-exporter) beside what the probes
// measure: power, utilisation, memory, energy per output token.
func gpu() *Dashboard {
	vars := append(requestVars(), gpuVars()...)
	g := gpuSelector()
	reqs := selector(matchTarget, matchModel, matchScenario)
	perGPU := "{{Hostname}} GPU {{gpu}}"

	status := row{"Telemetry and totals", []*Panel{
		withMappings(stat("Telemetry", `Whether inferprobe reads GPU telemetry (from its own collector; absent when the GPUs come from dcgm-exporter). "simulated" means the demo's simulated GPUs: not real data.`,
			"none", 6, 4, thresholds("red", 1.0, "green"),
			q("max by (backend) ("+own("inferprobe_gpu_telemetry_backend_info")+") * on () group_left max("+own("inferprobe_gpu_telemetry_up")+")", "{{backend}}")),
			map[string][2]string{"0": {"down", "red"}, "1": {"up", "green"}}),
		stat("GPUs", "GPUs exporting telemetry.", "short", 4, 4, greenBase, q("count(DCGM_FI_DEV_POWER_USAGE"+g+")", "GPUs")),
		stat("Power now", "Power drawn by the selected GPUs together.", "watt", 4, 4, greenBase, q(sumBy("", "DCGM_FI_DEV_POWER_USAGE"+g), "power")),
		// No energy per output token here: over a time range the GPUs also
		// serve traffic inferprobe does not see. The bursts dashboard shows it
		// while a burst runs, and bench reports it per run.
		stat("Energy over the time range", "Energy used by the selected GPUs over the time range, from their energy counters (mJ).",
			"kwatth", 10, 4, greenBase, q(sumBy("", increase("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", g))+" / 3.6e9", "energy")),
	}}

	power := row{"Power and energy", []*Panel{
		timeseries("Power", "Power draw per GPU.", "watt", 24, 8, q("DCGM_FI_DEV_POWER_USAGE"+g, perGPU)),
	}}

	activity := row{"Utilisation and memory", []*Panel{
		timeseries("GPU utilisation", "Share of time a kernel was running (DCGM_FI_DEV_GPU_UTIL): busy, not necessarily efficient.",
			"percent", 8, 8, q("DCGM_FI_DEV_GPU_UTIL"+g, perGPU)),
		timeseries("SM and tensor activity", "Profiling fields (DCGM only, datacenter GPUs): share of cycles an SM had work, and the tensor pipes were active.",
			"percentunit", 8, 8,
			q("DCGM_FI_PROF_SM_ACTIVE"+g, perGPU+" SM active"),
			q("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"+g, perGPU+" tensor active")),
		timeseries("Framebuffer memory used", "Device memory in use per GPU; servers such as vLLM reserve most of it for the KV cache at start.",
			"mbytes", 8, 8, q("DCGM_FI_DEV_FB_USED"+g, perGPU)),
		timeseries("Temperature", "GPU and memory temperature per GPU.", "celsius", 12, 7,
			q("DCGM_FI_DEV_GPU_TEMP"+g, perGPU+" GPU"),
			q("DCGM_FI_DEV_MEMORY_TEMP"+g, perGPU+" memory")),
		timeseries("Memory bandwidth activity", "Share of cycles the device memory interface was busy (DCGM profiling), and the memory copy utilisation.",
			"percentunit", 12, 7,
			q("DCGM_FI_PROF_DRAM_ACTIVE"+g, perGPU+" DRAM active"),
			q("DCGM_FI_DEV_MEM_COPY_UTIL"+g+" / 100", perGPU+" copy util")),
	}}

	beside := row{"Latency beside GPU activity", []*Panel{
		withRightAxis(timeseries("Time to first token p99 and GPU utilisation", "TTFT p99 of the selected targets (left) with the selected GPUs' mean utilisation (right): queueing shows as TTFT rising with utilisation pinned.",
			"s", 8, 8,
			q(hq(0.99, "inferprobe_time_to_first_token_seconds", reqs, ""), "TTFT p99"),
			q("avg(DCGM_FI_DEV_GPU_UTIL"+g+")", "GPU utilisation")), "B", "percent"),
		withRightAxis(timeseries("Inter-token latency p99 and power", "Decode speed (left) with the power the selected GPUs draw (right).",
			"s", 8, 8,
			q(hq(0.99, "inferprobe_inter_token_latency_seconds", reqs, ""), "ITL p99"),
			q(sumBy("", "DCGM_FI_DEV_POWER_USAGE"+g), "power")), "B", "watt"),
		withRightAxis(timeseries("Requests in flight and GPU utilisation", "inferprobe's requests in flight to the selected targets (left) with the GPUs' mean utilisation (right).",
			"short", 8, 8,
			q(sumBy("", "inferprobe_in_flight_requests"+reqs), "requests in flight"),
			q("avg(DCGM_FI_DEV_GPU_UTIL"+g+")", "GPU utilisation")), "B", "percent"),
	}}

	return newDashboard("inferprobe-gpu", "inferprobe / GPU and energy",
		"GPU power, utilisation, memory and energy, with latency beside GPU activity. Metric names are dcgm-exporter's; pick the one job that exports them.",
		vars, []Annotation{burstAnnotation(selector(matchTarget))}, status, power, activity, beside)
}
