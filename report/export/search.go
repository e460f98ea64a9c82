package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/inferprobe/inferprobe/capacity"
	"github.com/inferprobe/inferprobe/stats"
)

// A capacity search's summary goes where AIPerf 0.13 writes it:
// search_history.json beside the steps' search_iter_NNNN directories for an
// adaptive style; for a grid, sla_breach.json (max-concurrency-under-sla)
// or degradation_knee.json (concurrency-ramp) in sweep_aggregate/. Both
// get the sweep summary of their steps and report.html, the search's page.
const (
	searchHistoryFile = "search_history.json"
	slaBreachFile     = "sla_breach.json"
	kneeFile          = "degradation_knee.json"
	searchHTMLFile    = "report.html"
	// sweptPath is the parameter a search sweeps, as AIPerf names it.
	sweptPath = "phases.profiling.concurrency"
)

// aiperfPlanner is AIPerf's name for each adaptive style's planner.
var aiperfPlanner = map[string]string{"monotonic": "monotonic_sla", "smooth_isotonic": "smooth_isotonic"}

// WriteSearch writes the summary of search r into dir; points are its
// steps' runs, in the order of r.Steps.
func WriteSearch(dir string, r *capacity.Result, points []SweepPoint) error {
	if err := WriteSweep(dir, points); err != nil {
		return err
	}
	files := map[string]any{}
	switch {
	case r.Plan.Adaptive():
		files[searchHistoryFile] = searchHistory(r)
	case r.Plan.Knee != nil:
		files[filepath.Join(SweepDir, kneeFile)] = degradationKnee(r)
	default:
		files[filepath.Join(SweepDir, slaBreachFile)] = slaBreach(r)
	}
	for name, doc := range files {
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	page, err := SearchHTML(r, points)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, searchHTMLFile), page, 0o644)
}

// breachJSON is AIPerf's breach record: the filter and what was observed.
func breachJSON(b capacity.Breach) obj {
	var observed any
	if b.Observed != nil {
		observed = *b.Observed
	}
	return obj{{"metric_tag", b.Metric}, {"stat", b.Stat}, {"op", b.Op}, {"threshold", b.Threshold}, {"observed", observed}}
}

func filtersJSON(fs []capacity.Filter) []any {
	out := make([]any, len(fs))
	for i, f := range fs {
		out[i] = obj{{"metric_tag", f.Metric}, {"stat", f.Stat}, {"op", f.Op}, {"threshold", f.Threshold}}
	}
	return out
}

// objective is the step's value of the plan's objective (its avg), nil
// when the plan has none or the step did not measure it.
func objective(p *capacity.Plan, s capacity.Step) any {
	if v, ok := s.Metrics[p.Objective]["avg"]; ok && p.Objective != "" {
		return v
	}
	return nil
}

// searchHistory is search_history.json in AIPerf 0.13's schema.
func searchHistory(r *capacity.Result) obj {
	p := r.Plan
	var iterations []any
	var best *capacity.Step
	feasible := 0
	for i, s := range r.Steps {
		var values any
		if v := objective(p, s); v != nil {
			values = []any{v}
		}
		iterations = append(iterations, obj{{"iteration_idx", s.Index}, {"variation_values", obj{{sweptPath, s.Concurrency}}},
			{"objective_values", values}, {"feasible", s.Feasible}, {"non_monotonic_warning", contradicts(r.Steps[:i], s)}})
		if s.Feasible {
			feasible++
		}
		if v, ok := objective(p, s).(float64); ok && s.Feasible {
			if b, _ := objective(p, *orZero(best)).(float64); best == nil || v > b {
				best = &r.Steps[i]
			}
		}
	}
	var bestTrials any
	if best != nil {
		bestTrials = []any{obj{{"iteration_idx", best.Index}, {"objective_values", []any{objective(p, *best)}},
			{"variation_values", obj{{sweptPath, best.Concurrency}}}, {"feasible", true}, {"feasible_count", feasible}, {"pareto_rank", 0}}}
	}
	var boundary any
	if r.FeasibleMax != nil || r.InfeasibleMin != nil {
		b := obj{{"swept_dim_path", sweptPath}}
		var fm, im any
		if r.FeasibleMax != nil {
			s := r.Step(r.FeasibleMax)
			fm = obj{{"value", s.Concurrency}, {"iteration_idx", s.Index}, {"objective_value", objective(p, s)}}
		}
		if r.InfeasibleMin != nil {
			s := r.Step(r.InfeasibleMin)
			im = obj{{"value", s.Concurrency}, {"iteration_idx", s.Index}, {"first_breach", breachJSON(s.Breaches[0])}}
		}
		b = append(b, kv{"feasible_max", fm}, kv{"infeasible_min", im})
		boundary = append(b, boundaryFields(r.Boundary)...)
	}
	var objectives []any
	if p.Objective != "" {
		objectives = []any{obj{{"metric", p.Objective}, {"stat", "avg"}, {"direction", "maximize"}}}
	}
	config := obj{{"planner", aiperfPlanner[p.Style]}, {"search_space", []any{obj{{"path", sweptPath}, {"lo", p.Min}, {"hi", p.Max}, {"kind", "int"}}}},
		{"objectives", objectives}, {"max_iterations", p.MaxIterations}, {"sla_filters", filtersJSON(p.Filters)}, {"recipe_name", p.Recipe}}
	return obj{{"config", config}, {"iterations", iterations}, {"best_trials", bestTrials}, {"boundary_summary", boundary},
		{"recipe", p.Recipe}, {"convergence_reason", r.Reason}}
}

