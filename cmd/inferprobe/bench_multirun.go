package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/report/export"
)

// multiRunFlags are AIPerf's multi-run options: --num-profile-runs runs the
// benchmark several times and aggregates the runs, optionally stopping
// early once a statistic has settled (--convergence-*).
type multiRunFlags struct {
	runs                 int
	cooldown             float64
	warmupFirstOnly      bool
	consistentSeed       bool
	varySeed             bool
	convergenceMetric    string
	convergenceStat      string
	convergenceThreshold float64
	convergenceMode      string
	sweepMode            string // export.SweepRepeated or SweepIndependent
	// skipWarmup says the run being planned sends no warmup: a run after
	// the first, with --profile-run-disable-warmup-after-first.
	skipWarmup bool
}

// maxProfileRuns and maxCooldown are AIPerf's bounds.
const (
	maxProfileRuns = 10
	maxCooldown    = 86400
)

func (f *benchFlags) addMultiRunFlags(flag func(name, help string) *kingpin.FlagClause) {
	m := &f.multi
	flag("num-profile-runs", "Run the benchmark this many times (1 to "+strconv.Itoa(maxProfileRuns)+"), one after another, each in ARTIFACT_DIR/profile_runs/run_NNNN/, and write the statistics across the runs in ARTIFACT_DIR/aggregate/ (AIPerf's layout): each statistic's mean over the runs, its spread and its t interval at --confidence-level, and whether the runs agree (docs/metrics.md). With a --concurrency or --request-rate list, the runs of every point, in --parameter-sweep-mode's order and layout.").
		Default("1").IntVar(&m.runs)
	flag("parameter-sweep-mode", "The order of a sweep's runs with --num-profile-runs, and their layout, as AIPerf's: repeated (default) runs a trial of every point, then the next trial, in profile_runs/trial_NNNN/POINT/, each point's statistics across its runs in aggregate/POINT/ and the sweep's summary in aggregate/sweep_aggregate/; independent runs every trial of a point, then the next point, in POINT/profile_runs/trial_NNNN/, POINT/aggregate/ and sweep_aggregate/.").
		Default(export.SweepRepeated).SetValue(&aiperfChoice{what: "sweep mode", flag: "--parameter-sweep-mode", choices: choicesOf([]string{export.SweepRepeated, export.SweepIndependent}), target: &m.sweepMode})
	flag("profile-run-cooldown-seconds", "Seconds to wait between runs, 0 to "+strconv.Itoa(maxCooldown)+".").Default("0").Float64Var(&m.cooldown)
	flag("profile-run-disable-warmup-after-first", "Send the warmup before the first run only (default); --no-profile-run-disable-warmup-after-first sends it before every run.").
		Default("true").BoolVar(&m.warmupFirstOnly)
	flag("set-consistent-seed", "Every run sends the same workload (default): --random-seed's, 1 unless given. --no-set-consistent-seed without --random-seed draws a new seed per run; a given --random-seed always wins.").
		Default("true").BoolVar(&m.consistentSeed)
	flag("vary-seed-per-trial", "Derive a different seed for each run from --random-seed, as AIPerf does (SHA-256 of seed, variation and run), so that the runs sample different prompts; the spread then includes the workload's.").
		BoolVar(&m.varySeed)
	flag("convergence-metric", "Stop before --num-profile-runs once this metric (a tag of profile_export_aiperf.json: time_to_first_token, request_throughput, …) has settled by --convergence-mode, checked after each run from the second.").
		StringVar(&m.convergenceMetric)
	flag("convergence-stat", "Statistic of --convergence-metric that ci-width and cv watch: "+strings.Join(export.ConvergenceStats, ", ")+".").
		Default("avg").SetValue(&aiperfChoice{what: "convergence statistic", flag: "--convergence-stat", choices: choicesOf(export.ConvergenceStats), target: &m.convergenceStat})
	flag("convergence-threshold", fmt.Sprintf("Between 0 and 1: ci-width stops when the t interval of the runs' values is narrower than this fraction of their mean (default %g), cv when their coefficient of variation is under it (%g), distribution when the last run's values against the runs before it have a Kolmogorov–Smirnov p-value over it (%g).",
		export.ConvergenceModes[export.ModeCIWidth], export.ConvergenceModes[export.ModeCV], export.ConvergenceModes[export.ModeDistribution])).
		Float64Var(&m.convergenceThreshold)
	flag("convergence-mode", "How --convergence-metric is judged settled: ci-width (default), cv or distribution (per-request values).").
		Default(export.ModeCIWidth).SetValue(&aiperfChoice{what: "convergence mode", flag: "--convergence-mode", choices: choicesOf(slices.Sorted(maps.Keys(export.ConvergenceModes))), target: &m.convergenceMode})
}

