package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"

	"github.com/inferprobe/inferprobe/scenarios"
)

// benchFlags are the one-shot run's settings, named as NVIDIA AIPerf names
// them so that `aiperf profile …` becomes `inferprobe bench …`.
type benchFlags struct {
	// urls are --url's values: several are AIPerf's load balancing.
	urls                     urlList
	model, endpointType      string
	streaming                bool
	requestRate              float64
	arrivalPattern           string
	smoothness               float64
	concurrency              int
	requestCount             int
	duration                 float64
	islMean, islStddev       float64
	oslMean, oslStddev       float64
	seqDist, rangeRatio      string
	extraInputs              []string
	seed                     uint64
	apiKey                   string
	headers                  []string
	timeout, stallTimeout    float64
	keepAlive                bool
	requestIDs               bool
	sessionHeader            string
	goodput                  string
	warmupRequests           int
	inputFile, datasetFormat string
	fixedSchedule            bool
	tokenizer                string
	tokenizerRevision        string
	tokenizerFound           *benchTokenizer // tokenizerFile's answer, once found
	artifactDir              string
	saveScenario             string
	compare                  string
	compareFail              []string
	confidenceLevel          float64
	progress                 string
	autoPlot, plotRequired   bool // --auto-plot's PNGs, and whether failing to draw them fails the run
	sliceDuration            float64
	workload                 *workloadFlags
	media                    *mediaFlags         // AIPerf's image and audio inputs (bench_flags_media.go)
	rankings                 *rankingFlags       // AIPerf's rankings options (bench_flags_rankings.go)
	set                      map[string]*bool    // which flags the user gave
	aiperf                                       // AIPerf's options beyond these (bench_flags_aiperf.go)
	sweepFlags                                   // --concurrency and --request-rate lists (bench_sweep.go)
	shardFlags                                   // --shard and --start-at (bench_shard.go)
	searchFlags                                  // --search-recipe and its options (bench_search.go)
	multi                    multiRunFlags       // --num-profile-runs and its companions (bench_multirun.go)
	load                     *loadFlags          // AIPerf's load, warmup, cancellation and trace options (bench_flags_load.go)
	users                    *userFlags          // AIPerf's user-centric rate (bench_flags_users.go)
	prefill                  *prefillFlags       // AIPerf's prefill concurrency (bench_flags_prefill.go)
	server                   *serverMetricsFlags // the server's own metrics (bench_flags_servermetrics.go)
	// args are the command-line arguments, for the command that repeats the
	// run; runBench fills them from os.Args.
	args []string
}

