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

// A sweep's summary goes where AIPerf 0.13 writes it for a sweep of one
// trial per point: beside the points' directories, in sweep_aggregate/.
const (
	SweepDir      = "sweep_aggregate"
	sweepJSONFile = "profile_export_aiperf_sweep.json"
	sweepCSVFile  = "profile_export_aiperf_sweep.csv"
	sweepHTMLFile = "sweep_report.html"
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
	Dir    string // its artifacts' directory, relative to the sweep's
	Run    Run
	// Failed says why the point does not count as a successful run (every
	// request failed, the failure threshold passed, it was interrupted);
	// empty when it succeeded. Failed points are listed, not ranked.
	Failed string
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
		m := combinationMetrics(p.Run)
		if _, has := stat(m, latency, "p99"); !has {
			latency = "request_latency"
		}
		thru, _ := stat(m, "request_throughput", "mean")
		r.ok = append(r.ok, rankedPoint{SweepPoint: p, metrics: m, thru: thru})
	}
	for i := range r.ok {
		p := &r.ok[i]
		p.lat, _ = stat(p.metrics, latency, "p99")
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
// form. Each entry also names its point's directory.
func SweepJSON(points []SweepPoint) ([]byte, error) {
	names, values := sweepParameters(points)
	rank := rankSweep(points)
	level := 0.95 // --confidence-level's default, as AIPerf's
	failed, combos := []any{}, []any{}
	for _, p := range points {
		if l := p.Run.confidenceLevel(); l > 0 {
			level = l
		}
		if p.Failed != "" {
			failed = append(failed, obj{{"label", TrialLabel(0)}, {"parameters", p.params()}, {"artifact_directory", p.Dir}, {"error", p.Failed}})
		}
	}
	for _, p := range rank.ok {
		combos = append(combos, obj{{"parameters", p.params()}, {"metrics", p.metrics}, {"artifact_directory", p.Dir}})
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
		{"num_profile_runs", len(points)},
		{"num_successful_runs", len(rank.ok)},
		{"failed_runs", failed},
		{"metadata", obj{{"sweep_parameters", params}, {"num_combinations", combinations}, {"sweep_mode", "repeated"},
			{"confidence_level", level}, {"num_trials_per_value", 1}, {"aggregation_type", "sweep"}}},
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
		[]string{"Number of Profile Runs", strconv.Itoa(len(points))},
		[]string{"Number of Successful Runs", strconv.Itoa(len(rank.ok))})
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
		m := sweepMetrics(p.Run)
		for _, c := range sweepColumns {
			if v, ok := metricMean(m, c.key); ok {
				fmt.Fprintf(w, " %14.2f", v)
			} else {
				fmt.Fprintf(w, " %14s", "-")
			}
		}
		fmt.Fprintf(w, " %8d", p.Run.Summary.Failed)
		if p.Failed != "" {
			fmt.Fprintf(w, "  (failed: %s)", p.Failed)
		}
		fmt.Fprintln(w)
	}
}

// WriteSweep writes the sweep's summary into dir/sweep_aggregate: the JSON
// and CSV, and the HTML page of throughput against latency.
func WriteSweep(dir string, points []SweepPoint) error {
	out := filepath.Join(dir, SweepDir)
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
