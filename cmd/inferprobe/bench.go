package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/collector/gpu"
	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

// benchFlags are the one-shot run's settings, named as NVIDIA AIPerf names
// them so that `aiperf profile …` becomes `inferprobe bench …`.
type benchFlags struct {
	url, model, endpointType string
	streaming                bool
	requestRate              float64
	arrivalPattern           string
	smoothness               float64
	concurrency              int
	requestCount             int
	duration                 float64
	islMean, islStddev       float64
	oslMean, oslStddev       float64
	extraInputs              []string
	seed                     uint64
	apiKey                   string
	headers                  []string
	timeout                  float64
	goodput                  string
	warmupRequests           int
	inputFile, datasetType   string
	fixedSchedule            bool
	tokenizer                string
	artifactDir              string
	saveScenario             string
	compare                  string
	compareFail              []string
	progress                 string
	set                      map[string]*bool // which flags the user gave
	// args are the command-line arguments, for the command that repeats the
	// run; runBench fills them from os.Args.
	args []string
}

func addBenchFlags(cmd *kingpin.CmdClause) *benchFlags {
	f := &benchFlags{set: map[string]*bool{}}
	flag := func(name, help string) *kingpin.FlagClause {
		f.set[name] = new(bool)
		return cmd.Flag(name, help).IsSetByUser(f.set[name])
	}
	flag("url", "Server base URL; http:// is assumed without a scheme and /v1 is added when it has no path (AIPerf's conventions), so localhost:8000 is http://localhost:8000/v1.").Short('u').Default("http://localhost:8000").StringVar(&f.url)
	flag("model", "Model name sent in every request.").Short('m').Required().StringVar(&f.model)
	flag("endpoint-type", "API to call: "+scenarios.EndpointHelp()+". Embeddings and rankings do not stream.").Default("chat").EnumVar(&f.endpointType, scenarios.EndpointNames()...)
	flag("streaming", "Stream responses (SSE). Needed for time to first token and inter-token latency.").BoolVar(&f.streaming)
	flag("request-rate", "Open loop: requests per second, sent at --arrival-pattern times. With --concurrency too, concurrency caps the requests in flight.").Float64Var(&f.requestRate)
	flag("arrival-pattern", "Gaps between requests at --request-rate: poisson, constant or gamma.").Default("poisson").EnumVar(&f.arrivalPattern, "poisson", "constant", "gamma")
	flag("arrival-smoothness", "Gamma shape k for --arrival-pattern=gamma: gaps vary by 1/sqrt(k) of their mean (k=1 is Poisson).").Float64Var(&f.smoothness)
	flag("concurrency", "Closed loop: requests kept in flight (default 1 when no --request-rate is given).").IntVar(&f.concurrency)
	flag("request-count", "Requests to send (default 10, unless --benchmark-duration is given).").IntVar(&f.requestCount)
	flag("benchmark-duration", "Seconds to send for, instead of a request count; requests in flight at the end finish.").Float64Var(&f.duration)
	flag("synthetic-input-tokens-mean", "Mean prompt length in tokens (default 550).").Float64Var(&f.islMean)
	flag("isl", "Alias of --synthetic-input-tokens-mean.").Float64Var(&f.islMean)
	flag("synthetic-input-tokens-stddev", "Standard deviation of the prompt length.").Default("0").Float64Var(&f.islStddev)
	flag("output-tokens-mean", "Mean output length in tokens, sent as max_tokens (default 256).").Float64Var(&f.oslMean)
	flag("osl", "Alias of --output-tokens-mean.").Float64Var(&f.oslMean)
	flag("output-tokens-stddev", "Standard deviation of the output length.").Default("0").Float64Var(&f.oslStddev)
	flag("extra-inputs", "key:value merged into every request body, repeatable; values are JSON when they parse as JSON (true, 128, 0.7), else strings. E.g. --extra-inputs min_tokens:128 --extra-inputs ignore_eos:true").StringsVar(&f.extraInputs)
	flag("random-seed", "Seed for every random choice; the same seed sends the same sequence (see the digest printed at the end).").Default("1").Uint64Var(&f.seed)
	flag("api-key", "API key sent as a bearer token. Prefer the INFERPROBE_API_KEY environment variable: flags show up in ps.").Envar("INFERPROBE_API_KEY").StringVar(&f.apiKey)
	flag("header", "Extra HTTP header 'Name: value', repeatable.").Short('H').StringsVar(&f.headers)
	flag("request-timeout-seconds", "Longest a request may take.").Default("600").Float64Var(&f.timeout)
	flag("goodput", `SLOs for goodput, AIPerf's syntax: "time_to_first_token:500 inter_token_latency:50 request_latency:2000" (milliseconds; also time_to_first_output_token), or "output_token_throughput_per_user:20" (tokens per second, a minimum). A successful request that meets every one is good; goodput is good requests per second.`).StringVar(&f.goodput)
	flag("warmup-request-count", "Requests sent first, at the same arrival pattern, and left out of the report and the artifacts.").IntVar(&f.warmupRequests)
	flag("input-file", "Dataset or trace file to send instead of synthetic prompts; see --custom-dataset-type.").StringVar(&f.inputFile)
	flag("custom-dataset-type", "Format of --input-file: single_turn, multi_turn, mooncake_trace, or random_pool (single_turn entries drawn at random, with replacement, by --random-seed).").Default("single_turn").EnumVar(&f.datasetType, "single_turn", "multi_turn", "mooncake_trace", "random_pool")
	flag("fixed-schedule", "Send each request of --input-file at its timestamp (trace replay) instead of at --request-rate or --concurrency.").BoolVar(&f.fixedSchedule)
	flag("tokenizer", "Path of a Hugging Face tokenizer.json to count tokens with when the server sends no usage. A hub name (Qwen/Qwen3-0.6B) is ignored with a note: inferprobe downloads nothing.").StringVar(&f.tokenizer)
	flag("artifact-dir", "Where to write the artifacts (profile_export_inferprobe.json and .csv in AIPerf's layout, profile_export.jsonl, report.html, command.txt). Default artifacts/MODEL-ENDPOINT-LOAD, like AIPerf.").StringVar(&f.artifactDir)
	flag("save-scenario", "Also write the run as on-demand burst bench in a scenario file for inferprobe serve.").StringVar(&f.saveScenario)
	flag("compare", "Baseline profile_export_inferprobe.json (or AIPerf's profile_export_aiperf.json) to print deltas against.").StringVar(&f.compare)
	flag("compare-fail", `Regression rule for --compare, repeatable: METRIC[.STAT]>N% fails when the value rose by more than N% over the baseline, METRIC[.STAT]<-N% when it fell by more than N%, METRIC[.STAT]>V (no %) when it is above V. STAT is avg (default), min, max, std or p1…p99; units are the JSON's (ms, tokens/sec). E.g. "time_to_first_token.p99>10%" "output_token_throughput<-5%". A failed rule exits 3.`).StringsVar(&f.compareFail)
	flag("progress", "Progress display: auto (a live line on a terminal, else a plain line every 5s), tty, plain or off.").Default("auto").EnumVar(&f.progress, "auto", "tty", "plain", "off")
	return f
}

