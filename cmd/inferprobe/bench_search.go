package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/capacity"
	"github.com/inferprobe/inferprobe/report/export"
)

// searchFlags are AIPerf's search-recipe options: a capacity search
// (package capacity) instead of one run.
type searchFlags struct {
	searchRecipe, searchStyle string
	searchSLA                 []string
	search                    capacity.Settings
	searchTimeLimit           float64
	slaWarmup                 float64
	// stepWarmup is the warm-up of the search step about to run
	// (capacity.Step.Warmup): it replaces the flags' warmup.
	stepWarmup time.Duration
}

// searchFlagNames are the flags that describe the search, not its steps:
// a step's command line (command.txt) leaves them out.
var searchFlagNames = []string{"search-recipe", "search-style", "search-sla", "ttft-sla-ms", "itl-sla-ms", "tpot-sla-ms", "e2e-sla-ms",
	"error-rate-sla", "slo-attainment-fraction", "concurrency-min", "concurrency-max", "concurrency-steps", "search-max-iterations",
	"degradation-threshold", "degradation-metric-tag", "degradation-stat", "search-time-limit", "search-random-seed", "search-initial-points",
	"sla-replicates", "sla-warmup-seconds"}

// warmupFlagNames are the flags of the warmup, which smooth_isotonic's
// per-step warm-up replaces, as AIPerf's replaces the warmup phase.
var warmupFlagNames = append([]string{"warmup-request-count", "num-warmup-requests", "warmup-duration", "num-warmup-sessions", "warmup-grace-period"}, warmupLoadFlags...)

func (f *benchFlags) addSearchFlags(flag func(name, help string) *kingpin.FlagClause) {
	s := &f.search
	flag("search-recipe", "Run a capacity search instead of one run, AIPerf's recipe: max-concurrency-under-sla (the highest concurrency where every SLA holds), max-goodput-under-slo (the highest where --slo-attainment-fraction of the requests meet the TTFT, TPOT and end-to-end SLOs), concurrency-ramp (a log-spaced grid and the latency knee). Each step is a run of these flags at one concurrency, in its own directory; see docs/bench.md, Capacity searches.").
		StringVar(&f.searchRecipe)
	flag("search-style", "How a search chooses its steps: smooth_isotonic (the default: double until the SLA breaks, then fit the SLA margin and measure where it crosses), monotonic (double, then bisect; each concurrency measured until two steps agree) or grid (8 log-spaced concurrencies). AIPerf's bo and optuna are refused: they do not repeat.").
		StringVar(&f.searchStyle)
	flag("search-sla", "An SLA filter metric_tag:stat:op:threshold (op lt, le, gt or ge; the metric's unit, request_error_rate in percent), judged after the recipe's own; repeatable. E.g. time_to_first_token:p95:lt:200.").
		StringsVar(&f.searchSLA)
	flag("ttft-sla-ms", "SLA on time to first token p95, in milliseconds.").Float64Var(&s.TTFT)
	flag("itl-sla-ms", "SLA on inter-token latency p95, in milliseconds; the same SLA as --tpot-sla-ms.").Float64Var(&s.ITL)
	flag("tpot-sla-ms", "SLA on time per output token (inter-token latency) p95, in milliseconds.").Float64Var(&s.TPOT)
	flag("e2e-sla-ms", "SLA on request latency p99, in milliseconds.").Float64Var(&s.E2E)
	flag("error-rate-sla", "SLA on the share of requests that fail, a fraction (0.05 is 5%).").Float64Var(&s.ErrorRate)
	flag("slo-attainment-fraction", "max-goodput-under-slo: the share of requests that must meet every SLO (default 0.95).").Float64Var(&s.Attainment)
	flag("concurrency-min", "Lowest concurrency a search measures (default 1).").IntVar(&s.Min)
	flag("concurrency-max", "Highest concurrency a search measures (default 1000); it never goes past it.").IntVar(&s.Max)
	flag("concurrency-steps", "concurrency-ramp: how many log-spaced concurrencies (default 8).").IntVar(&s.Steps)
	flag("search-max-iterations", "Most steps an adaptive search takes (default 30 for smooth_isotonic, 20 for monotonic).").IntVar(&s.MaxIterations)
	flag("degradation-threshold", "concurrency-ramp: the knee is the first concurrency whose latency exceeds the lowest's by more than this share (default 0.20).").Float64Var(&s.DegradationThreshold)
	flag("degradation-metric-tag", "concurrency-ramp: the metric of the knee (default request_latency).").StringVar(&s.DegradationMetric)
	flag("degradation-stat", "concurrency-ramp: the statistic of the knee: avg, p50, p90, p95 or p99 (default p99).").StringVar(&s.DegradationStat)
	flag("sla-replicates", "smooth_isotonic: measure the fit's boundary this many times (at most 20) and stop when the bootstrap 95% interval of the binding SLA's margin there leaves out zero, else fit again; AIPerf's sla_replicates. Default 0: only when the highest concurrency was measured twice.").IntVar(&s.Replicates)
	flag("sla-warmup-seconds", "smooth_isotonic: the warm-up at each step's concurrency before it is measured, in seconds, at least 60 the first time at a concurrency and 15 after; it replaces the --warmup-* options. AIPerf's sla_warmup_seconds: default 30 (so 60, then 30); 0 turns it off.").Float64Var(&f.slaWarmup)
	flag("search-time-limit", "Seconds the whole search may take: no step starts after it, and the step running is cut and not judged; the answer is then from the steps before. Default: none.").Float64Var(&f.searchTimeLimit)
}

