package main

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

// sweepFlags are AIPerf's "magic lists": --concurrency 1,4,16,64 and
// --request-rate 1,5,10 run one point per value (per combination, when both
// are lists), one after another, and --failed-request-threshold, which ends
// a run early.
type sweepFlags struct {
	concurrencies   []int
	rates           []float64
	failedThreshold float64
	sameSeed        bool // every point draws from the one seed
	sweepTable      bool // print the sweep's table at its end
}

// addSweepFlags registers --concurrency and --request-rate, whose first
// value also fills f.concurrency and f.requestRate, and
// --failed-request-threshold, and adds the exit statuses to cmd's help.
func (f *benchFlags) addSweepFlags(cmd *kingpin.CmdClause, flag func(name, help string) *kingpin.FlagClause) {
	cmd.Help(cmd.Model().Help + "\n\n" + exitCodesHelp)
	flag("concurrency", "Closed loop: requests kept in flight, "+scenarios.ConcurrencyBound.Range()+" (default 1 when no --request-rate is given). A comma-separated list (1,4,16,64) sweeps: one run per value, one after another, each in its own concurrency_N directory, with a summary in sweep_aggregate/.").
		SetValue(&intList{flag: "--concurrency", first: &f.concurrency, all: &f.concurrencies})
	flag("request-rate", "Open loop: requests per second, up to "+scenarios.RateBound.Format(scenarios.RateBound.Max)+", sent at --arrival-pattern times. With --concurrency too, concurrency caps the requests in flight. A comma-separated list (1,5,10) sweeps, as --concurrency does (rate_R directories).").
		SetValue(&floatList{flag: "--request-rate", first: &f.requestRate, all: &f.rates})
	flag("parameter-sweep-same-seed", "Every point of a sweep draws from --random-seed, which it then needs, so that the points send the same prompts (correlated comparisons); by default point i draws from the seed + i, as AIPerf.").BoolVar(&f.sameSeed)
	flag("sweep-table", "Print the sweep's table when its last point ends; --no-sweep-table prints none (sweep_aggregate/ is written all the same).").Default("true").BoolVar(&f.sweepTable)
	flag("failed-request-threshold", "End the run early (the requests in flight cancelled, the report kept) and exit 5 once more than this fraction (0 to 1) of the finished requests failed; armed from max(concurrency, 10) finished requests on, as AIPerf. Unset: never.").
		Float64Var(&f.failedThreshold)
}

// intList is a flag holding one integer or a comma-separated list of them;
// a list is a sweep, so each of its values must be a distinct run.
type intList struct {
	flag  string
	first *int
	all   *[]int
}

func (l *intList) Set(s string) error {
	vs, err := parseList(l.flag, s, "whole number", func(p string) (int, error) { return strconv.Atoi(p) })
	if err != nil {
		return err
	}
	*l.first, *l.all = vs[0], vs
	return nil
}

func (l *intList) String() string { return joinValues(*l.all, strconv.Itoa) }

// floatList is a flag holding one number or a comma-separated list of them,
// as intList.
type floatList struct {
	flag  string
	first *float64
	all   *[]float64
}

func (l *floatList) Set(s string) error {
	vs, err := parseList(l.flag, s, "number", func(p string) (float64, error) { return strconv.ParseFloat(p, 64) })
	if err != nil {
		return err
	}
	*l.first, *l.all = vs[0], vs
	return nil
}

func (l *floatList) String() string {
	return joinValues(*l.all, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) })
}

// parseList reads "v" or "v1,v2,…". A single value is checked where the
// flag's run is (scenarios.Check); a sweep's values are checked here, as
// each must be a run of its own: above zero, and no two alike.
func parseList[T int | float64](flag, s, what string, parse func(string) (T, error)) ([]T, error) {
	var vs []T
	for _, part := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("%s %q: not a %s or a comma-separated list of them (a sweep, e.g. 1,4,16)", flag, s, what)
		}
		if len(strings.Split(s, ",")) > 1 && !(v > 0) {
			return nil, fmt.Errorf("%s %q: every value of a sweep must be above 0", flag, s)
		}
		if slices.Contains(vs, v) {
			return nil, fmt.Errorf("%s %q: %v comes twice; a sweep runs each value once", flag, s, v)
		}
		vs = append(vs, v)
	}
	return vs, nil
}

func joinValues[T any](vs []T, format func(T) string) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = format(v)
	}
	return strings.Join(s, ",")
}

// sweepPoint is one run of a sweep: the values it sets and its directory.
type sweepPoint struct {
	concurrency int     // 0: --concurrency as given
	rate        float64 // 0: --request-rate as given
	params      []export.SweepParam
	dir         string // AIPerf's variation directory name; "" when not a sweep
}

// sweepPoints are the runs the flags ask for: one, or AIPerf's grid of the
// lists, concurrency outermost.
func (f *benchFlags) sweepPoints() []sweepPoint {
	concs := []int{0}
	if len(f.concurrencies) > 1 {
		concs = f.concurrencies
	}
	rates := []float64{0}
	if len(f.rates) > 1 {
		rates = f.rates
	}
	var points []sweepPoint
	for _, c := range concs {
		for _, r := range rates {
			p := sweepPoint{concurrency: c, rate: r}
			var dirs []string
			if c > 0 {
				p.params = append(p.params, export.SweepParam{Name: "concurrency", Value: float64(c)})
				dirs = append(dirs, "concurrency_"+strconv.Itoa(c))
			}
			if r > 0 {
				p.params = append(p.params, export.SweepParam{Name: "rate", Value: r})
				dirs = append(dirs, "rate_"+export.PythonFloat(r))
			}
			p.dir = strings.Join(dirs, "__")
			points = append(points, p)
		}
	}
	return points
}

