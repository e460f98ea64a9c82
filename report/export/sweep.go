package export

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A sweep's summary goes where AIPerf 0.13 writes it: in sweep_aggregate/
// beside the points' directories, or in a multi-run sweep of the repeated
// mode beside the points' aggregates, in aggregate/sweep_aggregate/.
const (
	SweepDir      = "sweep_aggregate"
	sweepJSONFile = "profile_export_aiperf_sweep.json"
	sweepCSVFile  = "profile_export_aiperf_sweep.csv"
	sweepHTMLFile = "sweep_report.html"
	sweptPrefix   = "phases.profiling." // AIPerf's path of a swept profiling option
)

// SweepParam is one swept parameter's value at a point, under AIPerf's
// short name (concurrency, rate).
type SweepParam struct {
	Name  string
	Value float64
}

// SweepPoint is one finished point of a sweep.
type SweepPoint struct {
	Params []SweepParam
	Dir    string // its directory name (concurrency_4)
	Run    Run
	// Runs are the point's runs in a multi-run sweep, whose aggregate
	// stands for the point; nil when Run does.
	Runs *MultiRun
	// Failed says why the point does not count as a successful run (every
	// request failed, the failure threshold passed, it was interrupted;
	// every run failed); empty when it succeeded. Failed points are
	// listed, not ranked.
	Failed string
}

// artifacts is the point's directory relative to the sweep's: its run's,
// or in a multi-run sweep its aggregate's.
func (p SweepPoint) artifacts() string {
	if p.Runs != nil {
		return p.Runs.Dir()
	}
	return p.Dir
}

// VariationLabel is AIPerf's label of the point's variation
// (phases.profiling.concurrency=4, "base" outside a sweep), which its
// seeds derive from and aiperf plot labels it by.
func (p SweepPoint) VariationLabel() string {
	if len(p.Params) == 0 {
		return "base"
	}
	parts := make([]string, len(p.Params))
	for i, q := range p.Params {
		parts[i] = sweptPrefix + q.Name + "=" + pythonValue(q)
	}
	return strings.Join(parts, ", ")
}

// variationValues are AIPerf's variation_values: each parameter under its
// path.
func (p SweepPoint) variationValues() obj {
	o := make(obj, len(p.Params))
	for i, q := range p.Params {
		o[i] = kv{sweptPrefix + q.Name, paramValue(q)}
	}
	return o
}

// figures are the point's statistics flattened as tag_stat, each with its
// "mean" first (the console's and the page's figures): its run's, or in a
// multi-run sweep each statistic across its runs as AIPerf's confidence
// stats of a sweep cell (mean, std, min, max, cv, ci_low, ci_high).
func (p SweepPoint) figures() obj {
	if p.Runs == nil {
		return sweepMetrics(p.Run)
	}
	var o obj
	for _, a := range p.Runs.aggregate() {
		s := a.spread
		o = append(o, kv{a.key, obj{{"mean", s.Mean}, {"std", jsonNumber(s.Std)}, {"min", s.Min}, {"max", s.Max},
			{"cv", jsonNumber(s.CV)}, {"ci_low", jsonNumber(s.Interval.Low)}, {"ci_high", jsonNumber(s.Interval.High)}, {"unit", a.unit}}})
	}
	return o
}

// combination is the point's per_combination_metrics entry, as AIPerf
// keys a sweep cell: by tag for one trial (combinationMetrics), by tag_stat
// with the statistics across the runs for several (figures).
func (p SweepPoint) combination() obj {
	if p.Runs == nil {
		return combinationMetrics(p.Run)
	}
	return p.figures()
}

// value is statistic st (avg, p99) of metric tag in m, the point's
// combination.
func (p SweepPoint) value(m obj, tag, st string) (float64, bool) {
	if p.Runs != nil {
		return stat(m, tag+"_"+st, "mean")
	}
	if st == "avg" {
		st = "mean"
	}
	return stat(m, tag, st)
}

// errors are the requests that failed at the point, over its runs.
func (p SweepPoint) errors() int {
	if p.Runs == nil {
		return p.Run.Summary.Failed
	}
	n := 0
	for _, t := range p.Runs.Trials {
		n += t.errors
	}
	return n
}

