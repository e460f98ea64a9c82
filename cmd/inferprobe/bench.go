package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/collector/gpu"
	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

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
	// What the run prints and logs goes to the artifacts too; the progress
	// line only to the terminal.
	var console, runLog bytes.Buffer
	term := stderr
	stdout, stderr = io.MultiWriter(stdout, &console), io.MultiWriter(stderr, &runLog)
	logs := []slog.Handler{slog.NewTextHandler(&runLog, nil)}
	if logger != nil {
		logs = append(logs, logger.Handler())
	}
	logger = slog.New(slog.NewMultiHandler(logs...))
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

	res := executeWithProgress(finite.New(plan, p, opts...), progressMode(f.progress, term), term)
	if !res.Measured {
		fmt.Fprintln(stderr, "inferprobe bench: interrupted during warmup; nothing was measured")
		return exitInterrupted
	}
	dir := f.artifactDir
	if dir == "" {
		dir = defaultArtifactDir(f)
	}
	result := export.Run{
		Summary: res.Summary, Requests: export.ScrubErrors(res.Report.Requests(), f.secrets()), Config: f.exportConfig(plan.Limit, sc.cfg, dir), SLO: plan.SLO,
		Digest: res.Digest.String(), ClientBound: res.ClientBound, Interrupted: res.Stopped, GPUTelemetry: telemetry != nil,
	}
	export.Console(stdout, result, res.Digest, f.seed)
	if telemetry != nil {
		var st gpu.WindowStats
		if res.GPU != nil {
			st = *res.GPU
		}
		export.ConsoleGPU(stdout, st)
	}
	// A server that echoes the key it refused must not put it in the files.
	redact := scenarios.Redactor(f.secrets())
	result.ConsoleText, result.Log = []byte(redact.Replace(console.String())), []byte(redact.Replace(runLog.String()))
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