// label is the point as "concurrency=4".
func (p sweepPoint) label() string { return export.SweepPoint{Params: p.params}.Label() }

// variation is AIPerf's label of the point (phases.profiling.concurrency=4;
// "base" outside a sweep), which a multi-run's seeds derive from.
func (p sweepPoint) variation() string {
	return export.SweepPoint{Params: p.params}.VariationLabel()
}

// apply makes the flags describe point i of the sweep run by args. Each
// point after the first draws from seed + i, as AIPerf's sweeps do by
// default, so that the points do not send the same prompts, unless
// --parameter-sweep-same-seed; the command that repeats a point
// (command.txt, cli_command) names its values and seed.
func (f *benchFlags) apply(p sweepPoint, i int, seed uint64, args []string) {
	if p.dir == "" {
		return // not a sweep: the flags are the run
	}
	if p.concurrency > 0 {
		f.concurrency = p.concurrency
	}
	if p.rate > 0 {
		f.requestRate = p.rate
	}
	f.seed = seed
	if !f.sameSeed {
		f.seed += uint64(i)
	}
	f.args = pointArgs(args, map[string]string{
		"--concurrency":  strconv.Itoa(p.concurrency),
		"--request-rate": strconv.FormatFloat(p.rate, 'f', -1, 64),
		"--random-seed":  strconv.FormatUint(f.seed, 10),
	}, p)
}

// pointArgs is args with the swept flags' values replaced by the point's,
// and the point's seed.
func pointArgs(args []string, values map[string]string, p sweepPoint) []string {
	keep := func(flag string) bool {
		return flag == "--concurrency" && p.concurrency == 0 || flag == "--request-rate" && p.rate == 0
	}
	out := make([]string, 0, len(args)+2)
	for i := 0; i < len(args); i++ {
		name, _, inline := strings.Cut(args[i], "=")
		v, swept := values[name]
		switch {
		case !swept || keep(name):
			out = append(out, args[i])
		case inline:
			out = append(out, name+"="+v)
		default:
			out = append(out, name, v)
			i++ // the value replaced
		}
	}
	// A value the point sets that the command line did not give (a
	// search's concurrency, the seed) is added.
	for _, flag := range []string{"--concurrency", "--request-rate", "--random-seed"} {
		given := slices.ContainsFunc(args, func(a string) bool { return a == flag || strings.HasPrefix(a, flag+"=") })
		if !given && !keep(flag) {
			out = append(out, flag, values[flag])
		}
	}
	return out
}

// planPoints plans the points of a sweep (or the one run) and returns them
// with the sweep's directory: --artifact-dir, or AIPerf's name of the first
// point's run. Its errors have been printed.
func (f *benchFlags) planPoints(stderr io.Writer, points []sweepPoint) ([]benchRun, string, error) {
	seed, args, base := f.seed, f.args, f.artifactDir
	runs := make([]benchRun, len(points))
	for i, pt := range points {
		f.apply(pt, i, seed, args)
		r, err := f.planRun(stderr, i == 0)
		if err != nil {
			return nil, "", err
		}
		if base == "" {
			base = defaultArtifactDir(f) // a sweep's is named after its first point, as AIPerf's
		}
		r.point, r.dir = pt, pointDir(base, pt)
		runs[i] = r
	}
	return runs, base, nil
}

// pointDir is where point p's artifacts go under the sweep's directory.
func pointDir(base string, p sweepPoint) string {
	if p.dir == "" {
		return base
	}
	return filepath.Join(base, p.dir)
}

// sweep runs the points one after another and writes the sweep's summary
// of those that finished. It exits with the first point's non-zero status;
// interrupted, it stops after the point running and exits 130.
func (b *bencher) sweep(runs []benchRun, base string) int {
	var done []export.SweepPoint
	code := exitOK
	for i, r := range runs {
		select {
		case <-b.sigs: // pressed between points
			b.interrupted = true
		default:
		}
		if b.interrupted {
			break
		}
		fmt.Fprintf(b.stderr, "inferprobe bench: sweep point %d of %d: %s (%s)\n", i+1, len(runs), r.point.label(), r.dir)
		c, pt := b.run(r)
		if pt != nil {
			done = append(done, *pt)
		}
		if c != exitInterrupted {
			code = cmp.Or(code, c)
		}
	}
	if len(done) > 0 {
		if b.f.sweepTable {
			export.ConsoleSweep(b.stdout, done)
		}
		if err := export.WriteSweep(base, done); err != nil {
			fmt.Fprintf(b.stderr, "inferprobe bench: writing the sweep summary: %v; choose a writable --artifact-dir\n", err)
			return exitCannotRun
		}
		fmt.Fprintf(b.stdout, "\nSweep summary: %s\n", filepath.Join(base, export.SweepDir))
		code = cmp.Or(code, b.plots(base, func() ([]string, error) { return export.WriteSweepPlots(base, done) }))
	}
	if b.interrupted {
		fmt.Fprintf(b.stderr, "inferprobe bench: sweep interrupted; %d of %d points finished\n", len(done), len(runs))
		return exitInterrupted
	}
	return code
}
