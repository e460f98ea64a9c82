package export

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"path/filepath"
	"strings"

	"github.com/inferprobe/inferprobe/stats"
)

var multiRunPage = template.Must(template.New("multirun").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>inferprobe multi-run</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}.failed,.differ{color:#b00}
</style></head><body>
<h1>inferprobe multi-run{{if .Point}} at {{.Point}}{{end}}</h1>
<p>{{len .Runs}} runs of one command{{if .Point}} at this point of the sweep{{end}}, one after another; each run's own report is in its directory.
Each statistic below is taken once per successful run; the table gives the mean of the runs' values, their spread
and Student's t interval of that mean at {{.Level}} % (docs/metrics.md, multi-run confidence).</p>
<table><tr><th>run</th><th>status</th></tr>
{{range .Runs}}<tr{{if .Failed}} class="failed"{{end}}><td><a href="{{$.Up}}{{.Dir}}/report.html">{{.Dir}}</a></td><td>{{if .Failed}}failed: {{.Failed}}{{else}}ok{{end}}</td></tr>
{{end}}</table>
<h2>Do the runs agree?</h2>
<p{{if .Differ}} class="differ"{{end}}>{{.Verdict}}</p>
{{if .Agreement}}<table><tr><th>metric</th><th>H</th><th>p</th><th>p (Holm)</th><th>median per run</th></tr>
{{range .Agreement}}<tr><td>{{.Tag}}</td><td>{{.H}}</td><td>{{.P}}</td><td>{{.Adjusted}}</td><td>{{.Medians}}</td></tr>
{{end}}</table>{{end}}
{{if .Convergence}}<p>Convergence: {{.Convergence}}</p>{{end}}
<h2>Statistics across runs</h2>
<table><tr><th>statistic</th><th>unit</th><th>mean</th><th>{{.Level}} % CI of the mean</th><th></th><th>std</th><th>CV</th><th>min</th><th>max</th><th>per run</th></tr>
{{range .Rows}}<tr><td>{{.Key}}</td><td>{{.Unit}}</td><td>{{.Mean}}</td><td>{{.Bracket}}</td><td>{{.Bar}}</td><td>{{.Std}}</td><td>{{.CV}}</td><td>{{.Min}}</td><td>{{.Max}}</td><td>{{.Values}}</td></tr>
{{end}}</table>
</body></html>
`))

// AggregateHTML is the multi-run's page: the runs, whether they agree,
// and every statistic across them with its interval as an error bar.
// Self-contained: inline SVG, no script.
func AggregateHTML(m MultiRun) ([]byte, error) {
	type agreeRow struct {
		Tag, H, P, Adjusted, Medians string
	}
	type row struct {
		Key, Unit, Mean, Bracket, Std, CV, Min, Max, Values string
		Bar                                                 template.HTML
	}
	rows := m.agreement()
	data := struct {
		Runs        []Trial
		Up          string // from the aggregate's directory to the multi-run's
		Point       string // the sweep's point, "" outside a sweep
		Level       float64
		Verdict     string
		Differ      bool
		Agreement   []agreeRow
		Convergence string
		Rows        []row
	}{Runs: m.Trials, Up: strings.Repeat("../", strings.Count(filepath.ToSlash(m.Dir()), "/")+1), Level: 100 * m.Level, Verdict: m.verdict(rows), Differ: len(disagreeing(rows, m.Level)) > 0}
	if m.Point != nil {
		data.Point = m.Point.Label()
	}
	for _, r := range rows {
		data.Agreement = append(data.Agreement, agreeRow{r.tag, fmt.Sprintf("%.3g", r.h), fmt.Sprintf("%.3g", r.p), fmt.Sprintf("%.3g", r.adjusted), numbers(r.medians)})
	}
	if m.Convergence != nil {
		data.Convergence = m.Convergence.summary()
	}
	for _, a := range m.aggregate() {
		s := a.spread
		e := estimate{Value: s.Mean, Interval: s.Interval}
		if s.N < 2 {
			e.Interval = stats.Interval{Low: math.Inf(-1), High: math.Inf(1)} // one run bounds nothing
		}
		data.Rows = append(data.Rows, row{Key: a.key, Unit: a.unit, Mean: fmt.Sprintf("%.2f", s.Mean), Bracket: e.Bracket(), Bar: e.ErrorBar(),
			Std: fmt.Sprintf("%.2f", s.Std), CV: fmt.Sprintf("%.1f %%", 100*s.CV), Min: fmt.Sprintf("%.2f", s.Min), Max: fmt.Sprintf("%.2f", s.Max),
			Values: numbers(a.values)})
	}
	var b bytes.Buffer
	if err := multiRunPage.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// numbers are vs as "1.00 1.20 0.90".
func numbers(vs []float64) string {
	var b bytes.Buffer
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.2f", v)
	}
	return b.String()
}