// boundaryFields are smooth_isotonic's fields of boundary_summary, those
// AIPerf sets: boundary_type, binding_constraint and boundary_ci.
func boundaryFields(b *capacity.Boundary) obj {
	var out obj
	if b == nil {
		return out
	}
	if b.Type != "" {
		out = append(out, kv{"boundary_type", b.Type})
	}
	if b.BindingConstraint != "" {
		out = append(out, kv{"binding_constraint", b.BindingConstraint})
	}
	if b.CI != nil {
		out = append(out, kv{"boundary_ci", obj{{"lo", b.CI[0]}, {"hi", b.CI[1]}}})
	}
	return out
}

func orZero(s *capacity.Step) *capacity.Step {
	if s == nil {
		return &capacity.Step{}
	}
	return s
}

// contradicts says whether step s's verdict goes against one before it: a
// feasible step at or above an infeasible one, or the reverse.
func contradicts(before []capacity.Step, s capacity.Step) bool {
	for _, b := range before {
		if b.Feasible != s.Feasible && (s.Feasible && s.Concurrency >= b.Concurrency || !s.Feasible && s.Concurrency <= b.Concurrency) {
			return true
		}
	}
	return false
}

// slaBreach is sla_breach.json, AIPerf's sla_breach_knee output.
func slaBreach(r *capacity.Result) obj {
	var points []any
	monotonic, seenInfeasible := true, false
	for _, s := range r.Steps {
		breaches := []any{}
		for _, b := range s.Breaches {
			breaches = append(breaches, breachJSON(b))
		}
		points = append(points, obj{{"concurrency", s.Concurrency}, {"feasible", s.Feasible}, {"breaches", breaches}})
		if !s.Feasible {
			seenInfeasible = true
		} else if seenInfeasible {
			monotonic = false
		}
	}
	var maxPassing, firstFailing, firstBreach any
	if r.FeasibleMax != nil {
		maxPassing = r.FeasibleMax.Concurrency
	}
	if r.InfeasibleMin != nil {
		firstFailing = r.InfeasibleMin.Concurrency
		firstBreach = breachJSON(r.Step(r.InfeasibleMin).Breaches[0])
	}
	return obj{{"swept_param", sweptPath}, {"max_passing_concurrency", maxPassing}, {"first_failing_concurrency", firstFailing},
		{"first_failing_breach", firstBreach}, {"all_points", points}, {"monotonicity_check", monotonic}, {"filters", filtersJSON(r.Plan.Filters)}}
}

// degradationKnee is degradation_knee.json, AIPerf's
// degradation_knee_detect output.
func degradationKnee(r *capacity.Result) obj {
	k := r.Plan.Knee
	var points []any
	for _, s := range r.Steps {
		var v any
		if y, ok := s.Metrics[k.Metric][k.Stat]; ok {
			v = y
		}
		points = append(points, obj{{"concurrency", s.Concurrency}, {k.Stat, v}})
	}
	var baseline, knee, kneeValue any
	if len(r.Steps) > 0 {
		baseline = r.Steps[0].Concurrency
	}
	if r.Knee != nil {
		knee, kneeValue = r.Knee.Concurrency, r.Knee.Value
	}
	return obj{{"baseline_concurrency", baseline}, {"baseline_" + k.Stat, r.Baseline}, {"knee_concurrency", knee}, {"knee_" + k.Stat, kneeValue},
		{"threshold_pct", k.Threshold}, {"swept_metric", k.Metric}, {"stat", k.Stat}, {"swept_param", sweptPath}, {"all_points", points}}
}