// choicesOf are names as aiperfChoice's choices, each meaning itself.
func choicesOf(names []string) map[string]choice {
	m := map[string]choice{}
	for _, n := range names {
		m[n] = choice{value: n}
	}
	return m
}

// check says what is wrong with the multi-run flags, naming the flag.
func (m *multiRunFlags) check(f *benchFlags) error {
	switch {
	case m.runs < 1 || m.runs > maxProfileRuns:
		return fmt.Errorf("--num-profile-runs %d: must be from 1 to %d, as AIPerf's", m.runs, maxProfileRuns)
	case !(m.cooldown >= 0 && m.cooldown <= maxCooldown):
		return fmt.Errorf("--profile-run-cooldown-seconds %g: must be from 0 to %d seconds", m.cooldown, maxCooldown)
	case *f.set["convergence-threshold"] && !(m.convergenceThreshold > 0 && m.convergenceThreshold < 1):
		return fmt.Errorf("--convergence-threshold %g: must be between 0 and 1, such as 0.1", m.convergenceThreshold)
	case m.convergenceMetric != "" && m.runs < 2:
		return errors.New("--convergence-metric needs --num-profile-runs of at least 2: it stops the runs early, and --num-profile-runs is their most")
	case m.runs == 1:
		return nil
	}
	if m.convergenceMetric != "" {
		if err := export.CheckConvergence(m.convergenceMetric, m.convergenceStat, m.convergenceMode); err != nil {
			return err
		}
	}
	for _, other := range []struct {
		given bool
		why   string
	}{
		{len(f.sweepPoints()) > 1 && m.convergenceMetric != "", "--convergence-metric stops one configuration's runs early, not a sweep's: give one --concurrency or --request-rate, or drop --convergence-metric"},
		{f.shard != "", "--num-profile-runs repeats a run on one machine; --shard splits one run across machines: give one of them"},
		{f.compare != "", "--compare compares one run with a baseline: compare a run of the multi-run (ARTIFACT_DIR/profile_runs/run_0001) in a later bench run"},
	} {
		if other.given {
			return errors.New(other.why)
		}
	}
	return nil
}

// notes say which multi-run flags given change nothing, as AIPerf ignores
// them: the multi-run ones of a single run, and the convergence rule's
// settings without a --convergence-metric.
func (m *multiRunFlags) notes(f *benchFlags) []string {
	var out []string
	given := func(names ...string) []string {
		var g []string
		for _, n := range names {
			if *f.set[n] {
				g = append(g, "--"+n)
			}
		}
		return g
	}
	if m.runs == 1 {
		for _, n := range given("profile-run-cooldown-seconds", "profile-run-disable-warmup-after-first", "set-consistent-seed", "vary-seed-per-trial") {
			out = append(out, n+" applies only with --num-profile-runs above 1; it changes nothing here")
		}
	}
	if m.runs == 1 || len(f.sweepPoints()) == 1 {
		for _, n := range given("parameter-sweep-mode") {
			out = append(out, n+" applies only to a sweep (a --concurrency or --request-rate list) with --num-profile-runs above 1; it changes nothing here")
		}
	}
	if m.convergenceMetric == "" {
		for _, n := range given("convergence-stat", "convergence-threshold", "convergence-mode") {
			out = append(out, n+" applies only with --convergence-metric; it changes nothing here")
		}
	}
	return out
}

// convergence is the rule --convergence-* ask for; nil without one.
func (m *multiRunFlags) convergence() *export.Convergence {
	if m.convergenceMetric == "" {
		return nil
	}
	return &export.Convergence{Metric: m.convergenceMetric, Stat: m.convergenceStat, Mode: m.convergenceMode, Threshold: m.convergenceThreshold}
}

// seed is run i's (from 0) seed at the point variation (AIPerf's label of
// a sweep's point, "base" outside a sweep) whose own seed is point: that
// seed (--random-seed's, given or bench's default, or the point's share
// of it in a sweep) with --set-consistent-seed; with
// --vary-seed-per-trial, one derived from --random-seed per point and run
// as AIPerf derives them; a fresh one per run with
// --no-set-consistent-seed and no --random-seed.
func (m *multiRunFlags) seed(root uint64, given bool, variation string, point uint64, i int) uint64 {
	switch {
	case !given && !m.consistentSeed:
		return rand.Uint64() & math.MaxInt64
	case m.varySeed:
		return trialSeed(root, variation, i)
	}
	return point
}