// Label is the point's parameters as "concurrency=4 rate=5".
func (p SweepPoint) Label() string {
	parts := make([]string, len(p.Params))
	for i, q := range p.Params {
		parts[i] = q.Name + "=" + strconv.FormatFloat(q.Value, 'f', -1, 64)
	}
	return strings.Join(parts, " ")
}

// values is the point's parameter values as "4/5", names their names as
// "concurrency/rate": a chart's labels.
func (p SweepPoint) values() string {
	parts := make([]string, len(p.Params))
	for i, q := range p.Params {
		parts[i] = strconv.FormatFloat(q.Value, 'f', -1, 64)
	}
	return strings.Join(parts, "/")
}

func (p SweepPoint) names() string {
	parts := make([]string, len(p.Params))
	for i, q := range p.Params {
		parts[i] = q.Name
	}
	return strings.Join(parts, "/")
}

func (p SweepPoint) params() obj {
	o := make(obj, len(p.Params))
	for i, q := range p.Params {
		o[i] = kv{q.Name, paramValue(q)}
	}
	return o
}

// paramValue keeps whole numbers integers, as AIPerf's concurrency is.
func paramValue(q SweepParam) any {
	if q.Name == "concurrency" {
		return int(q.Value)
	}
	return q.Value
}

// sweepMetrics flattens a point's metrics as AIPerf's summary_metrics are
// keyed: tag_stat, each {"mean", "unit"} (one trial: the mean is the value).
func sweepMetrics(r Run) obj {
	var o obj
	for _, m := range distributions(r.Summary) {
		for _, st := range statistics(m.Stats) {
			o = append(o, kv{m.Tag + "_" + st.k, obj{{"mean", st.v}, {"unit", m.Unit}}})
		}
	}
	for _, m := range singles(r) {
		o = append(o, kv{m.Tag + "_avg", obj{{"mean", m.Value}, {"unit", m.Unit}}})
	}
	return o
}

func metricMean(o obj, key string) (float64, bool) {
	for _, e := range o {
		if e.k == key {
			return e.v.(obj)[0].v.(float64), true
		}
	}
	return 0, false
}

// combinationMetrics are a point's metrics as AIPerf 0.13 keys a one-trial
// sweep cell (cli_runner._json_metric_to_stats): every metric of its
// profile_export_aiperf.json by tag, with mean (its avg), avg, std and cv
// 0, min and max (the avg when the metric has none), ci_low and ci_high at
// the mean, unit, and the percentiles, count and sum it has.
func combinationMetrics(r Run) obj {
	var o obj
	for _, m := range ordered(r, append(slices.Clone(declaredOrder), extraOrder...)) {
		avg, lo, hi := m.Value, m.Value, m.Value
		if m.Stats != nil {
			avg, lo, hi = m.Stats.Avg, m.Stats.Min, m.Stats.Max
		}
		st := obj{{"mean", avg}, {"avg", avg}, {"std", 0.0}, {"min", lo}, {"max", hi}, {"cv", 0.0},
			{"ci_low", avg}, {"ci_high", avg}, {"unit", m.Unit}}
		if s := m.Stats; s != nil {
			st = append(st, kv{"p1", s.P1}, kv{"p5", s.P5}, kv{"p10", s.P10}, kv{"p25", s.P25}, kv{"p50", s.P50},
				kv{"p75", s.P75}, kv{"p90", s.P90}, kv{"p95", s.P95}, kv{"p99", s.P99}, kv{"count", s.Count}, kv{"sum", s.Sum})
		}
		o = append(o, kv{m.Tag, st})
	}
	return o
}

// stat is a statistic of a combination's metric, or false.
func stat(o obj, tag, name string) (float64, bool) {
	for _, e := range o {
		if e.k != tag {
			continue
		}
		for _, f := range e.v.(obj) {
			if f.k == name {
				v, ok := f.v.(float64)
				return v, ok
			}
		}
	}
	return 0, false
}

// rankedPoint is a successful point with what its sweep ranks it by.
type rankedPoint struct {
	SweepPoint
	metrics   obj
	thru, lat float64
}

