package export

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/inferprobe/inferprobe/stats"
)

// A multi-run benchmark (--num-profile-runs) is laid out as AIPerf 0.13
// lays out one configuration's trials: each run's artifacts in
// profile_runs/run_NNNN/, the confidence aggregate across them in
// aggregate/. A multi-run sweep is laid out as AIPerf lays it out in the
// order of --parameter-sweep-mode (SweepRepeated, SweepIndependent).
const (
	TrialsDir          = "profile_runs"
	AggregateDir       = "aggregate"
	aggregateJSONFile  = "profile_export_aiperf_aggregate.json"
	aggregateCSVFile   = "profile_export_aiperf_aggregate.csv"
	aggregateHTMLFile  = "report.html"
	collatedJSONFile   = "profile_export_aiperf_collated.json"
	collatedSchema     = "1.0.0"
	aggregateSchema    = "1.0" // AIPerf's aggregate-confidence schema
	aggregationType    = "confidence"
	trialLabelTemplate = "run_%04d"
	sweepTrialTemplate = "trial_%04d"
)

// AIPerf's --parameter-sweep-modes: the order of a multi-run sweep's runs,
// which its layout follows.
const (
	// SweepRepeated, AIPerf's default, runs a trial of every point, then
	// the next trial: profile_runs/trial_NNNN/POINT/, each point's
	// aggregate in aggregate/POINT/, the sweep's summary in
	// aggregate/sweep_aggregate/.
	SweepRepeated = "repeated"
	// SweepIndependent runs every trial of a point, then the next point:
	// POINT/profile_runs/trial_NNNN/, POINT/aggregate/, sweep_aggregate/.
	SweepIndependent = "independent"
)

// TrialLabel is run i's (from 0) label and directory name: run_0001.
func TrialLabel(i int) string { return fmt.Sprintf(trialLabelTemplate, i+1) }

// TrialDir is run i's (from 0) directory under the multi-run's:
// profile_runs/run_NNNN, or at a sweep's point (its directory name) in
// the sweep's mode, profile_runs/trial_NNNN/POINT or
// POINT/profile_runs/trial_NNNN.
func TrialDir(i int, point, mode string) string {
	if point == "" {
		return filepath.Join(TrialsDir, TrialLabel(i))
	}
	trial := fmt.Sprintf(sweepTrialTemplate, i+1)
	if mode == SweepIndependent {
		return filepath.Join(point, TrialsDir, trial)
	}
	return filepath.Join(TrialsDir, trial, point)
}

// Trial is one run of a multi-run benchmark, kept as the aggregate reads
// it: its statistics under AIPerf's keys and its per-request samples, not
// its requests, so that ten long runs do not stay in memory.
type Trial struct {
	Label string
	Dir   string // its artifacts' directory, relative to the multi-run's
	// Failed says why the run does not count (every request failed, the
	// failure threshold passed, it was interrupted); empty when it
	// succeeded. A failed run is listed, not aggregated.
	Failed  string
	errors  int // requests that failed
	values  []runValue
	samples *Samples
}

// runValue is one statistic of a run under AIPerf's flat aggregate key
// (time_to_first_token_p99).
type runValue struct {
	tag, stat, unit string
	v               float64
}

func (v runValue) key() string { return v.tag + "_" + v.stat }

// NewTrial keeps what the aggregate needs of r, run i (from 0) of the
// multi-run, whose artifacts are in dir (TrialDir).
func NewTrial(i int, dir string, r Run, failed string) (Trial, error) {
	s, err := r.Samples()
	if err != nil {
		return Trial{}, err
	}
	return Trial{Label: TrialLabel(i), Dir: dir, Failed: failed, errors: r.Summary.Failed, values: runValues(r), samples: s}, nil
}

// runValues are r's statistics as AIPerf's confidence aggregation reads a
// run's summary: each distribution's STAT_KEYS, each run-wide value's avg,
// in the order of profile_export_aiperf.json.
func runValues(r Run) []runValue {
	var out []runValue
	for _, m := range ordered(r, slices.Concat(declaredOrder, extraOrder)) {
		if m.Stats == nil {
			out = append(out, runValue{m.Tag, "avg", m.Unit, m.Value})
			continue
		}
		for _, st := range statistics(m.Stats) {
			if slices.Contains(csvStatKeys, st.k) {
				out = append(out, runValue{m.Tag, st.k, m.Unit, st.v.(float64)})
			}
		}
	}
	return out
}