// trialSeed is AIPerf 0.13's seed for trial i (from 0) of a variation
// under --vary-seed-per-trial: the first 8 bytes, big-endian, of SHA-256
// over "SEED:variation:LABEL:trial:i", kept to 63 bits.
func trialSeed(seed uint64, variation string, i int) uint64 {
	sum := sha256.Sum256([]byte(strconv.FormatUint(seed, 10) + ":variation:" + variation + ":trial:" + strconv.Itoa(i)))
	return binary.BigEndian.Uint64(sum[:8]) & math.MaxInt64
}

// multiRunFlagArity are the multi-run flags, the seed and the warmup flags
// as trialArgs drops them: whether each takes a value.
var multiRunFlagArity = map[string]bool{
	"--num-profile-runs": true, "--profile-run-cooldown-seconds": true, "--parameter-sweep-mode": true,
	"--profile-run-disable-warmup-after-first": false, "--no-profile-run-disable-warmup-after-first": false,
	"--set-consistent-seed": false, "--no-set-consistent-seed": false,
	"--vary-seed-per-trial": false, "--no-vary-seed-per-trial": false,
	"--convergence-metric": true, "--convergence-stat": true, "--convergence-threshold": true, "--convergence-mode": true,
	"--random-seed": true,
}

var warmupFlagArity = map[string]bool{"--warmup-request-count": true, "--num-warmup-requests": true, "--warmup-duration": true,
	"--num-warmup-sessions": true, "--warmup-request-rate": true, "--warmup-concurrency": true, "--warmup-arrival-pattern": true,
	"--warmup-grace-period": true, "--warmup-request-rate-ramp-duration": true, "--warmup-concurrency-ramp-duration": true,
	"--warmup-prefill-concurrency": true, "--warmup-prefill-concurrency-ramp-duration": true}

// trialArgs is args as the command that repeats one run of a multi-run
// alone: without the multi-run flags, with the run's seed, and without
// the warmup when the run sent none.
func trialArgs(args []string, seed uint64, warmup bool) []string {
	out := make([]string, 0, len(args)+2)
	for i := 0; i < len(args); i++ {
		name, _, inline := strings.Cut(args[i], "=")
		takes, drop := multiRunFlagArity[name]
		if !drop && !warmup {
			takes, drop = warmupFlagArity[name]
		}
		switch {
		case !drop:
			out = append(out, args[i])
		case takes && !inline:
			i++ // its value
		}
	}
	return append(out, "--random-seed", strconv.FormatUint(seed, 10))
}

// planTrials plans the runs of a multi-run, each with its seed and
// command, in base/profile_runs/run_NNNN; in a sweep of points, in
// --parameter-sweep-mode's order, each in its export.TrialDir. The warmup
// goes before each point's first run only, unless
// --no-profile-run-disable-warmup-after-first. Their errors have been
// printed.
func (f *benchFlags) planTrials(stderr io.Writer, base string, points []sweepPoint) ([]benchRun, error) {
	m := &f.multi
	// The flags describe the whole multi-run again once its runs are
	// planned (--save-scenario's header repeats them).
	defer func(seed uint64, args []string, c int, r float64) {
		f.seed, f.args, f.concurrency, f.requestRate, m.skipWarmup = seed, args, c, r, false
	}(f.seed, f.args, f.concurrency, f.requestRate)
	root, args := f.seed, f.args
	runs := make([]benchRun, 0, m.runs*len(points))
	plan := func(i, j int) error {
		pt := points[j]
		m.skipWarmup = i > 0 && m.warmupFirstOnly
		f.seed, f.args = root, args
		f.apply(pt, j, root, args)
		f.seed = m.seed(root, *f.set["random-seed"], pt.variation(), f.seed, i)
		f.args = trialArgs(f.args, f.seed, !m.skipWarmup)
		r, err := f.planRun(stderr, len(runs) == 0)
		if err != nil {
			return err
		}
		r.point, r.index, r.trial = pt, j, i
		r.dir = filepath.Join(base, export.TrialDir(i, pt.dir, m.sweepMode))
		r.config.Trial, r.config.RunLabel = i, export.TrialLabel(i)
		runs = append(runs, r)
		return nil
	}
	outer, inner := m.runs, len(points) // trials outermost, as repeated
	if m.sweepMode == export.SweepIndependent {
		outer, inner = inner, outer
	}
	for x := range outer {
		for y := range inner {
			i, j := x, y
			if m.sweepMode == export.SweepIndependent {
				i, j = y, x
			}
			if err := plan(i, j); err != nil {
				return nil, err
			}
		}
	}
	return runs, nil
}

