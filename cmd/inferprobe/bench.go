package main

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/capacity"
	"github.com/inferprobe/inferprobe/collector/gpu"
	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/gputelemetry"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

// runBench runs one finite benchmark, or a sweep of them, and prints the
// reports.
func runBench(logger *slog.Logger, stdout, stderr io.Writer, f *benchFlags, workers *workerFlags, gpus *gpuFlags) (code int) {
	// A bug is not a bad flag: it must not exit 2, which tells a script to
	// fix its command line.
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(stderr, "inferprobe bench: internal error (a bug: please report it with the command line): %v\n%s", v, debug.Stack())
			code = exitCannotRun
		}
	}()
	if f.args == nil {
		f.args = os.Args[1:]
	}
	// What the run prints and logs goes to the artifacts too; the progress
	// line only to the terminal.
	console, runLog := new(captured), new(captured)
	term := stderr
	stdout, stderr = io.MultiWriter(stdout, console), io.MultiWriter(stderr, runLog)
	logs := []slog.Handler{slog.NewTextHandler(runLog, nil)}
	if logger != nil {
		logs = append(logs, logger.Handler())
	}
	logger = slog.New(slog.NewMultiHandler(logs...))
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "inferprobe bench: "+format+"\n", a...)
		return exitUsage
	}
	// A zero limit would mean "no limit" to the prober: the run would never end.
	if *f.set["request-count"] && f.requestCount < 1 {
		return usage("--request-count %d: must be at least 1", f.requestCount)
	}
	if *f.set["benchmark-duration"] {
		if _, err := seconds("--benchmark-duration", f.duration); err != nil {
			return usage("%v", err)
		}
	}
	if *f.set["failed-request-threshold"] && !(f.failedThreshold >= 0 && f.failedThreshold <= 1) {
		return usage("--failed-request-threshold %g: must be a fraction from 0 to 1 (0.1 ends the run once more than 10%% of requests failed)", f.failedThreshold)
	}
	if !(f.confidenceLevel > 0 && f.confidenceLevel < 1) {
		return usage("--confidence-level %g: must be a fraction between 0 and 1, such as 0.95", f.confidenceLevel)
	}
	if err := f.multi.check(f); err != nil {
		return usage("%v", err)
	}
	for _, n := range f.multi.notes(f) {
		fmt.Fprintf(stderr, "inferprobe bench: note: %s\n", n)
	}
	rules, err := export.ParseRules(f.compareFail)
	if err != nil {
		return usage("--compare-fail %v", err)
	}
	var baseline export.Metrics
	var baselineSamples *export.Samples
	switch {
	case f.compare != "":
		if baseline, err = export.LoadBaseline(f.compare); err != nil {
			return usage("--compare: %v", err)
		}
		if baselineSamples, err = export.LoadSamples(f.compare); err != nil {
			return usage("--compare: %v", err)
		}
	case len(rules) > 0:
		return usage("--compare-fail needs a baseline: add --compare BASELINE.json")
	}
	// A relative rule needs the baseline's value: say so now, not after the run.
	if err := baseline.CheckRules(rules); err != nil {
		return usage("--compare-fail %v (--compare %s)", err, f.compare)
	}
	search, err := f.searchPlan(stderr)
	if err != nil {
		return usage("%v", err)
	}
	points := f.sweepPoints()
	if search != nil {
		// The first step, planned now so that a bad flag fails at once.
		points = []sweepPoint{{concurrency: search.Min, dir: searchDir(search, capacity.Step{Concurrency: search.Min})}}
	}
	sweep := len(points) > 1
	if sweep && f.compare != "" {
		return usage("--compare compares one run with a baseline, not a sweep: run the point to compare on its own")
	}
	if sweep && f.shard != "" {
		return usage("--shard sends a share of one run, not of a sweep: give one --concurrency or --request-rate")
	}
	if f.sameSeed && !*f.set["random-seed"] {
		return usage("--parameter-sweep-same-seed needs --random-seed, the seed every point draws from (as AIPerf)")
	}
	if sweep && f.saveScenario != "" {
		return usage("--save-scenario writes one run as a burst, not a sweep: give one --concurrency or --request-rate")
	}
	// A tokenizer the Hub refuses is a bad flag; one it cannot be asked
	// for (no network) is a run that could not start.
	if tok := f.tokenizerFile(); tok.err != nil {
		fmt.Fprintf(stderr, "inferprobe bench: %v\n", tok.err)
		return tok.exit
	}
	// Every point or run is planned before anything is sent, so that a bad
	// value in a list fails at once, not after the points before it ran.
	var runs []benchRun
	base := f.artifactDir
	if f.multi.runs > 1 {
		base = cmp.Or(base, defaultArtifactDir(f))
		runs, err = f.planTrials(stderr, base, points)
	} else {
		runs, base, err = f.planPoints(stderr, points)
	}
	if err != nil {
		return exitUsage // planRun said why
	}
	if f.shard != "" && f.artifactDir == "" {
		runs[0].dir = defaultShardDir(runs[0].dir, runs[0].shard)
	}
	if f.saveScenario != "" {
		if err := saveScenario(f, runs[0].sc, runs[0].plan); err != nil {
			return usage("--save-scenario: %v", err)
		}
		fmt.Fprintf(stderr, "inferprobe bench: wrote the run as burst %q to %s\n", "bench", f.saveScenario)
	}

	serverOpt, ok := f.serverMetricsRun(stderr)
	if !ok {
		return exitUsage
	}
	p, err := workers.start(logger, 0)
	if err != nil {
		fmt.Fprintf(stderr, "inferprobe bench: starting worker processes: %v\n", err)
		return exitCannotRun
	}
	defer drain(logger, p)
	// GPU telemetry only feeds the report; nothing is served. AIPerf's
	// --gpu-telemetry asks for this host's GPUs as --collector.gpu does,
	// unless it names DCGM exporter URLs only.
	gpus.asked = gpus.asked || f.asksLocalGPUs()
	telemetry, err := gpus.start(logger, prometheus.NewRegistry())
	if err != nil {
		fmt.Fprintf(stderr, "inferprobe bench: %v; fix --collector.gpu.fields-file or turn GPU telemetry off with --no-collector.gpu\n", err)
		return exitUsage
	}
	var opts []finite.Option
	if serverOpt != nil {
		opts = append(opts, serverOpt)
	}
	if telemetry != nil {
		defer telemetry.Close()
		opts = append(opts, finite.WithGPUWindow(telemetry.Window()))
	}
	if len(f.gpuURLs) > 0 {
		opts = append(opts, finite.WithGPUTelemetry(gputelemetry.Options{URLs: f.gpuURLs, Logger: logger}))
	}
	sigs := make(chan os.Signal, 2) // two quick presses are both seen
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	b := &bencher{stdout: stdout, stderr: stderr, term: term, console: console, runLog: runLog,
		f: f, exec: p, sigs: sigs, mode: progressMode(f.progress, term), opts: opts,
		baseline: baseline, baselineSamples: baselineSamples, rules: rules, gpu: telemetry != nil, gpuAsked: gpus.asked}
	if f.autoPlot && (search != nil || f.multi.runs > 1) {
		fmt.Fprintln(stderr, "inferprobe bench: note: --auto-plot draws a single run's and a sweep's plots; for this one, run aiperf plot on its directory")
	}
	switch {
	case search != nil:
		return b.search(search, base)
	case f.multi.runs > 1:
		return b.multiRun(runs, points, base)
	case !sweep:
		b.plot = true
		code, _ := b.run(runs[0])
		return code
	}
	return b.sweep(runs, base)
}