// Exit codes of bench beyond 0 (success), 1 (could not run) and 2 (usage).
const (
	exitRegressed   = 3   // a --compare-fail rule failed
	exitInterrupted = 130 // SIGINT or SIGTERM
)

// runBench runs one finite benchmark and prints its report.
func runBench(logger *slog.Logger, stdout, stderr io.Writer, f *benchFlags, workers *workerFlags, gpus *gpuFlags) int {
	if f.args == nil {
		f.args = os.Args[1:]
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "inferprobe bench: "+format+"\n", a...)
		return 2
	}
	if *f.set["request-count"] && *f.set["benchmark-duration"] {
		return usage("give --request-count or --benchmark-duration, not both")
	}
	// A zero limit would mean "no limit" to the prober: the run would never end.
	if *f.set["request-count"] && f.requestCount < 1 {
		return usage("--request-count %d: must be at least 1", f.requestCount)
	}
	if *f.set["benchmark-duration"] && !(f.duration > 0 && f.duration <= math.MaxInt64/float64(time.Second)) {
		return usage("--benchmark-duration %g: must be a number of seconds > 0", f.duration)
	}
	rules, err := export.ParseRules(f.compareFail)
	if err != nil {
		return usage("--compare-fail %v", err)
	}
	var baseline export.Metrics
	switch {
	case f.compare != "":
		if baseline, err = export.LoadBaseline(f.compare); err != nil {
			return usage("--compare: %v", err)
		}
	case len(rules) > 0:
		return usage("--compare-fail needs a baseline: add --compare BASELINE.json")
	}
	// A relative rule needs the baseline's value: say so now, not after the run.
	if err := baseline.CheckRules(rules); err != nil {
		return usage("--compare-fail %v (--compare %s)", err, f.compare)
	}
	sc, err := f.scenario()
	if err == nil {
		err = scenarios.Check(sc.cfg, "bench", sc.written)
	}
	if err != nil {
		return sc.usage(stderr, err)
	}
	for _, n := range sc.notes {
		fmt.Fprintf(stderr, "inferprobe bench: note: %s\n", n)
	}
	targets, err := prober.Build(sc.cfg)
	if err != nil {
		return sc.usage(stderr, err)
	}
	// The warmup's own name gives it its own random streams, so warming up
	// does not change the measured sequence or its digest.
	plan, err := finite.NewPlan(finite.Spec{
		Name: "bench", WarmupName: "bench-warmup", Probe: sc.cfg.Probes["bench"], Target: targets["bench"],
		Seed: sc.cfg.Global.Seed, Shard: prober.Shard{Count: 1},
		Limit: f.limit(), Warmup: prober.Limit{Requests: uint64(f.warmupRequests)}, Grace: finite.NoGrace,
	})
	if err != nil {
		return usage("%v", err)
	}
	if f.saveScenario != "" {
		if err := saveScenario(f, sc, plan); err != nil {
			return usage("--save-scenario: %v", err)
		}
		fmt.Fprintf(stderr, "inferprobe bench: wrote the run as burst %q to %s\n", "bench", f.saveScenario)
	}

	p, err := workers.start(logger, 0)
	if err != nil {
		fmt.Fprintf(stderr, "inferprobe bench: starting worker processes: %v\n", err)
		return 1
	}
	defer drain(logger, p)
	// GPU telemetry only feeds the report; nothing is served.
	telemetry, err := gpus.start(logger, prometheus.NewRegistry())
	if err != nil {
		fmt.Fprintf(stderr, "inferprobe bench: %v; fix --collector.gpu.fields-file or turn GPU telemetry off with --no-collector.gpu\n", err)
		return 2
	}
	var opts []finite.Option
	if telemetry != nil {
		defer telemetry.Close()
		opts = append(opts, finite.WithGPUWindow(telemetry.Window()))
	}

	res := executeWithProgress(finite.New(plan, p, opts...), progressMode(f.progress, stderr), stderr)
	if !res.Measured {
		fmt.Fprintln(stderr, "inferprobe bench: interrupted during warmup; nothing was measured")
		return exitInterrupted
	}
	result := export.Run{
		Summary: res.Summary, Requests: export.ScrubErrors(res.Report.Requests(), f.secrets()), Config: f.exportConfig(plan.Limit), SLO: plan.SLO,
		Digest: res.Digest.String(), ClientBound: res.ClientBound, Interrupted: res.Stopped,
	}
	printReport(stdout, result, res.Digest, f.seed)
	if telemetry != nil {
		var st gpu.WindowStats
		if res.GPU != nil {
			st = *res.GPU
		}
		printGPU(stdout, st)
	}
	dir := f.artifactDir
	if dir == "" {
		dir = defaultArtifactDir(f)
	}
	if err := export.WriteArtifacts(dir, result); err != nil {
		fmt.Fprintf(stderr, "inferprobe bench: writing artifacts: %v; choose a writable --artifact-dir\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "\nArtifacts: %s\n", dir)
	code := 0
	if baseline != nil {
		fmt.Fprintf(stdout, "\nCompared with %s:\n", f.compare)
		failed, err := export.Compare(stdout, baseline, result.Metrics(), rules)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "inferprobe bench: --compare-fail: %v\n", err)
			code = 2
		case failed > 0:
			fmt.Fprintf(stderr, "inferprobe bench: %d --compare-fail rule(s) failed against %s\n", failed, f.compare)
			code = exitRegressed
		}
	}
	if res.Stopped {
		return exitInterrupted
	}
	return code
}