// searchPlan plans the search the flags ask for; nil when they ask for none.
// A search that judges TTFT or ITL streams unless --no-streaming was given,
// which it refuses, as AIPerf does.
func (f *benchFlags) searchPlan(stderr io.Writer) (*capacity.Plan, error) {
	if f.searchRecipe == "" {
		for _, name := range searchFlagNames {
			if set := f.set[name]; set != nil && *set {
				return nil, fmt.Errorf("--%s is an option of a capacity search: add --search-recipe (max-concurrency-under-sla, max-goodput-under-slo or concurrency-ramp)", name)
			}
		}
		return nil, nil
	}
	for _, c := range []struct{ flag, why string }{
		{"concurrency", "the search sets the concurrency of each step; bound it with --concurrency-min and --concurrency-max"},
		{"request-rate", "a search steps the concurrency of a closed loop; drop --request-rate"},
		{"shard", "a search's steps depend on each other's results; run it from one machine"},
		{"save-scenario", "a search is several runs, not one burst"},
		{"compare", "compare a step's directory with --compare on its own"},
	} {
		if *f.set[c.flag] {
			return nil, fmt.Errorf("--%s with --search-recipe: %s", c.flag, c.why)
		}
	}
	if f.multi.runs > 1 {
		return nil, errors.New("--num-profile-runs with --search-recipe: a search measures each step once (monotonic until two steps agree); drop --num-profile-runs")
	}
	if f.replays() {
		return nil, errors.New("--search-recipe with a replayed trace: a search needs a closed loop; add --no-fixed-schedule")
	}
	if f.searchTimeLimit < 0 {
		return nil, fmt.Errorf("--search-time-limit %g: must be a number of seconds > 0", f.searchTimeLimit)
	}
	s := f.search
	// A given value of 0 would read as not given: AIPerf refuses it.
	for name, zero := range map[string]bool{"ttft-sla-ms": s.TTFT == 0, "itl-sla-ms": s.ITL == 0, "tpot-sla-ms": s.TPOT == 0, "e2e-sla-ms": s.E2E == 0,
		"error-rate-sla": s.ErrorRate == 0, "slo-attainment-fraction": s.Attainment == 0, "degradation-threshold": s.DegradationThreshold == 0,
		"concurrency-min": s.Min == 0, "concurrency-max": s.Max == 0, "concurrency-steps": s.Steps == 0, "search-max-iterations": s.MaxIterations == 0} {
		if zero && *f.set[name] {
			return nil, fmt.Errorf("--%s 0: must be above 0", name)
		}
	}
	s.Recipe, s.Style, s.Streaming = f.searchRecipe, f.searchStyle, f.streaming || !*f.set["streaming"]
	if *f.set["sla-warmup-seconds"] {
		s.Warmup = &f.slaWarmup
	}
	for _, v := range f.searchSLA {
		filter, err := capacity.ParseFilter(v)
		if err != nil {
			return nil, fmt.Errorf("--search-sla %w", err)
		}
		s.Filters = append(s.Filters, filter)
	}
	p, err := capacity.NewPlan(s)
	if err != nil {
		return nil, err
	}
	if p.NeedsStreaming() && !f.streaming {
		f.streaming = true
		f.args = append(f.args, "--streaming")
		fmt.Fprintf(stderr, "inferprobe bench: note: --search-recipe %s judges time to first token or inter-token latency, which need streaming: streaming is on\n", p.Recipe)
	}
	if p.SLOs != nil {
		if *f.set["goodput"] {
			return nil, fmt.Errorf("--goodput with --search-recipe %s: the recipe's --ttft-sla-ms, --tpot-sla-ms and --e2e-sla-ms are its goodput SLOs", p.Recipe)
		}
		var slos []string
		for _, tag := range []string{"time_to_first_token", "inter_token_latency", "request_latency"} {
			slos = append(slos, tag+":"+strconv.FormatFloat(p.SLOs[tag], 'f', -1, 64))
		}
		f.goodput = strings.Join(slos, " ")
	}
	// AIPerf's smooth_isotonic measures 1000 requests a step unless told.
	if p.Style == "smooth_isotonic" && !*f.set["request-count"] && !*f.set["benchmark-duration"] {
		f.requestCount, *f.set["request-count"] = 1000, true
		f.args = append(f.args, "--request-count", "1000") // so that a step's command line repeats it
	}
	return p, nil
}