func addBenchFlags(cmd *kingpin.CmdClause, logConfig *promslog.Config) *benchFlags {
	f := &benchFlags{set: map[string]*bool{}}
	f.logLevel = logConfig.Level
	flag := func(name, help string) *kingpin.FlagClause {
		f.set[name] = new(bool)
		return cmd.Flag(name, help).IsSetByUser(f.set[name])
	}
	// The order is --help's: what to call, the load, the prompts, then the rest.
	flag("model", "Model name sent in every request (AIPerf's --model-names). Required.").Short('m').SetValue(&oneValue{target: &f.model, several: severalModels})
	flag("url", "Server base URL; http:// is assumed without a scheme and /v1 is added when it has no path (AIPerf's conventions), so localhost:8000 is http://localhost:8000/v1; a full endpoint URL (http://localhost:8000/v1/chat/completions) is called as written. Several (--url A B, or --url A --url B) share the load as AIPerf's do: each new session goes to the next in turn, from the first, and keeps it.").Short('u').Default("http://localhost:8000").SetValue(&f.urls)
	flag("endpoint-type", "API to call: "+scenarios.EndpointHelp()+". AIPerf's names work too: "+aiperfEndpointHelp()+". Embeddings and rankings do not stream.").Default("chat").SetValue(&aiperfChoice{what: "endpoint type", flag: "--endpoint-type", choices: aiperfEndpoints, target: &f.endpointType})
	flag("streaming", "Stream responses (SSE). Needed for time to first token and inter-token latency; turned off, with a note, for an endpoint type that does not stream.").BoolVar(&f.streaming)
	f.addSweepFlags(cmd, flag) // --concurrency, --request-rate, --failed-request-threshold
	flag("request-count", "Requests to send (default 10, unless --benchmark-duration is given, cycling an --input-file's entries; a replayed trace: its entries, once); also --num-requests. `+scenarios.RequestBound.Range()+`.").SetValue(whole("request-count", &f.requestCount, &scenarios.RequestBound))
	flag("benchmark-duration", "Seconds to send for, instead of a request count; requests in flight at the end finish.").Float64Var(&f.duration)
	flag("synthetic-input-tokens-mean", "Mean prompt length in tokens (default 550), "+scenarios.TokenBound.Range()+"; also --isl, --prompt-input-tokens-mean.").Float64Var(&f.islMean)
	flag("isl", "Alias of --synthetic-input-tokens-mean.").Hidden().Float64Var(&f.islMean)
	flag("synthetic-input-tokens-stddev", "Standard deviation of the prompt length; also --isl-stddev, --prompt-input-tokens-stddev.").Default("0").Float64Var(&f.islStddev)
	flag("output-tokens-mean", "Mean output length in tokens, sent as max_completion_tokens (max_tokens, or the endpoint's field); without it no limit is sent, as AIPerf; "+scenarios.TokenBound.Range()+"; also --osl, --prompt-output-tokens-mean.").Float64Var(&f.oslMean)
	flag("osl", "Alias of --output-tokens-mean.").Hidden().Float64Var(&f.oslMean)
	flag("output-tokens-stddev", "Standard deviation of the output length; also --osl-stddev, --prompt-output-tokens-stddev.").Default("0").Float64Var(&f.oslStddev)
	flag("sequence-distribution", "A mix of (input, output) lengths, each a percent of the requests, in place of the means: ISL[|STDDEV],OSL[|STDDEV]:PERCENT;… (or AIPerf's bracket and JSON forms), as AIPerf's; also --seq-dist.").StringVar(&f.seqDist)
	flag("seq-dist", "Alias of --sequence-distribution.").Hidden().StringVar(&f.seqDist)
	flag("random-range-ratio", `Draw the input and output lengths uniformly from [mean × (1 − R), mean × (1 + R)], as AIPerf (vLLM's style): R from 0 to below 1, or {"input": R, "output": R}; needs --isl and --osl, and no stddev.`).StringVar(&f.rangeRatio)
	flag("extra-inputs", `Merged into every request body: key:value (values are JSON when they parse as JSON: true, 128, 0.7; else strings) or a JSON object, several after one flag or the flag repeated. E.g. --extra-inputs min_tokens:128 ignore_eos:true, or '{"temperature": 0.7}'`).StringsVar(&f.extraInputs)
	flag("random-seed", "Seed for every random choice; the same seed sends the same sequence (see the digest printed at the end).").Default("1").Uint64Var(&f.seed)
	flag("arrival-pattern", "Gaps between requests at --request-rate: poisson, constant or gamma (also --request-rate-mode).").Default("poisson").SetValue(&aiperfChoice{what: "arrival pattern", flag: "--arrival-pattern", choices: aiperfArrivals, target: &f.arrivalPattern})
	flag("arrival-smoothness", "Gamma shape k for --arrival-pattern=gamma: gaps vary by 1/sqrt(k) of their mean (k=1 is Poisson); also --vllm-burstiness.").Float64Var(&f.smoothness)
	flag("warmup-request-count", "Requests sent first, at the same arrival pattern, and left out of the report and the artifacts; also --num-warmup-requests. Up to `+scenarios.RequestBound.Format(scenarios.RequestBound.Max)+`.").SetValue(whole("warmup-request-count", &f.warmupRequests, &scenarios.RequestBound))
	flag("goodput", `SLOs for goodput, AIPerf's syntax: "time_to_first_token:500 inter_token_latency:50 request_latency:2000" (milliseconds; also time_to_first_output_token), or "output_token_throughput_per_user:20" (tokens per second, a minimum). A successful request that meets every one is good; goodput is good requests per second.`).StringVar(&f.goodput)
	flag("input-file", "Dataset or trace file to send instead of synthetic prompts; see --custom-dataset-type.").StringVar(&f.inputFile)
	flag("custom-dataset-type", "Format of --input-file: "+aiperfDatasetHelp()+"; without it, as AIPerf, the file's first line says: multi-turn (turns), mooncake-trace (input_length, hash_ids or text_input), else single-turn. random-pool draws single-turn entries at random, with replacement, by --random-seed; a trace whose type this flag names is replayed at its timestamps unless --no-fixed-schedule, --request-rate or --concurrency is given; one detected from the file is sent at the load, as AIPerf does.").Default("single-turn").SetValue(&aiperfChoice{what: "dataset type", flag: "--custom-dataset-type", choices: aiperfDatasets, target: &f.datasetFormat})
	flag("fixed-schedule", "Send each request of --input-file at its timestamp (trace replay) instead of at --request-rate or --concurrency; --no-fixed-schedule keeps a trace from being replayed so.").BoolVar(&f.fixedSchedule)
	flag("artifact-dir", "Where to write the artifacts (AIPerf 0.13's profile_export_aiperf.json and .csv, profile_export.jsonl, inputs.json, profile_export_console.txt, logs/; and report.html, command.txt); also --output-artifact-dir. Default artifacts/MODEL-ENDPOINT-LOAD, like AIPerf.").StringVar(&f.artifactDir)
	flag("auto-plot", "After the run, draw PNG plots into the artifact directory's plots/ under the names of AIPerf 0.13's default set, as AIPerf's --auto-plot runs aiperf plot there: ttft_over_time.png, ttft_timeline.png and, with --gpu-telemetry URLs, gpu_utilization_and_throughput_over_time.png; for a sweep, ttft_vs_throughput.png beside sweep_aggregate/. A plot that cannot be drawn is a warning.").BoolVar(&f.autoPlot)
	flag("slice-duration", "Also write the run's metrics per window of this many seconds, as AIPerf's --slice-duration: profile_export_aiperf_timeslices.json and .csv (the tidy form aiperf plot reads), each request in the window its send falls in, the last window cut at the run's end.").Float64Var(&f.sliceDuration)
	flag("plot-required", "With --auto-plot, a plot that cannot be drawn fails the run (exit 1), as AIPerf's --plot-required.").BoolVar(&f.plotRequired)
	flag("tokenizer", "A Hugging Face tokenizer.json, a directory holding one, or a model name (Qwen/Qwen3-0.6B) whose tokenizer.json is taken from the Hugging Face cache or downloaded into it (HF_HUB_CACHE, HF_HOME, HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE), to count tokens with when the server sends no usage. A path that holds no tokenizer.json is an error.").StringVar(&f.tokenizer)
	flag("tokenizer-revision", "The branch, tag or commit of --tokenizer's model to take its tokenizer.json from.").Default("main").StringVar(&f.tokenizerRevision)
	flag("api-key", "API key sent as a bearer token. Prefer the INFERPROBE_API_KEY environment variable: flags show up in ps.").Envar("INFERPROBE_API_KEY").StringVar(&f.apiKey)
	flag("header", "Extra HTTP header 'Name: value' (or a JSON object of them), repeatable.").Short('H').StringsVar(&f.headers)
	flag("request-timeout-seconds", "Longest a request may take.").Default("600").Float64Var(&f.timeout)
	flag("stall-timeout-seconds", "Longest silence (no bytes at all) a stream may have before it counts as stalled; default --request-timeout-seconds, so that a long prefill gets through.").Float64Var(&f.stallTimeout)
	flag("keep-alive", "Reuse connections between requests; --no-keep-alive opens one per request (the scenario's keep_alive; AIPerf's --connection-reuse-strategy pooled or never).").Default("true").BoolVar(&f.keepAlive)
	flag("session-header", "The header that carries a multi-turn session's id (default "+scenarios.DefaultSessionHeader+"; the scenario's session_header).").StringVar(&f.sessionHeader)
	flag("request-ids", "Send each request's ID (in the per-request export) in X-Request-ID and W3C traceparent headers; --no-request-ids sends neither (the scenario's request_ids).").Default("true").BoolVar(&f.requestIDs)
	flag("progress", "Progress display: auto (a live line on a terminal, else a plain line every 5s), tty, plain or off; AIPerf's --ui-type dashboard, simple and none are auto, plain and off.").Default("auto").EnumVar(&f.progress, "auto", "tty", "plain", "off")
	flag("save-scenario", "Also write the run as on-demand burst bench in a scenario file for inferprobe serve.").StringVar(&f.saveScenario)
	flag("compare", "Baseline to print changes against: an earlier run's profile_export_aiperf.json (inferprobe's or AIPerf's), an older inferprobe's profile_export_inferprobe.json, or the run directory holding one. With its profile_export.jsonl beside it, each change is tested on both runs' requests and marked ~ when not significant at --confidence-level (Holm-corrected; docs/metrics.md).").StringVar(&f.compare)
	flag("compare-fail", `Regression rule for --compare, repeatable: METRIC[.STAT]>N% fails when the value rose by more than N% over the baseline, METRIC[.STAT]<-N% when it fell by more than N%, METRIC[.STAT]>V (no %) when it is above V. STAT is avg (default), min, max, std or p1…p99; units are the JSON's (ms, tokens/sec). E.g. "time_to_first_token.p99>10%" "output_token_throughput<-5%". A failed rule exits 3; a tested change must also be significant to fail it.`).StringsVar(&f.compareFail)
	flag("confidence-level", "Confidence level of the report's intervals (every mean, percentile and throughput has one) and of --compare's tests, from 0 to 1: 0.95 means a 95% interval and a 5% significance level; see docs/metrics.md. With --num-profile-runs, also the level of the t intervals across the runs.").Default("0.95").Float64Var(&f.confidenceLevel)
	f.addMultiRunFlags(flag)
	f.addShardFlags(flag)
	f.addSearchFlags(flag)
	f.load = addLoadFlags(f, flag)
	f.users = addUserFlags(f, flag)
	f.prefill = addPrefillFlags(f, flag)
	f.workload = addWorkloadFlags(flag, f.set)
	f.media = addMediaFlags(flag, f.set)
	f.rankings = addRankingFlags(flag, f.set)
	f.server = addServerMetricsFlags(flag)
	f.addAIPerfFlags(cmd, flag) // last: it registers the aliases the others have not
	f.server.values(f.more)
	return f
}