// executeWithProgress executes run, showing each phase's progress. The
// first SIGINT or SIGTERM stops sending and lets the requests in flight
// finish (they can take up to --request-timeout-seconds); a second cancels
// them; a third ends the process at once. The result comes after the first two.
func executeWithProgress(run *finite.Run, mode string, stderr io.Writer) finite.Result {
	sigs := make(chan os.Signal, 2) // two quick presses are both seen
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	reqCtx, abort := context.WithCancel(context.Background())
	defer abort()

	done := make(chan finite.Result, 1)
	go func() { done <- run.Execute(ctx, reqCtx) }()
	var bar *progress
	var shown finite.Progress
	// show follows the phase sending now, starting a line for each.
	show := func() {
		now := run.Progress()
		if now.Phase != shown.Phase || bar == nil {
			if bar != nil {
				bar.finish(shown.Report)
			}
			bar = newProgress(stderr, mode, string(now.Phase), now.Limit, now.Started)
		} else if !now.Started.IsZero() {
			bar.start = now.Started // shown before Execute started it
		}
		shown = now
	}
	show()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case res := <-done:
			show()
			bar.finish(shown.Report)
			return res
		case <-sigs:
			if ctx.Err() == nil {
				interrupt()
				bar.note("inferprobe bench: interrupted; waiting for the requests in flight to finish (Ctrl-C again cancels them)")
			} else {
				abort()
				signal.Stop(sigs) // one more ends the process
				bar.note("inferprobe bench: cancelling the requests in flight")
			}
		case <-tick.C:
			show()
			bar.update(shown.Report)
		}
	}
}

// printReport prints AIPerf's console table, with inferprobe's extras.
func printReport(w io.Writer, r export.Run, d prober.Digest, seed uint64) {
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
	if len(s.Errors) > 0 {
		reasons := make([]string, 0, len(s.Errors))
		for r, n := range s.Errors {
			reasons = append(reasons, fmt.Sprintf("%s=%d", r, n))
		}
		sort.Strings(reasons)
		fmt.Fprintf(w, "%-44s %s\n", "Errors by reason", strings.Join(reasons, " "))
	}
	switch {
	case s.TokensFromChunks:
		fmt.Fprintln(w, "Note: the server sent no usage; output lengths count one token per content chunk (give --tokenizer for exact counts).")
	case s.TokensFromTokenizer:
		fmt.Fprintln(w, "Note: the server sent no usage; output lengths were counted with --tokenizer.")
	}
	fmt.Fprintf(w, "\nSequence digest: %s (%d requests, seed %d)\n", d, d.Requests, seed)
}

// printGPU prints what the GPUs did over the run, or says there was no telemetry.
func printGPU(w io.Writer, st gpu.WindowStats) {
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