// multiRun runs the planned runs of points one after another, with the
// cooldown between a point's trials, until they are done or the convergence rule stops them,
// and writes the aggregate of those that finished: per point of a sweep,
// and the sweep's summary of the points' aggregates. It exits with the
// first run's non-zero status; interrupted, it stops after the run in
// progress and exits 130.
func (b *bencher) multiRun(runs []benchRun, points []sweepPoint, base string) int {
	m := &b.f.multi
	aggs := make([]export.MultiRun, len(points))
	for j, p := range points {
		aggs[j] = export.MultiRun{Level: b.f.confidenceLevel, Cooldown: m.cooldown, Convergence: m.convergence()}
		if p.dir != "" {
			aggs[j].Point, aggs[j].Mode = &export.SweepPoint{Params: p.params, Dir: p.dir}, m.sweepMode
		}
	}
	code, done := exitOK, 0
	for k, r := range runs {
		// The cooldown goes between the trials of a point; a sweep's
		// points follow one another without one (AIPerf's
		// --parameter-sweep-cooldown-seconds, 0).
		between := r.trial > 0 && (r.index == 0 || runs[k-1].index == r.index)
		if between && m.cooldown > 0 && !b.interrupted {
			fmt.Fprintf(b.stderr, "inferprobe bench: cooldown of %gs before the next run\n", m.cooldown)
			select {
			case <-b.sigs:
				b.interrupted = true
			case <-time.After(time.Duration(m.cooldown * float64(time.Second))):
			}
		}
		select {
		case <-b.sigs: // pressed between runs
			b.interrupted = true
		default:
		}
		if b.interrupted {
			break
		}
		fmt.Fprintf(b.stderr, "inferprobe bench: run %d of %d (%s, seed %d)\n", k+1, len(runs), r.dir, r.seed)
		c, pt := b.run(r)
		if c != exitInterrupted {
			code = cmp.Or(code, c)
		}
		if pt == nil {
			continue // interrupted in its warmup: nothing measured
		}
		t, err := export.NewTrial(r.trial, export.TrialDir(r.trial, r.point.dir, m.sweepMode), pt.Run, pt.Failed)
		if err != nil {
			fmt.Fprintf(b.stderr, "inferprobe bench: reading run %d's records: %v\n", k+1, err)
			return exitCannotRun
		}
		agg := &aggs[r.index]
		agg.Trials = append(agg.Trials, t)
		done++
		if conv := agg.Convergence; conv != nil && k+1 < len(runs) && conv.Check(agg.Trials, agg.Level) {
			fmt.Fprintf(b.stderr, "inferprobe bench: %s converged after %d runs; not running the other %d\n", conv.Metric, k+1, len(runs)-k-1)
			break
		}
	}
	var summary []export.SweepPoint
	for j := range aggs {
		agg := &aggs[j]
		if conv := agg.Convergence; conv != nil && !conv.Converged {
			conv.Check(agg.Trials, agg.Level) // the figure after the last run, for the report
		}
		if agg.Point != nil {
			if len(agg.Trials) == 0 {
				continue // not reached
			}
			fmt.Fprintf(b.stdout, "\nAt %s:", agg.Point.Label())
		}
		export.ConsoleMultiRun(b.stdout, *agg)
		switch {
		case len(agg.Trials) == 0:
		case slices.IndexFunc(agg.Trials, func(t export.Trial) bool { return t.Failed == "" }) < 0:
			fmt.Fprintln(b.stderr, "inferprobe bench: every run failed; no aggregate written")
		default:
			if err := export.WriteAggregate(base, *agg); err != nil {
				fmt.Fprintf(b.stderr, "inferprobe bench: writing the aggregate: %v; choose a writable --artifact-dir\n", err)
				return exitCannotRun
			}
			fmt.Fprintf(b.stdout, "\nAggregate: %s\n", filepath.Join(base, agg.Dir()))
		}
		if agg.Point != nil {
			p := *agg.Point
			p.Runs = agg
			if slices.IndexFunc(agg.Trials, func(t export.Trial) bool { return t.Failed == "" }) < 0 {
				p.Failed = "every run failed"
			}
			summary = append(summary, p)
		}
	}
	if len(summary) > 0 {
		if b.f.sweepTable {
			export.ConsoleSweep(b.stdout, summary)
		}
		if err := export.WriteSweep(base, summary); err != nil {
			fmt.Fprintf(b.stderr, "inferprobe bench: writing the sweep summary: %v; choose a writable --artifact-dir\n", err)
			return exitCannotRun
		}
		fmt.Fprintf(b.stdout, "\nSweep summary: %s\n", filepath.Join(base, export.SweepSummaryDir(summary)))
	}
	if b.interrupted {
		fmt.Fprintf(b.stderr, "inferprobe bench: interrupted; %d of %d runs finished\n", done, len(runs))
		return exitInterrupted
	}
	return code
}