// baseURL applies AIPerf's conventions to --url: http:// when no scheme is
// given, /v1 (Cohere's rerank: /v2) when there is no path — except for the
// APIs served at the server root (TGI, TEI).
func baseURL(raw, endpoint string) (string, error) {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Only the parser's reason: the URL itself may hold a password.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("--url is not a valid URL (%v); write host:port or http(s)://host:port/v1", err)
	}
	e, _ := scenarios.LookupEndpoint(endpoint)
	// A full endpoint URL, as AIPerf takes one: the base is what comes
	// before the endpoint type's path, so the URL is called as written.
	for _, p := range []string{e.PathFor(true), e.PathFor(false)} {
		if base, ok := strings.CutSuffix(strings.TrimSuffix(u.Path, "/"), p); ok && p != "" {
			u.Path = base
			return u.String(), nil
		}
	}
	if (u.Path == "" || u.Path == "/") && !e.AtRoot {
		u.Path = cmp.Or(e.Version, "/v1")
	}
	return u.String(), nil
}

// goodputTags are AIPerf's --goodput tags, which are also the scenario's SLO
// fields, with the unit AIPerf reads each in and where it goes.
var goodputTags = map[string]struct {
	unit string
	set  func(*scenarios.SLO, float64)
}{
	"time_to_first_token":        {"milliseconds", func(s *scenarios.SLO, v float64) { s.TimeToFirstToken = millis(v) }},
	"time_to_first_output_token": {"milliseconds", func(s *scenarios.SLO, v float64) { s.TimeToFirstOutputToken = millis(v) }},
	"inter_token_latency":        {"milliseconds", func(s *scenarios.SLO, v float64) { s.InterTokenLatency = millis(v) }},
	"request_latency":            {"milliseconds", func(s *scenarios.SLO, v float64) { s.RequestLatency = millis(v) }},
	"output_token_throughput_per_user": {"tokens per second", func(s *scenarios.SLO, v float64) {
		s.OutputTokenThroughputPerUser = v
	}},
}

func millis(v float64) scenarios.Duration { return scenarios.Duration(v * float64(time.Millisecond)) }

// parseGoodput reads AIPerf's --goodput "tag:value tag:value" into slo.
func parseGoodput(s string, b *benchScenario, slo *scenarios.SLO) error {
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		tag, v, ok := strings.Cut(item, ":")
		g, known := goodputTags[tag]
		if !ok || !known {
			return fmt.Errorf("--goodput %q: want tag:value with tag one of %s (milliseconds; output_token_throughput_per_user in tokens per second, a minimum), e.g. \"time_to_first_token:500 inter_token_latency:50\"", item, strings.Join(slices.Sorted(maps.Keys(goodputTags)), ", "))
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x > 0) || math.IsInf(x, 1) {
			return fmt.Errorf("--goodput %q: %q is not a number of %s > 0", item, v, g.unit)
		}
		g.set(slo, x)
		b.set(benchProbe+".slo."+tag, "--goodput")
	}
	return nil
}