// sweepRanking is what AIPerf's SweepAnalyzer computes of the successful
// points: the best throughput, the best p99 latency (TTFT's, or request
// latency's when a point has no TTFT) and the Pareto front of the two.
type sweepRanking struct {
	ok                []rankedPoint
	bestThru, bestLat *rankedPoint
	pareto            []rankedPoint
}

func rankSweep(points []SweepPoint) sweepRanking {
	var r sweepRanking
	latency := "time_to_first_token"
	for _, p := range points {
		if p.Failed != "" {
			continue
		}
		m := p.combination()
		if _, has := p.value(m, latency, "p99"); !has {
			latency = "request_latency"
		}
		thru, _ := p.value(m, "request_throughput", "avg")
		r.ok = append(r.ok, rankedPoint{SweepPoint: p, metrics: m, thru: thru})
	}
	for i := range r.ok {
		p := &r.ok[i]
		p.lat, _ = p.value(p.metrics, latency, "p99")
		if r.bestThru == nil || p.thru > r.bestThru.thru {
			r.bestThru = p
		}
		if r.bestLat == nil || p.lat < r.bestLat.lat {
			r.bestLat = p
		}
	}
	for i, p := range r.ok {
		dominated := false
		for j, o := range r.ok {
			if i != j && o.thru >= p.thru && o.lat <= p.lat && (o.thru > p.thru || o.lat < p.lat) {
				dominated = true
				break
			}
		}
		if !dominated {
			r.pareto = append(r.pareto, p)
		}
	}
	return r
}

// sweepParameters are the swept parameters' names and each one's values,
// in the order first seen.
func sweepParameters(points []SweepPoint) (names []string, values map[string][]any) {
	values = map[string][]any{}
	for _, p := range points {
		for _, q := range p.Params {
			if _, seen := values[q.Name]; !seen {
				names = append(names, q.Name)
			}
			if v := paramValue(q); !containsValue(values[q.Name], v) {
				values[q.Name] = append(values[q.Name], v)
			}
		}
	}
	return names, values
}