// value is the trial's statistic tag_stat.
func (t Trial) value(tag, stat string) (float64, bool) {
	for _, v := range t.values {
		if v.tag == tag && v.stat == stat {
			return v.v, true
		}
	}
	return 0, false
}

// MultiRun is a multi-run benchmark: its runs in order, the level of its
// intervals and tests, the cooldown between runs, and its convergence
// rule with where it stopped (nil without one).
type MultiRun struct {
	Trials      []Trial
	Level       float64
	Cooldown    float64 // seconds
	Convergence *Convergence
	// Point is the sweep's point the runs measured (its parameters and
	// directory name) and Mode the sweep's (SweepRepeated,
	// SweepIndependent); nil and "" outside a sweep.
	Point *SweepPoint
	Mode  string
}

// Dir is where the aggregate goes under the multi-run's directory.
func (m MultiRun) Dir() string {
	switch {
	case m.Point == nil:
		return AggregateDir
	case m.Mode == SweepIndependent:
		return filepath.Join(m.Point.Dir, AggregateDir)
	}
	return filepath.Join(AggregateDir, m.Point.Dir)
}

func (m MultiRun) successful() []Trial {
	var out []Trial
	for _, t := range m.Trials {
		if t.Failed == "" {
			out = append(out, t)
		}
	}
	return out
}

// runLists are AIPerf's failed_runs (each failed run's label and why) and
// run_labels (the successful runs').
func (m MultiRun) runLists() (failed []any, labels []string) {
	failed, labels = []any{}, []string{}
	for _, t := range m.Trials {
		if t.Failed != "" {
			failed = append(failed, obj{{"label", t.Label}, {"error", t.Failed}})
		} else {
			labels = append(labels, t.Label)
		}
	}
	return failed, labels
}

// aggregateMetric is one statistic across the successful runs.
type aggregateMetric struct {
	key, tag, stat, unit string
	values               []float64 // one per run that has it
	spread               stats.Spread
}

// aggregate is every statistic any successful run has, across the runs
// that have it, in the order they first appear: AIPerf's confidence
// aggregation.
func (m MultiRun) aggregate() []aggregateMetric {
	var out []aggregateMetric
	index := map[string]int{}
	for _, t := range m.successful() {
		for _, v := range t.values {
			if math.IsNaN(v.v) || math.IsInf(v.v, 0) {
				continue // as AIPerf skips a non-finite observation
			}
			i, ok := index[v.key()]
			if !ok {
				i = len(out)
				index[v.key()] = i
				out = append(out, aggregateMetric{key: v.key(), tag: v.tag, stat: v.stat, unit: v.unit})
			}
			out[i].values = append(out[i].values, v.v)
		}
	}
	for i := range out {
		out[i].spread = stats.Across(out[i].values, m.Level)
	}
	return out
}

// agreementTags are the metrics whose runs are tested for agreement: what
// the server's speed shows in, not the workload (token counts) or the
// client (credit-to-start latency). The throughputs are tested on each
// run's batch rates (stats.BatchRates).
var agreementTags = []string{
	"time_to_first_token", "inter_token_latency", "request_latency", "output_token_throughput_per_user",
	"request_throughput", "output_token_throughput",
}

// agreementRow is one metric's test that the runs come from one
// distribution.
type agreementRow struct {
	tag      string
	h, p     float64
	adjusted float64 // Holm-adjusted over the metrics tested
	medians  []float64
}

// agreement tests, per metric of agreementTags that every successful run
// has, that the runs' per-request values come from one distribution
// (Kruskal–Wallis), Holm-adjusted over the metrics; nil with fewer than
// two successful runs.
func (m MultiRun) agreement() []agreementRow {
	ok := m.successful()
	if len(ok) < 2 {
		return nil
	}
	var rows []agreementRow
	for _, tag := range agreementTags {
		groups := make([][]float64, 0, len(ok))
		for _, t := range ok {
			g := t.samples.Values[tag]
			if r, isRate := t.samples.Rates[tag]; isRate {
				g = r
			}
			if len(g) == 0 {
				break
			}
			groups = append(groups, g)
		}
		if len(groups) < len(ok) {
			continue
		}
		row := agreementRow{tag: tag}
		row.h, row.p = stats.KruskalWallis(groups)
		for _, g := range groups {
			row.medians = append(row.medians, stats.Percentile(slices.Sorted(slices.Values(g)), .5))
		}
		rows = append(rows, row)
	}
	ps := make([]float64, len(rows))
	for i, r := range rows {
		ps[i] = r.p
	}
	for i, a := range stats.Holm(ps) {
		rows[i].adjusted = a
	}
	return rows
}

