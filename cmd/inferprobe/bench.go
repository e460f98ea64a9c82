package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/collector/gpu"
	"github.com/inferprobe/inferprobe/prober"
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
	set                      map[string]*bool // which flags the user gave
}

func addBenchFlags(cmd *kingpin.CmdClause) *benchFlags {
	f := &benchFlags{set: map[string]*bool{}}
	flag := func(name, help string) *kingpin.FlagClause {
		f.set[name] = new(bool)
		return cmd.Flag(name, help).IsSetByUser(f.set[name])
	}
	flag("url", "Server base URL; /v1 is added when it has no path (AIPerf's convention).").Short('u').Default("http://localhost:8000").StringVar(&f.url)
	flag("model", "Model name sent in every request.").Short('m').Required().StringVar(&f.model)
	flag("endpoint-type", "API to call: chat (/chat/completions) or completions (/completions).").Default("chat").EnumVar(&f.endpointType, "chat", "completions")
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
	return f
}

// apiKeyEnv carries --api-key to the scenario loader, which takes keys only
// from files or the environment, so the key never lands in a generated file.
const apiKeyEnv = "INFERPROBE_BENCH_API_KEY"

// scenario turns the flags into a scenario file, so that the bench run is
// validated exactly as a probe would be.
func (f *benchFlags) scenario() ([]byte, error) {
	// Two flags fill each mean, so neither can carry a kingpin default.
	if !*f.set["synthetic-input-tokens-mean"] && !*f.set["isl"] {
		f.islMean = 550
	}
	if !*f.set["output-tokens-mean"] && !*f.set["osl"] {
		f.oslMean = 256
	}
	u, err := url.Parse(f.url)
	if err != nil {
		return nil, fmt.Errorf("--url %q: %w", f.url, err)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1"
	}
	target := map[string]any{
		"url": u.String(), "model": f.model, "endpoint": f.endpointType, "stream": f.streaming,
		"timeout": (time.Duration(f.timeout * float64(time.Second))).String(),
	}
	if f.apiKey != "" {
		if err := os.Setenv(apiKeyEnv, f.apiKey); err != nil {
			return nil, err
		}
		target["api_key_env"] = apiKeyEnv
	}
	if len(f.headers) > 0 {
		h := map[string]string{}
		for _, kv := range f.headers {
			k, v, ok := strings.Cut(kv, ":")
			if !ok {
				return nil, fmt.Errorf("-H %q: want 'Name: value'", kv)
			}
			h[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		target["headers"] = h
	}

	arrival := map[string]any{}
	switch {
	case *f.set["request-rate"]:
		arrival["pattern"], arrival["rate"] = f.arrivalPattern, f.requestRate
		if f.arrivalPattern == "gamma" {
			arrival["smoothness"] = f.smoothness
		}
		if *f.set["concurrency"] {
			arrival["max_concurrency"] = f.concurrency
		}
	default:
		arrival["pattern"], arrival["concurrency"] = "concurrency", max(f.concurrency, 1)
		if *f.set["concurrency"] {
			arrival["concurrency"] = f.concurrency
		}
	}
	params := map[string]any{}
	for _, kv := range f.extraInputs {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || k == "" {
			return nil, fmt.Errorf("--extra-inputs %q: want key:value, e.g. ignore_eos:true", kv)
		}
		var parsed any
		if json.Unmarshal([]byte(v), &parsed) != nil {
			parsed = v
		}
		params[k] = parsed
	}
	probe := map[string]any{
		"target":  "bench",
		"arrival": arrival,
		"dataset": map[string]any{"synthetic": map[string]any{
			"input_tokens":  map[string]any{"mean": f.islMean, "stddev": f.islStddev},
			"output_tokens": map[string]any{"mean": f.oslMean, "stddev": f.oslStddev},
		}},
	}
	if len(params) > 0 {
		probe["params"] = params
	}
	return yaml.Marshal(map[string]any{
		"global":  map[string]any{"seed": f.seed},
		"targets": map[string]any{"bench": target},
		"probes":  map[string]any{"bench": probe},
	})
}

// flagFor names the flag behind a scenario field, so a validation error
// speaks of what the user typed.
func flagFor(field string) string {
	for _, m := range []struct{ prefix, flag string }{
		{"targets.bench.url", "--url"}, {"targets.bench.model", "--model"}, {"targets.bench.endpoint", "--endpoint-type"},
		{"targets.bench.timeout", "--request-timeout-seconds"}, {"targets.bench.headers", "-H"},
		{"targets.bench.api_key_env", "--api-key"},
		{"probes.bench.arrival.rate", "--request-rate"}, {"probes.bench.arrival.smoothness", "--arrival-smoothness"},
		{"probes.bench.arrival.max_concurrency", "--concurrency"}, {"probes.bench.arrival.concurrency", "--concurrency"},
		{"probes.bench.arrival", "--arrival-pattern"},
		{"probes.bench.dataset.synthetic.input_tokens.mean", "--synthetic-input-tokens-mean"},
		{"probes.bench.dataset.synthetic.input_tokens.stddev", "--synthetic-input-tokens-stddev"},
		{"probes.bench.dataset.synthetic.output_tokens.mean", "--output-tokens-mean"},
		{"probes.bench.dataset.synthetic.output_tokens.stddev", "--output-tokens-stddev"},
		{"probes.bench.params", "--extra-inputs"}, {"global.seed", "--random-seed"},
	} {
		if strings.HasPrefix(field, m.prefix) {
			return m.flag + strings.TrimPrefix(field, m.prefix)
		}
	}
	return field
}

// runBench runs one finite benchmark and prints its report.
func runBench(logger *slog.Logger, stdout, stderr io.Writer, f *benchFlags, workers *workerFlags, gpus *gpuFlags) int {
	if *f.set["request-count"] && *f.set["benchmark-duration"] {
		fmt.Fprintln(stderr, "inferprobe bench: give --request-count or --benchmark-duration, not both")
		return 2
	}
	yml, err := f.scenario()
	if err == nil {
		var cfg *scenarios.Config
		cfg, err = scenarios.Parse(yml, "bench")
		if err == nil {
			return benchRun(logger, stdout, stderr, f, workers, gpus, cfg)
		}
	}
	var errs scenarios.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			fmt.Fprintf(stderr, "inferprobe bench: %s: %s\n", flagFor(e.Field), e.Msg)
		}
	} else {
		fmt.Fprintf(stderr, "inferprobe bench: %v\n", err)
	}
	return 2
}