// SweepJSON is profile_export_aiperf_sweep.json in AIPerf 0.13's layout of
// a one-trial sweep: the sweep's parameters and run shape (metadata), each
// successful point's metrics by tag (per_combination_metrics), the points
// that failed (failed_runs, each labelled run_0001 as AIPerf labels a
// point's one trial), the best throughput and p99 latency, and the Pareto
// front of request throughput (maximised) against TTFT p99 (minimised;
// request latency p99 when a point has no TTFT). AIPerf 0.13 leaves the
// last two empty for a one-trial sweep (its analyser looks for flattened
// keys its one-trial cells lack); bench fills them, in their multi-trial
// form. Each entry also names its point's directory. A multi-run sweep's
// cells are each point's statistics across its runs (SweepPoint.figures),
// and every run that failed is listed.
func SweepJSON(points []SweepPoint) ([]byte, error) {
	names, values := sweepParameters(points)
	rank := rankSweep(points)
	runs := sweepRuns(points)
	combos := []any{}
	for _, p := range rank.ok {
		combos = append(combos, obj{{"parameters", p.params()}, {"metrics", p.metrics}, {"artifact_directory", p.artifacts()}})
	}
	params := make([]any, len(names))
	combinations := 1
	for i, n := range names {
		params[i] = obj{{"name", n}, {"values", values[n]}}
		combinations *= len(values[n])
	}
	best := obj{}
	pareto := []any{}
	if len(rank.ok) > 0 {
		best = append(best, kv{"best_throughput", obj{{"parameters", rank.bestThru.params()}, {"metric", rank.bestThru.thru}, {"unit", "requests/sec"}}},
			kv{"best_latency_p99", obj{{"parameters", rank.bestLat.params()}, {"metric", rank.bestLat.lat}, {"unit", "ms"}}})
		for _, p := range rank.pareto {
			pareto = append(pareto, p.params())
		}
	}
	doc := obj{
		{"aggregation_type", "sweep"},
		{"num_profile_runs", runs.total},
		{"num_successful_runs", runs.total - len(runs.failed)},
		{"failed_runs", runs.failed},
		{"metadata", obj{{"sweep_parameters", params}, {"num_combinations", combinations}, {"sweep_mode", runs.mode},
			{"confidence_level", runs.level}, {"num_trials_per_value", runs.trials}, {"aggregation_type", "sweep"}}},
		{"per_combination_metrics", combos},
		{"best_configurations", best},
		{"pareto_optimal", pareto},
	}
	b, err := indentedJSON(doc)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// sweepRunCounts are a sweep's runs as its summary counts them: how many
// ran, the failed ones (each its label, point, directory and why), the
// most runs of a point, the mode and the level of the intervals.
type sweepRunCounts struct {
	total, trials int
	failed        []any
	mode          string
	level         float64
}

func sweepRuns(points []SweepPoint) sweepRunCounts {
	// A sweep of one run per point is AIPerf's repeated sweep of one
	// trial, at --confidence-level's default unless its runs say another.
	c := sweepRunCounts{failed: []any{}, trials: 1, mode: SweepRepeated, level: 0.95}
	for _, p := range points {
		if p.Runs == nil {
			c.total++
			if l := p.Run.confidenceLevel(); l > 0 {
				c.level = l
			}
			if p.Failed != "" {
				c.failed = append(c.failed, obj{{"label", TrialLabel(0)}, {"parameters", p.params()}, {"artifact_directory", p.Dir}, {"error", p.Failed}})
			}
			continue
		}
		c.total += len(p.Runs.Trials)
		c.trials, c.mode, c.level = max(c.trials, len(p.Runs.Trials)), p.Runs.Mode, p.Runs.Level
		for _, t := range p.Runs.Trials {
			if t.Failed != "" {
				c.failed = append(c.failed, obj{{"label", t.Label}, {"parameters", p.params()}, {"artifact_directory", t.Dir}, {"error", t.Failed}})
			}
		}
	}
	return c
}

func containsValue(vs []any, v any) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// sweepColumns are the per-point figures of the console table and the CSV:
// the ones read off to pick an operating point.
var sweepColumns = []struct {
	head, key string
}{
	{"req/s", "request_throughput_avg"},
	{"output tok/s", "output_token_throughput_avg"},
	{"TTFT p50 ms", "time_to_first_token_p50"},
	{"TTFT p99 ms", "time_to_first_token_p99"},
	{"ITL p50 ms", "inter_token_latency_p50"},
	{"ITL p99 ms", "inter_token_latency_p99"},
	{"latency p99 ms", "request_latency_p99"},
}

// SweepCSV is profile_export_aiperf_sweep.csv as AIPerf 0.13 writes it
// (aggregate_sweep_csv_exporter): a row per successful point, its
// parameters, then for every metric (sorted by tag) its mean, std, min, max
// (two decimals) and cv (four); then the Best Configurations, Pareto
// Optimal Points and Metadata sections, after a blank line each.
func SweepCSV(points []SweepPoint) ([]byte, error) {
	names, values := sweepParameters(points)
	rank := rankSweep(points)
	runs := sweepRuns(points)
	params := func(p SweepPoint) []string {
		row := make([]string, len(names))
		for i, n := range names {
			for _, q := range p.Params {
				if q.Name == n {
					row[i] = pythonValue(q)
				}
			}
		}
		return row
	}
	f := func(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
	var rows [][]string
	if len(rank.ok) > 0 {
		tags := map[string]bool{}
		for _, p := range rank.ok {
			for _, e := range p.metrics {
				tags[e.k] = true
			}
		}
		sorted := slices.Sorted(maps.Keys(tags))
		head := slices.Clone(names)
		for _, t := range sorted {
			head = append(head, t+"_mean", t+"_std", t+"_min", t+"_max", t+"_cv")
		}
		rows = append(rows, head)
		for _, p := range rank.ok {
			row := params(p.SweepPoint)
			for _, t := range sorted {
				for _, st := range []struct {
					name     string
					decimals int
				}{{"mean", 2}, {"std", 2}, {"min", 2}, {"max", 2}, {"cv", 4}} {
					cell := ""
					if v, ok := stat(p.metrics, t, st.name); ok {
						cell = f(v, st.decimals)
					}
					row = append(row, cell)
				}
			}
			rows = append(rows, row)
		}
	}
	rows = append(rows, nil, []string{"Best Configurations"})
	if len(rank.ok) > 0 {
		rows = append(rows, append(append([]string{"Configuration"}, names...), "Metric", "Unit"),
			append(append([]string{"Best Throughput"}, params(rank.bestThru.SweepPoint)...), f(rank.bestThru.thru, 2), "requests/sec"),
			append(append([]string{"Best Latency P99"}, params(rank.bestLat.SweepPoint)...), f(rank.bestLat.lat, 2), "ms"))
	}
	rows = append(rows, nil, []string{"Pareto Optimal Points"})
	if len(rank.pareto) > 0 {
		rows = append(rows, names)
		for _, p := range rank.pareto {
			rows = append(rows, params(p.SweepPoint))
		}
	} else {
		rows = append(rows, []string{"None"})
	}
	combinations := 1
	for _, n := range names {
		combinations *= len(values[n])
	}
	rows = append(rows, nil, []string{"Metadata"}, []string{"Field", "Value"},
		[]string{"Aggregation Type", "sweep"},
		[]string{"Sweep Parameters", strings.Join(names, ", ")},
		[]string{"Number of Combinations", strconv.Itoa(combinations)},
		[]string{"Number of Profile Runs", strconv.Itoa(runs.total)},
		[]string{"Number of Successful Runs", strconv.Itoa(runs.total - len(runs.failed))})
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.UseCRLF = true // Python's csv module
	for _, row := range rows {
		if row == nil {
			// encoding/csv writes an empty record as an empty quoted field;
			// Python's is a bare blank line.
			w.Flush()
			buf.WriteString("\r\n")
			continue
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// pythonValue is the parameter as Python's str prints it: 4, 5.0.
func pythonValue(q SweepParam) string {
	if q.Name == "concurrency" {
		return strconv.Itoa(int(q.Value))
	}
	return PythonFloat(q.Value)
}

// ConsoleSweep prints the sweep's table: a row per point with the figures
// read off to pick an operating point.
func ConsoleSweep(w io.Writer, points []SweepPoint) {
	fmt.Fprintf(w, "\n%s\n%-28s", "inferprobe | Sweep", "Point")
	for _, c := range sweepColumns {
		fmt.Fprintf(w, " %14s", c.head)
	}
	fmt.Fprintf(w, " %8s\n", "errors")
	for _, p := range points {
		fmt.Fprintf(w, "%-28s", p.Label())
		m := p.figures()
		for _, c := range sweepColumns {
			if v, ok := metricMean(m, c.key); ok {
				fmt.Fprintf(w, " %14.2f", v)
			} else {
				fmt.Fprintf(w, " %14s", "-")
			}
		}
		fmt.Fprintf(w, " %8d", p.errors())
		if p.Failed != "" {
			fmt.Fprintf(w, "  (failed: %s)", p.Failed)
		}
		fmt.Fprintln(w)
	}
}

// SweepSummaryDir is where the summary of the sweep of points goes under
// the sweep's directory.
func SweepSummaryDir(points []SweepPoint) string {
	if len(points) > 0 && points[0].Runs != nil && points[0].Runs.Mode == SweepRepeated {
		return filepath.Join(AggregateDir, SweepDir)
	}
	return SweepDir
}

// WriteSweep writes the sweep's summary into dir/sweep_aggregate (in a
// multi-run sweep of the repeated mode, dir/aggregate/sweep_aggregate):
// the JSON and CSV, and the HTML page of throughput against latency.
func WriteSweep(dir string, points []SweepPoint) error {
	out := filepath.Join(dir, SweepSummaryDir(points))
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	js, err := SweepJSON(points)
	if err != nil {
		return err
	}
	table, err := SweepCSV(points)
	if err != nil {
		return err
	}
	page, err := SweepHTML(points)
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{sweepJSONFile: js, sweepCSVFile: table, sweepHTMLFile: page} {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