// Answer is the search's answer in a sentence, and how sure it is: the
// last feasible and the first infeasible step, and why the search ended.
func Answer(r *capacity.Result) string {
	var b bytes.Buffer
	p := r.Plan
	switch {
	case len(p.Filters) == 0: // a ramp without an SLA: its answer is the knee
	case r.FeasibleMax == nil:
		fmt.Fprintf(&b, "no concurrency from %d met the SLA", p.Min)
	case r.InfeasibleMin == nil:
		fmt.Fprintf(&b, "capacity at least %d: every step met the SLA (--concurrency-max %d)", r.FeasibleMax.Concurrency, p.Max)
	default:
		fmt.Fprintf(&b, "capacity %d: the last feasible step", r.FeasibleMax.Concurrency)
	}
	if r.FeasibleMax != nil && len(p.Filters) > 0 {
		fmt.Fprintf(&b, " (step %d, concurrency %d)", r.FeasibleMax.Step, r.FeasibleMax.Concurrency)
	}
	if r.InfeasibleMin != nil {
		s := r.Step(r.InfeasibleMin)
		fmt.Fprintf(&b, "; first infeasible: step %d, concurrency %d, %s", s.Index, s.Concurrency, breachText(s.Breaches[0]))
	}
	if r.NonMonotonic {
		b.WriteString("; NOT MONOTONE: a step met the SLA above one that did not, so the target is not steady and the answer is less sure")
	}
	if bd := r.Boundary; bd != nil && bd.Type == "cliff" {
		b.WriteString("; a CLIFF: the SLA margin jumps at the boundary, so the bracket was bisected rather than fitted")
	}
	if bd := r.Boundary; bd != nil && bd.CI != nil {
		fmt.Fprintf(&b, "; binding SLA %s: its margin at the boundary within [%.4g, %.4g] (95 %%)", bd.BindingConstraint, bd.CI[0], bd.CI[1])
	}
	if p.Knee != nil {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		if r.Knee != nil {
			fmt.Fprintf(&b, "knee at concurrency %d: %s %s %.2f > %.2f × %.2f", r.Knee.Concurrency, p.Knee.Metric, p.Knee.Stat, r.Knee.Value, r.Baseline, 1+p.Knee.Threshold)
		} else {
			fmt.Fprintf(&b, "no knee: %s %s stayed within %.0f%% of the lowest concurrency's", p.Knee.Metric, p.Knee.Stat, 100*p.Knee.Threshold)
		}
	}
	fmt.Fprintf(&b, " (%s)", r.Reason)
	return b.String()
}

func breachText(b capacity.Breach) string {
	if b.Observed == nil {
		return fmt.Sprintf("%s %s not measured (SLA %s %s %g)", b.Metric, b.Stat, b.Stat, b.Op, b.Threshold)
	}
	return fmt.Sprintf("%s %s %.2f, SLA %s %g", b.Metric, b.Stat, *b.Observed, b.Op, b.Threshold)
}

// curveStats are the statistics the console and the page plot: each
// filter's, and the knee's.
func curveStats(p *capacity.Plan) []capacity.Filter {
	out := append([]capacity.Filter(nil), p.Filters...)
	if p.Knee != nil {
		out = append(out, capacity.Filter{Metric: p.Knee.Metric, Stat: p.Knee.Stat})
	}
	return out
}