// stepArgs are args without the search's own flags: a step's command line.
func stepArgs(args []string) []string { return dropFlags(args, searchFlagNames) }

// dropFlags is args without the flags named (and their values).
func dropFlags(args, names []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		name, _, inline := strings.Cut(args[i], "=")
		if slices.Contains(names, strings.TrimPrefix(name, "--")) {
			if !inline {
				i++ // its value
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// searchDir is where step s's run goes, as AIPerf lays a search out:
// search_iter_NNNN/profile_runs/run_0001 for an adaptive style,
// concurrency_N for a grid.
func searchDir(p *capacity.Plan, s capacity.Step) string {
	if p.Adaptive() {
		return filepath.Join(p.Label(s), "profile_runs", "run_0001")
	}
	return p.Label(s)
}

// applyStep sets the flags to search step s: its point and, when it has
// one, its warm-up, which replaces the --warmup-* options (and says so on
// the step's command line).
func (f *benchFlags) applyStep(pt sweepPoint, s capacity.Step, seed uint64, args []string) {
	f.apply(pt, s.Index, seed, args)
	if f.stepWarmup = s.Warmup; s.Warmup > 0 {
		f.args = append(dropFlags(f.args, warmupFlagNames), "--warmup-duration", strconv.FormatFloat(s.Warmup.Seconds(), 'f', -1, 64))
	}
}

// errInterrupted ends a search that a signal stopped.
var errInterrupted = errors.New("interrupted")

// search runs the capacity search p, each step a run of the flags at its
// concurrency in its directory under base, then prints and writes the
// search's summary. It exits with the first step's non-zero status, 130
// when interrupted.
func (b *bencher) search(p *capacity.Plan, base string) int {
	f := b.f
	seed, args := f.seed, stepArgs(f.args)
	if f.searchTimeLimit > 0 {
		b.deadline = time.Now().Add(time.Duration(f.searchTimeLimit * float64(time.Second)))
	}
	var points []export.SweepPoint
	code := exitOK
	measure := func(_ context.Context, s capacity.Step) (capacity.Metrics, error) {
		select {
		case <-b.sigs: // pressed between steps
			b.interrupted = true
		default:
		}
		if b.interrupted {
			return nil, errInterrupted
		}
		pt := sweepPoint{concurrency: s.Concurrency, dir: searchDir(p, s),
			params: []export.SweepParam{{Name: "concurrency", Value: float64(s.Concurrency)}}}
		f.applyStep(pt, s, seed, args)
		r, err := f.planRun(b.stderr, s.Index == 0)
		if err != nil {
			return nil, err // planRun said why
		}
		r.point, r.dir = pt, filepath.Join(base, pt.dir)
		warm := ""
		if s.Warmup > 0 {
			warm = fmt.Sprintf(", after a %s warm-up (--sla-warmup-seconds)", s.Warmup)
		}
		fmt.Fprintf(b.stderr, "inferprobe bench: search step %d: concurrency %d%s (%s)\n", s.Index, s.Concurrency, warm, r.dir)
		c, point := b.run(r)
		switch {
		case b.cut:
			return nil, capacity.ErrTimeLimit
		case point == nil || c == exitInterrupted:
			return nil, errInterrupted
		case c != exitOK && c != exitAllFailed && c != exitThreshold:
			return nil, fmt.Errorf("step %d: exit status %d", s.Index, c)
		}
		// A step whose requests all failed is an infeasible step, not the
		// end of the search: its metrics say so.
		points = append(points, *point)
		return point.Run.Metrics(), nil
	}
	r, err := p.Run(context.Background(), b.deadline, measure)
	switch {
	case errors.Is(err, errInterrupted):
		code = exitInterrupted
	case err != nil:
		fmt.Fprintf(b.stderr, "inferprobe bench: search: %v\n", err)
		code = exitCannotRun
	}
	if len(r.Steps) == 0 {
		fmt.Fprintf(b.stderr, "inferprobe bench: the search ended before a step finished (%s)\n", cmp.Or(r.Reason, "stopped"))
	} else {
		export.ConsoleSearch(b.stdout, r, points)
		if err := export.WriteSearch(base, r, points[:len(r.Steps)]); err != nil {
			fmt.Fprintf(b.stderr, "inferprobe bench: writing the search summary: %v; choose a writable --artifact-dir\n", err)
			return exitCannotRun
		}
		fmt.Fprintf(b.stdout, "\nSearch summary: %s\n", filepath.Join(base, "report.html"))
	}
	return code
}