// bencher runs planned runs on one worker pool, under one signal handler,
// so that Ctrl-C between the points of a sweep stops it cleanly too.
type bencher struct {
	stdout, stderr io.Writer
	// term is the terminal the progress line goes to; console and runLog
	// hold what the run printed and logged, for its artifacts.
	term            io.Writer
	console, runLog *captured
	f               *benchFlags
	exec            prober.Executor
	sigs            chan os.Signal
	mode            string
	opts            []finite.Option
	baseline        export.Metrics
	baselineSamples *export.Samples // nil when the baseline is a summary alone
	rules           []export.Rule
	gpu             bool
	gpuAsked        bool // a GPU flag was given: a run without telemetry says so
	interrupted     bool
	// plot says the run draws --auto-plot's PNGs itself: a single run does;
	// a sweep draws its own, and not one per point, as AIPerf plots the
	// directory it ran in.
	plot bool
	// deadline is a capacity search's time limit (zero for none); cut says
	// it stopped the last run.
	deadline time.Time
	cut      bool
}

// run executes r, prints its report, writes its artifacts and returns its
// exit status and what it measured (for a sweep's summary; nil when it was
// interrupted during the warmup).
func (b *bencher) run(r benchRun) (int, *export.SweepPoint) {
	live := &liveStats{}
	sinks := []prober.Recorder{live}
	var guard *finite.FailureGuard
	if *b.f.set["failed-request-threshold"] {
		guard = finite.NewFailureGuard(b.f.failedThreshold, r.floor, "--failed-request-threshold")
		sinks = append(sinks, guard)
	}
	records, err := b.openShardFile(r)
	if err != nil {
		fmt.Fprintf(b.stderr, "inferprobe bench: %s: %v; choose a writable --artifact-dir\n", shardFileName, err)
		return exitCannotRun, nil
	}
	if records != nil {
		sinks = append(sinks, records)
	}
	opts := append(slices.Clip(b.opts), finite.WithRecorder(prober.Tee(sinks...)))
	res, interrupted, cut := executeWithProgress(finite.New(r.plan, b.exec, opts...), b.mode, b.term, b.sigs, live, guard, b.deadline)
	b.cut = cut
	if err := records.close(res); err != nil {
		fmt.Fprintf(b.stderr, "inferprobe bench: %v; choose a writable --artifact-dir\n", err)
		return exitCannotRun, nil
	}
	b.interrupted = b.interrupted || interrupted
	if !res.Measured {
		fmt.Fprintln(b.stderr, "inferprobe bench: interrupted during warmup; nothing was measured")
		return exitInterrupted, nil
	}
	result := export.Run{
		Summary: res.Report.SummaryAt(b.f.confidenceLevel), Requests: export.ScrubErrors(res.Report.Requests(), b.f.secrets()), Config: r.config, SLO: r.plan.SLO,
		Digest: res.Digest.String(), ClientBound: res.ClientBound, Interrupted: res.Stopped, GPUTelemetry: b.gpu,
		GraceExpired: res.GraceExpired, GraceCut: res.Cut,
		ServerMetrics: res.ServerMetrics, GPUEndpoints: res.GPUEndpoints,
	}
	result.Config.ArtifactDir = r.dir
	if b.baseline != nil {
		result.Baseline = &export.Baseline{Path: b.f.compare, Metrics: b.baseline, Samples: b.baselineSamples, Rules: b.rules}
	}
	export.Console(b.stdout, result, res.Digest, r.seed)
	if b.gpu {
		var st gpu.WindowStats
		if res.GPU != nil {
			st = *res.GPU
		}
		export.ConsoleGPU(b.stdout, st, b.gpuAsked)
	}
	export.ConsoleGPUEndpoints(b.stdout, result)
	export.ConsoleServerMetrics(b.stdout, result)
	// A server that echoes the key it refused must not put it in the files.
	redact := scenarios.Redactor(b.f.secrets())
	// take empties them: the next point of a sweep starts its own console and log.
	result.ConsoleText, result.Log = []byte(redact.Replace(b.console.take())), []byte(redact.Replace(b.runLog.take()))
	if err := export.WriteArtifacts(r.dir, result); err != nil {
		fmt.Fprintf(b.stderr, "inferprobe bench: writing artifacts: %v; choose a writable --artifact-dir\n", err)
		return exitCannotRun, nil
	}
	fmt.Fprintf(b.stdout, "\nArtifacts: %s\n", r.dir)
	if b.plot {
		if c := b.plots(r.dir, func() ([]string, error) { return export.WritePlots(r.dir, result) }); c != exitOK {
			return c, nil
		}
	}
	point := &export.SweepPoint{Params: r.point.params, Dir: r.point.dir, Run: result}
	code, why := runStatus(res.Summary, guard)
	if code != exitOK {
		fmt.Fprintf(b.stderr, "inferprobe bench: %s; %s\n", why, statusHint[code])
		point.Failed = why
	}
	if b.baseline != nil {
		fmt.Fprintf(b.stdout, "\nCompared with %s:\n", b.f.compare)
		failed, err := result.CompareWithBaseline(b.stdout)
		switch {
		case err != nil:
			fmt.Fprintf(b.stderr, "inferprobe bench: --compare-fail: %v\n", err)
			code = cmp.Or(code, exitUsage)
		case failed > 0:
			fmt.Fprintf(b.stderr, "inferprobe bench: %d --compare-fail rule(s) failed against %s\n", failed, b.f.compare)
			code = cmp.Or(code, exitRegressed)
		}
	}
	if interrupted {
		point.Failed = "interrupted"
		return exitInterrupted, point
	}
	return code, point
}