func benchRun(logger *slog.Logger, stdout, stderr io.Writer, f *benchFlags, workers *workerFlags, gpus *gpuFlags, cfg *scenarios.Config) int {
	spec := cfg.Probes["bench"]
	target, err := prober.NewTarget("bench", cfg.Targets["bench"])
	if err == nil {
		var probe *prober.Probe
		probe, err = prober.NewProbe("bench", spec, target, cfg.Global.Seed, prober.Shard{Count: 1})
		if err == nil {
			return benchProbe(logger, stdout, stderr, f, workers, gpus, probe)
		}
	}
	fmt.Fprintf(stderr, "inferprobe bench: %v\n", err)
	return 2
}

func benchProbe(logger *slog.Logger, stdout, stderr io.Writer, f *benchFlags, workers *workerFlags, gpus *gpuFlags, probe *prober.Probe) int {
	limit := prober.Limit{Requests: 10}
	switch {
	case *f.set["benchmark-duration"]:
		limit = prober.Limit{Duration: time.Duration(f.duration * float64(time.Second))}
	case *f.set["request-count"]:
		limit = prober.Limit{Requests: uint64(max(f.requestCount, 0))}
	}
	probe.SetLimit(limit)

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
	if telemetry != nil {
		defer telemetry.Close()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	report := collector.NewReport()
	var peakCPU float64
	var peakSched time.Duration
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		probe.Run(ctx, context.Background(), p, report)
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastProgress := start
	for running := true; running; {
		select {
		case <-done:
			running = false
		case now := <-tick.C:
			cpu, sched := p.Utilisation()
			peakCPU, peakSched = max(peakCPU, cpu), max(peakSched, sched)
			if now.Sub(lastProgress) >= 5*time.Second {
				lastProgress = now
				progress(stderr, report, limit, now.Sub(start))
			}
		}
	}
	interrupted := ctx.Err() != nil
	summary := report.Summary()
	printReport(stdout, summary, probe, f, peakCPU, peakSched, interrupted)
	if telemetry != nil {
		printGPU(stdout, telemetry.Window().Stats(summary.Start, summary.End, int64(summary.OutputTokensTotal)))
	}
	if interrupted {
		return 130
	}
	return 0
}

// progress prints one plain line of how far the run is.
func progress(w io.Writer, r *collector.Report, l prober.Limit, elapsed time.Duration) {
	ok, failed, cancelled := r.Counts()
	done := ok + failed + cancelled
	rate := float64(done) / elapsed.Seconds()
	line := fmt.Sprintf("progress: %d requests done", done)
	switch {
	case l.Requests > 0:
		line = fmt.Sprintf("progress: %d/%d requests", done, l.Requests)
		if rate > 0 {
			line += fmt.Sprintf(", ETA %v", time.Duration(float64(l.Requests-uint64(done))/rate*float64(time.Second)).Round(time.Second))
		}
	case l.Duration > 0:
		line += fmt.Sprintf(", %v of %v", elapsed.Round(time.Second), l.Duration)
	}
	fmt.Fprintf(w, "%s, %.1f req/s, %d errors, elapsed %v\n", line, rate, failed, elapsed.Round(time.Second))
}

func printReport(w io.Writer, s collector.Summary, probe *prober.Probe, f *benchFlags, workerCPU float64, sched time.Duration, interrupted bool) {
	if why := collector.SaturationReason(time.Duration(s.ScheduleLag.P99*float64(time.Second)), s.ScheduleLag.Count, workerCPU, sched); why != "" {
		fmt.Fprintf(w, "\n!!! CLIENT-BOUND RUN: %s.\n!!! These figures may describe inferprobe, not the server: add --workers, lower the rate, or give inferprobe more CPU.\n", why)
	}
	if interrupted {
		fmt.Fprintln(w, "\n(interrupted: the report covers the requests that finished)")
	}
	fmt.Fprintf(w, "\n%-34s %10s %10s %10s %10s %10s %10s %10s\n", "Metric", "avg", "min", "max", "p50", "p90", "p99", "std")
	row := func(name string, st collector.Stats, scale float64) {
		if st.Count == 0 {
			return
		}
		fmt.Fprintf(w, "%-34s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", name,
			st.Avg*scale, st.Min*scale, st.Max*scale, st.P50*scale, st.P90*scale, st.P99*scale, st.Std*scale)
	}
	row("Time to first token (ms)", s.TTFT, 1e3)
	row("Time to second token (ms)", s.TTST, 1e3)
	row("Inter-token latency (ms)", s.ITL, 1e3)
	row("Inter-chunk latency (ms)", s.InterChunk, 1e3)
	row("Request latency (ms)", s.Latency, 1e3)
	row("Input sequence length (tokens)", s.InputTokens, 1)
	row("Output sequence length (tokens)", s.OutputTokens, 1)
	row("Schedule lag (ms)", s.ScheduleLag, 1e3)
	fmt.Fprintf(w, "\n%-34s %10.2f\n", "Request throughput (req/s)", s.RequestThroughput)
	fmt.Fprintf(w, "%-34s %10.2f\n", "Output token throughput (tok/s)", s.OutputTokenThroughput)
	fmt.Fprintf(w, "%-34s %10.2f\n", "Benchmark duration (s)", s.Duration.Seconds())
	fmt.Fprintf(w, "%-34s %10d ok, %d errors, %d cancelled\n", "Requests", s.OK, s.Failed, s.Cancelled)
	if len(s.Errors) > 0 {
		reasons := make([]string, 0, len(s.Errors))
		for r, n := range s.Errors {
			reasons = append(reasons, fmt.Sprintf("%s=%d", r, n))
		}
		sort.Strings(reasons)
		fmt.Fprintf(w, "%-34s %s\n", "Errors by reason", strings.Join(reasons, " "))
	}
	if s.TokensFromChunks {
		fmt.Fprintln(w, "Note: the server sent no usage; output lengths count one token per content chunk.")
	}
	d := probe.Digest()
	fmt.Fprintf(w, "\nSequence digest: %s (%d requests, seed %d)\n", d, d.Requests, f.seed)
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