// disagreeing are the rows whose runs differ significantly at level.
func disagreeing(rows []agreementRow, level float64) []agreementRow {
	var out []agreementRow
	for _, r := range rows {
		if r.adjusted < 1-level {
			out = append(out, r)
		}
	}
	return out
}

// jsonNumber is v for JSON, null when it is not finite: AIPerf scrubs NaN
// and infinities to null.
func jsonNumber(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// AggregateJSON is profile_export_aiperf_aggregate.json in AIPerf 0.13's
// aggregate-confidence schema (1.0): metadata (the runs, the failed ones
// and why, the level, the cooldown, and AIPerf's single_run flag when one
// run succeeded) and metrics, each run statistic flattened as tag_stat
// with its mean, std, min, max, cv, se, ci_low, ci_high and t_critical
// across the runs. What AIPerf does not have (the test of whether the
// runs agree, the convergence rule) is under metadata.inferprobe, where
// aiperf plot, which reads the metadata as a whole, looks for no metric.
func AggregateJSON(m MultiRun) ([]byte, error) {
	failed, labels := m.runLists()
	meta := obj{
		{"aggregation_type", aggregationType},
		{"num_profile_runs", len(m.Trials)},
		{"num_successful_runs", len(labels)},
		{"failed_runs", failed},
		{"confidence_level", m.Level},
		{"run_labels", labels},
	}
	if len(labels) == 1 {
		meta = append(meta, kv{"single_run", true})
	}
	meta = append(meta, kv{"cooldown_seconds", m.Cooldown})
	if p := m.Point; p != nil {
		// AIPerf's stamp of a sweep's cell, which aiperf plot labels it by.
		meta = append(meta, kv{"variation_label", p.VariationLabel()}, kv{"variation_values", p.variationValues()}, kv{"sweep_mode", m.Mode})
	}
	meta = append(meta, kv{"inferprobe", m.extras()})
	metrics := obj{}
	for _, a := range m.aggregate() {
		s := a.spread
		metrics = append(metrics, kv{a.key, obj{
			{"mean", jsonNumber(s.Mean)}, {"std", jsonNumber(s.Std)}, {"min", s.Min}, {"max", s.Max},
			{"cv", jsonNumber(s.CV)}, {"se", jsonNumber(s.SE)}, {"ci_low", jsonNumber(s.Interval.Low)},
			{"ci_high", jsonNumber(s.Interval.High)}, {"t_critical", jsonNumber(s.T)}, {"unit", a.unit},
		}})
	}
	return indentedJSON(obj{
		{"schema_version", aggregateSchema}, {"aiperf_version", aiperfVersion},
		{"metadata", meta}, {"metrics", metrics},
	})
}

// extras are metadata.inferprobe: whether the runs agree, by which test,
// and the convergence rule's outcome.
func (m MultiRun) extras() obj {
	rows := m.agreement()
	tests := obj{}
	for _, r := range rows {
		tests = append(tests, kv{r.tag, obj{{"h", r.h}, {"p", r.p}, {"p_adjusted", r.adjusted},
			{"run_medians", r.medians}, {"significant", r.adjusted < 1-m.Level}}})
	}
	var agree any // null: too few runs to judge
	if rows != nil {
		agree = len(disagreeing(rows, m.Level)) == 0
	}
	out := obj{
		{"runs_agree", agree},
		{"agreement_test", "kruskal-wallis, holm-adjusted; docs/metrics.md#multi-run-confidence"},
		{"agreement", tests},
	}
	if c := m.Convergence; c != nil {
		out = append(out, kv{"convergence", obj{
			{"metric", c.Metric}, {"stat", c.Stat}, {"mode", c.Mode}, {"threshold", c.threshold()},
			{"converged", c.Converged}, {"runs", c.Runs}, {"value", jsonNumber(c.Value)},
		}})
	}
	return out
}

// CollatedJSON is profile_export_aiperf_collated.json, which AIPerf 0.13
// writes beside the aggregate when a convergence rule ran the runs: per
// per-request metric, every successful run's values pooled into one
// sample (mean, sample std, p50, p90, p95, p99, count) and each run's
// mean and count. Unlike AIPerf, which reads only single values, it pools
// inter_chunk_latency's gaps too.
func CollatedJSON(m MultiRun) ([]byte, error) {
	ok := m.successful()
	failed, labels := m.runLists()
	tags := map[string]bool{}
	for _, t := range ok {
		for tag := range t.samples.Values {
			tags[tag] = true
		}
	}
	metrics := obj{}
	for _, tag := range slices.Sorted(maps.Keys(tags)) {
		var all []float64
		perRun := []any{}
		for _, t := range ok {
			v := t.samples.Values[tag]
			if len(v) == 0 {
				continue
			}
			all = append(all, v...)
			perRun = append(perRun, obj{{"label", t.Label}, {"mean", stats.Of(v, 0).Avg}, {"count", len(v)}})
		}
		s := stats.Of(all, 0)
		std := 0.0
		if s.Count > 1 { // the sample's, n−1
			std = s.Std * math.Sqrt(float64(s.Count)/float64(s.Count-1))
		}
		metrics = append(metrics, kv{tag, obj{
			{"combined", obj{{"mean", s.Avg}, {"std", std}, {"p50", s.P50}, {"p90", s.P90}, {"p95", s.P95}, {"p99", s.P99}, {"count", s.Count}}},
			{"per_run", perRun},
		}})
	}
	return indentedJSON(obj{
		{"schema_version", collatedSchema}, {"aiperf_version", aiperfVersion},
		{"description", "Every successful run's per-request values pooled into one sample per metric, with that sample's statistics; " +
			"profile_export_aiperf_aggregate.json instead summarises each statistic over the runs' values."},
		{"metadata", obj{{"aggregation_type", "detailed"}, {"num_profile_runs", len(m.Trials)}, {"num_successful_runs", len(labels)},
			{"failed_runs", failed}, {"run_labels", labels}, {"cooldown_seconds", m.Cooldown}}},
		{"metrics", metrics},
	})
}

// AggregateCSV is profile_export_aiperf_aggregate.csv as AIPerf 0.13
// writes it: a row per statistic (metric, mean, std, min, max, cv, se,
// ci_low, ci_high, t_critical, unit; two decimals, four for cv, se and
// t_critical, a non-finite value empty), a blank line, and the metadata
// as "Title Case Key,value". Then, after another blank line,
// inferprobe's verdict on whether the runs agree, apart from AIPerf's
// sections.
func AggregateCSV(m MultiRun) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true // Python's csv module, which AIPerf writes with
	f := func(v float64, decimals int) string {
		switch {
		case math.IsNaN(v):
			return ""
		case math.IsInf(v, 1):
			return "inf"
		case math.IsInf(v, -1):
			return "-inf"
		}
		return strconv.FormatFloat(v, 'f', decimals, 64)
	}
	rows := [][]string{{"metric", "mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high", "t_critical", "unit"}}
	for _, a := range m.aggregate() {
		s := a.spread
		rows = append(rows, []string{a.key, f(s.Mean, 2), f(s.Std, 2), f(s.Min, 2), f(s.Max, 2), f(s.CV, 4), f(s.SE, 4),
			f(s.Interval.Low, 2), f(s.Interval.High, 2), f(s.T, 4), a.unit})
	}
	var labels []string
	for _, t := range m.successful() {
		labels = append(labels, "'"+t.Label+"'")
	}
	rows = append(rows, nil,
		[]string{"Aggregation Type", aggregationType},
		[]string{"Total Runs", strconv.Itoa(len(m.Trials))},
		[]string{"Successful Runs", strconv.Itoa(len(labels))},
		[]string{"Confidence Level", PythonFloat(m.Level)},
		[]string{"Run Labels", "[" + strings.Join(labels, ", ") + "]"}) // Python's str of a list
	if len(labels) == 1 {
		rows = append(rows, []string{"Single Run", "True"})
	}
	rows = append(rows, []string{"Cooldown Seconds", PythonFloat(m.Cooldown)}, nil,
		[]string{"inferprobe", "Value"}, []string{"Runs Agree", m.verdict(m.agreement())})
	if c := m.Convergence; c != nil {
		rows = append(rows, []string{"Convergence", c.summary()})
	}
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// pythonFloat spells v as Python's str(float) does: 0.0, 0.95.
func PythonFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// verdict says in one line whether the runs agree, from their
// agreement rows.
func (m MultiRun) verdict(rows []agreementRow) string {
	if rows == nil {
		return "cannot be judged: fewer than two successful runs"
	}
	differ := disagreeing(rows, m.Level)
	if len(differ) == 0 {
		return fmt.Sprintf("yes: no metric's distribution differs between the runs at %g %% (Kruskal–Wallis, Holm-adjusted over %d metrics)", 100*m.Level, len(rows))
	}
	parts := make([]string, len(differ))
	for i, r := range differ {
		parts[i] = fmt.Sprintf("%s (p=%.2g)", r.tag, r.adjusted)
	}
	return fmt.Sprintf("no: the runs differ in %s at %g %% (Kruskal–Wallis, Holm-adjusted); the runs do not measure one steady server", strings.Join(parts, ", "), 100*m.Level)
}

// multiRunColumns are the statistics the console shows across runs: the
// ones read off a benchmark.
var multiRunColumns = []string{
	"request_throughput_avg", "output_token_throughput_avg",
	"time_to_first_token_avg", "time_to_first_token_p50", "time_to_first_token_p99",
	"inter_token_latency_avg", "inter_token_latency_p50", "inter_token_latency_p99",
	"request_latency_avg", "request_latency_p99",
}

// ConsoleMultiRun prints the aggregate across the runs: per statistic of
// multiRunColumns the runs' mean, their spread (std, CV, min to max) and
// the t interval of the mean at the level, then whether the runs agree
// and, with a convergence rule, where it stopped.
func ConsoleMultiRun(w io.Writer, m MultiRun) {
	ok := m.successful()
	fmt.Fprintf(w, "\n%s\n", "inferprobe | Across runs")
	fmt.Fprintf(w, "%d of %d runs succeeded", len(ok), len(m.Trials))
	for _, t := range m.Trials {
		if t.Failed != "" {
			fmt.Fprintf(w, "; %s failed: %s", t.Label, t.Failed)
		}
	}
	fmt.Fprintln(w)
	if len(ok) == 0 {
		return
	}
	byKey := map[string]aggregateMetric{}
	for _, a := range m.aggregate() {
		byKey[a.key] = a
	}
	fmt.Fprintf(w, "%-44s %12s %10s %8s %25s %21s\n", "Statistic", "mean", "std", "CV", fmt.Sprintf("%g %% CI of the mean", 100*m.Level), "min – max")
	for _, key := range multiRunColumns {
		a, found := byKey[key]
		if !found {
			continue
		}
		s := a.spread
		ci := "—" // one run bounds nothing
		if s.N > 1 {
			ci = "[" + bound(s.Interval.Low) + ", " + bound(s.Interval.High) + "]"
		}
		fmt.Fprintf(w, "%-44s %12.2f %10.2f %7.1f%% %25s %21s\n", key+" ("+a.unit+")", s.Mean, s.Std, 100*s.CV, ci,
			fmt.Sprintf("%.2f – %.2f", s.Min, s.Max))
	}
	fmt.Fprintf(w, "Runs agree: %s\n", m.verdict(m.agreement()))
	if c := m.Convergence; c != nil {
		fmt.Fprintf(w, "Convergence: %s\n", c.summary())
	}
}

// WriteAggregate writes the aggregate across the runs into dir/aggregate
// (at a sweep's point, dir/aggregate/POINT or dir/POINT/aggregate): AIPerf's JSON and CSV, its
// collated JSON when a convergence rule ran the runs, and an HTML report.
func WriteAggregate(dir string, m MultiRun) error {
	out := filepath.Join(dir, m.Dir())
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	js, err := AggregateJSON(m)
	if err != nil {
		return err
	}
	table, err := AggregateCSV(m)
	if err != nil {
		return err
	}
	page, err := AggregateHTML(m)
	if err != nil {
		return err
	}
	files := map[string][]byte{aggregateJSONFile: js, aggregateCSVFile: table, aggregateHTMLFile: page}
	if m.Convergence != nil {
		if files[collatedJSONFile], err = CollatedJSON(m); err != nil {
			return err
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