// ConsoleSearch prints the search: a row per step with the statistics it
// is judged by (with their confidence intervals where the step's run, in
// points, has them), then the answer.
func ConsoleSearch(w io.Writer, r *capacity.Result, points []SweepPoint) {
	p := r.Plan
	fmt.Fprintf(w, "\ninferprobe | Capacity search: %s, %s style\n%-6s %11s", p.Recipe, p.Style, "step", "concurrency")
	cols := curveStats(p)
	for _, f := range cols {
		fmt.Fprintf(w, " %26s", f.Metric+" "+f.Stat)
	}
	fmt.Fprintf(w, " %s\n", "verdict")
	for i, s := range r.Steps {
		fmt.Fprintf(w, "%-6d %11d", s.Index, s.Concurrency)
		for _, f := range cols {
			cell := "-"
			if v, ok := s.Metrics[f.Metric][f.Stat]; ok {
				cell = strconv.FormatFloat(v, 'f', 2, 64)
				if iv, ok := stepInterval(points, i, f); ok {
					cell += fmt.Sprintf(" [%.2f, %.2f]", iv.Low, iv.High)
				}
			}
			fmt.Fprintf(w, " %26s", cell)
		}
		verdict := "feasible"
		if !s.Feasible {
			verdict = "INFEASIBLE"
		}
		fmt.Fprintf(w, " %s\n", verdict)
	}
	if len(p.Filters) > 0 {
		fmt.Fprintf(w, "SLA: every step must have")
		for i, f := range p.Filters {
			if i > 0 {
				fmt.Fprint(w, " and")
			}
			fmt.Fprintf(w, " %s %s %s %g", f.Metric, f.Stat, f.Op, f.Threshold)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Answer: %s\n", Answer(r))
}

var searchPage = template.Must(template.New("search").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>inferprobe capacity search</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}.failed{color:#b00}.answer{font-size:1.2em}
figure{margin:1.5em 0}
</style></head><body>
<h1>inferprobe capacity search: {{.Recipe}} ({{.Style}})</h1>
<p class="answer"><strong>{{.Answer}}</strong></p>
<p>SLA: {{range $i, $f := .Filters}}{{if $i}} and {{end}}<code>{{$f}}</code>{{else}}none{{end}}. Concurrency from {{.Min}} to {{.Max}}.
Each chart is a statistic against the concurrency of each step, with its confidence interval where the step has one; the dashed line is the SLA's threshold.
The sweep's throughput curves are in <a href="sweep_aggregate/sweep_report.html">sweep_aggregate</a>.</p>
{{range .Charts}}<figure>{{.}}</figure>
{{end}}
<table><tr><th>step</th><th>concurrency</th>{{range .Heads}}<th>{{.}}</th>{{end}}<th>verdict</th><th>directory</th></tr>
{{range .Rows}}<tr{{if not .Feasible}} class="failed"{{end}}><td>{{.Index}}</td><td>{{.Concurrency}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}<td>{{if .Feasible}}feasible{{else}}infeasible{{end}}</td><td><a href="{{.Dir}}/report.html">{{.Dir}}</a></td></tr>
{{end}}</table>
</body></html>
`))

// SearchHTML is the search's page: each SLA statistic against the
// concurrency with its threshold, the answer and every step.
func SearchHTML(r *capacity.Result, points []SweepPoint) ([]byte, error) {
	type row struct {
		Index, Concurrency int
		Feasible           bool
		Cells              []string
		Dir                string
	}
	p := r.Plan
	data := struct {
		Recipe, Style, Answer string
		Filters               []string
		Min, Max              int
		Charts                []template.HTML
		Heads                 []string
		Rows                  []row
	}{Recipe: p.Recipe, Style: p.Style, Answer: Answer(r), Min: p.Min, Max: p.Max}
	for _, f := range p.Filters {
		data.Filters = append(data.Filters, f.String())
	}
	for _, f := range curveStats(p) {
		svg, ok, err := searchChart(f, r, points)
		if err != nil {
			return nil, fmt.Errorf("drawing %s %s: %w", f.Metric, f.Stat, err)
		}
		if ok {
			data.Charts = append(data.Charts, svg)
		}
		data.Heads = append(data.Heads, f.Metric+" "+f.Stat)
	}
	for i, s := range r.Steps {
		rw := row{Index: s.Index, Concurrency: s.Concurrency, Feasible: s.Feasible}
		if i < len(points) {
			rw.Dir = points[i].Dir
		}
		for _, f := range curveStats(p) {
			cell := "-"
			if v, ok := s.Metrics[f.Metric][f.Stat]; ok {
				cell = strconv.FormatFloat(v, 'f', 2, 64)
			}
			rw.Cells = append(rw.Cells, cell)
		}
		data.Rows = append(data.Rows, rw)
	}
	var b bytes.Buffer
	if err := searchPage.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// stepInterval is the bounded confidence interval of statistic f in the run
// of step i, if it has one.
func stepInterval(points []SweepPoint, i int, f capacity.Filter) (stats.Interval, bool) {
	if i >= len(points) {
		return stats.Interval{}, false
	}
	for _, e := range points[i].Run.estimates() {
		if e.Metric.Tag == f.Metric && e.Stat == f.Stat && e.Interval.Bounded() {
			return e.Interval, true
		}
	}
	return stats.Interval{}, false
}
