package export

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A sweep's summary goes where AIPerf 0.13 writes it: in sweep_aggregate/
// beside the points' directories, or in a multi-run sweep of the repeated
// mode beside the points' aggregates, in aggregate/sweep_aggregate/.
const (
	SweepDir       = "sweep_aggregate"
	sweepJSONFile  = "profile_export_aiperf_sweep.json"
	sweepCSVFile   = "profile_export_aiperf_sweep.csv"
	sweepHTMLFile  = "sweep_report.html"
	sweepLatencyP  = "time_to_first_token_p99" // AIPerf's first latency candidate
	sweepThroughpt = "request_throughput_avg"
	sweptPrefix    = "phases.profiling." // AIPerf's path of a swept profiling option
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

// pythonValue is the parameter as Python's str prints it: 4, 5.0.
func pythonValue(q SweepParam) string {
	if q.Name == "concurrency" {
		return strconv.Itoa(int(q.Value))
	}
	return PythonFloat(q.Value)
}

// metrics are the point's figures under AIPerf's summary keys: its run's,
// or in a multi-run sweep each statistic across its runs, as AIPerf's
// confidence stats of a sweep cell (mean, std, min, max, cv, ci_low,
// ci_high).
func (p SweepPoint) metrics() obj {
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

// SweepJSON is profile_export_aiperf_sweep.json in AIPerf 0.13's layout:
// the sweep's parameters, each successful point's metrics, the best
// throughput and p99 latency, and the Pareto front of request throughput
// (maximised) against TTFT p99 (minimised).
func SweepJSON(points []SweepPoint) ([]byte, error) {
	var names []string
	values := map[string][]any{}
	var combos, failed []any
	runs, trials := 0, 0
	type ranked struct {
		params          obj
		thru, lat       float64
		hasThru, hasLat bool
	}
	var ok []ranked
	for _, p := range points {
		for _, q := range p.Params {
			if _, seen := values[q.Name]; !seen {
				names = append(names, q.Name)
			}
			if v := paramValue(q); !containsValue(values[q.Name], v) {
				values[q.Name] = append(values[q.Name], v)
			}
		}
		if p.Runs == nil {
			runs++
			if p.Failed != "" {
				failed = append(failed, obj{{"parameters", p.params()}, {"artifact_directory", p.Dir}, {"error", p.Failed}})
			}
		} else {
			// AIPerf lists each run that failed, of every point.
			runs += len(p.Runs.Trials)
			trials = max(trials, len(p.Runs.Trials))
			for _, t := range p.Runs.Trials {
				if t.Failed != "" {
					failed = append(failed, obj{{"label", t.Label}, {"parameters", p.params()}, {"artifact_directory", t.Dir}, {"error", t.Failed}})
				}
			}
		}
		if p.Failed != "" {
			continue
		}
		m := p.metrics()
		combos = append(combos, obj{{"parameters", p.params()}, {"artifact_directory", p.artifacts()}, {"metrics", m}})
		r := ranked{params: p.params()}
		r.thru, r.hasThru = metricMean(m, sweepThroughpt)
		r.lat, r.hasLat = metricMean(m, sweepLatencyP)
		if !r.hasLat {
			r.lat, r.hasLat = metricMean(m, "request_latency_p99")
		}
		ok = append(ok, r)
	}
	params := make([]any, len(names))
	combinations := 1
	for i, n := range names {
		params[i] = obj{{"name", n}, {"values", values[n]}}
		combinations *= len(values[n])
	}
	best := obj{}
	pareto := []any{}
	if len(ok) > 0 {
		bt, bl := ok[0], ok[0]
		for _, r := range ok {
			if r.thru > bt.thru {
				bt = r
			}
			if r.lat < bl.lat {
				bl = r
			}
		}
		best = append(best, kv{"best_throughput", obj{{"parameters", bt.params}, {"metric", bt.thru}, {"unit", "requests/sec"}}})
		if bl.hasLat {
			best = append(best, kv{"best_latency_p99", obj{{"parameters", bl.params}, {"metric", bl.lat}, {"unit", "ms"}}})
		}
		for i, r := range ok {
			dominated := false
			for j, o := range ok {
				if i != j && o.thru >= r.thru && o.lat <= r.lat && (o.thru > r.thru || o.lat < r.lat) {
					dominated = true
					break
				}
			}
			if !dominated {
				pareto = append(pareto, r.params)
			}
		}
	}
	if combos == nil {
		combos = []any{}
	}
	if failed == nil {
		failed = []any{}
	}
	meta := obj{{"sweep_parameters", params}, {"num_combinations", combinations}}
	if trials > 0 {
		meta = append(meta, kv{"sweep_mode", points[0].Runs.Mode}, kv{"confidence_level", points[0].Runs.Level}, kv{"num_trials_per_value", trials})
	}
	doc := obj{
		{"aggregation_type", "sweep"},
		{"num_profile_runs", runs},
		{"num_successful_runs", runs - len(failed)},
		{"failed_runs", failed},
		{"metadata", meta},
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

// SweepCSV is profile_export_aiperf_sweep.csv: one row per point, its
// parameters, then the sweepColumns figures under their metric keys, then
// the requests that failed and why the point failed, if it did.
func SweepCSV(points []SweepPoint) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	var head []string
	if len(points) > 0 {
		for _, q := range points[0].Params {
			head = append(head, q.Name)
		}
	}
	for _, c := range sweepColumns {
		head = append(head, c.key)
	}
	head = append(head, "error_request_count", "artifact_directory", "failed")
	if err := w.Write(head); err != nil {
		return nil, err
	}
	for _, p := range points {
		var row []string
		for _, q := range p.Params {
			row = append(row, strconv.FormatFloat(q.Value, 'f', -1, 64))
		}
		m := p.metrics()
		for _, c := range sweepColumns {
			cell := ""
			if v, ok := metricMean(m, c.key); ok {
				cell = strconv.FormatFloat(v, 'f', 2, 64)
			}
			row = append(row, cell)
		}
		row = append(row, strconv.Itoa(p.errors()), p.artifacts(), p.Failed)
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
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
		m := p.metrics()
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
// multi-run sweep of the repeated mode, dir/aggregate/sweep_aggregate): the JSON and CSV, and
// the HTML page of throughput against latency.
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
