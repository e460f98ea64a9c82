package export

import (
	"bytes"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/servermetrics"
)

// HTML returns a self-contained report: the statistics table, the
// comparison with a baseline when there is one, each latency's CDF and
// histogram on its own log axis, the sequence lengths, and the run over
// time. The charts are gonum/plot's SVG, inlined; with CSS, that is all:
// no script, no fonts, nothing fetched.
func HTML(r Run) ([]byte, error) {
	type chart struct {
		ID, Title string
		drawn
	}
	type group struct {
		Title  string
		Charts []chart
	}
	var groups []group
	for _, s := range sections(r) {
		g := group{Title: s.title}
		for _, f := range s.figures {
			d, err := f.draw()
			if err != nil {
				return nil, err
			}
			g.Charts = append(g.Charts, chart{ID: f.id, Title: f.title, drawn: d})
		}
		groups = append(groups, g)
	}
	data := struct {
		Run          Run
		Dists        []metric
		Singles      []metric
		Errors       []errorGroup
		Compare      *comparisonView
		Groups       []group
		Start, Ended string
		Mismatches   string
		Server       *servermetrics.Report
		Intervals    []estimate
		Level        float64
	}{
		Run: r, Dists: distributions(r.Summary), Singles: singles(r), Errors: errorGroups(r.Requests), Mismatches: mismatchNote(r.Summary),
		Start: r.Summary.Start.UTC().Format(time.RFC3339), Ended: r.Summary.End.UTC().Format(time.RFC3339),
		Compare: compareView(r), Groups: groups, Server: r.ServerSide(),
		Intervals: r.estimates(), Level: r.confidenceLevel(),
	}
	var b bytes.Buffer
	if err := page.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// comparisonView is the page's comparison with the baseline.
type comparisonView struct {
	Path  string
	Rows  []comparisonRow
	Rules []comparisonRow // with Failed set for a rule that failed
	// RuleError says why the rules could not be judged; empty when they were.
	RuleError string
	// Tested says the changes have tests; Note says why not, when not.
	Tested bool
	Level  float64
	Note   string
}

type comparisonRow struct {
	Metric, Baseline, Current, Change, Interval, Significance string
	Failed                                                    bool
}

func compareView(r Run) *comparisonView {
	if r.Baseline == nil {
		return nil
	}
	f2 := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	c, err := r.comparison()
	if c == nil {
		return &comparisonView{Path: r.Baseline.Path, RuleError: err.Error()}
	}
	v := &comparisonView{Path: r.Baseline.Path, Tested: c.tested, Level: c.level}
	if err != nil {
		v.RuleError = err.Error()
	}
	if !c.tested {
		v.Note = "Significance cannot be judged: the baseline has no per-request records (profile_export.jsonl beside its profile_export_aiperf.json)."
	}
	for _, d := range c.rows {
		v.Rows = append(v.Rows, comparisonRow{Metric: d.metric + "." + d.stat, Baseline: f2(d.baseline), Current: f2(d.current), Change: change(d.baseline, d.current),
			Interval: relativeInterval(d.baseline, d.test), Significance: c.mark(d.test)})
	}
	for _, d := range c.distributions {
		v.Rows = append(v.Rows, comparisonRow{Metric: d.metric + " (all values, Mann–Whitney U)", Significance: c.mark(&d.test)})
	}
	for _, j := range c.verdicts {
		v.Rules = append(v.Rules, comparisonRow{Metric: j.rule, Baseline: f2(j.baseline), Current: f2(j.current), Change: change(j.baseline, j.current), Failed: j.failed})
	}
	return v
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"f2":      func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"ms":      func(v float64) string { return strconv.FormatFloat(v*ms, 'f', 2, 64) },
	"gapms":   gapMS,
	"gapnote": func() string { return gapUnresolvedNote },
	"pct":     func(v float64) string { return strconv.FormatFloat(v*100, 'f', 1, 64) },
	"slo":     func(s report.SLO) bool { return s != report.SLO{} },
	"join":    strings.Join,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>inferprobe bench: {{.Run.Config.Model}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;padding:0 16px;color:#222;max-width:1240px}
h1{font-size:20px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}h3{font-size:14px;margin:4px 0}
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}
td:first-child,th:first-child{text-align:left}code{background:#f4f4f4;padding:2px 4px;word-break:break-all}
.warn{background:#fee;border:1px solid #d62728;padding:8px;font-weight:bold}
.fail td{background:#fee;font-weight:bold}
.charts{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;flex:1 1 520px;max-width:620px;break-inside:avoid}
figure>svg{width:100%;height:auto}
figcaption{font-size:12px;display:flex;flex-wrap:wrap;gap:2px 14px;padding-left:40px}.key svg{vertical-align:middle}
svg text{font-family:"Liberation Sans",Arial,Helvetica,sans-serif!important}
.nodata{color:#777;font-style:italic}
@page{margin:12mm}
@media print{body{margin:0;max-width:none;font-size:10pt}.warn{border-width:2px}
figure{flex:1 1 45%}h2{break-after:avoid}table{font-size:8pt}td,th{padding:1px 4px}}
</style></head><body>
<h1>inferprobe bench — {{.Run.Config.Model}} ({{.Run.Config.EndpointType}}{{if .Run.Config.Streaming}}, streaming{{end}})</h1>
{{if .Run.ClientBound}}<p class="warn">CLIENT-BOUND RUN: {{.Run.ClientBound}}. These figures may describe inferprobe, not the server.</p>{{end}}
{{if .Run.Interrupted}}<p class="warn">Interrupted: the report covers the requests that finished.</p>{{end}}
{{if .Mismatches}}<p class="warn">Output length mismatches: {{.Mismatches}}.</p>{{end}}
<p>{{join .Run.Config.URLs ", "}} · {{.Start}} to {{.Ended}} · sequence digest <code>{{.Run.Digest}}</code></p>
<p>Repeat with: <code>{{.Run.Config.Command}}</code></p>
<h2>Statistics</h2>
<table><tr><th>Metric</th><th>avg</th><th>min</th><th>max</th><th>p1</th><th>p5</th><th>p10</th><th>p25</th><th>p50</th><th>p75</th><th>p90</th><th>p95</th><th>p99</th><th>std</th></tr>
{{range .Dists}}<tr><td>{{.Name}} ({{.Unit}})</td>{{with .Stats}}<td>{{f2 .Avg}}</td><td>{{f2 .Min}}</td><td>{{f2 .Max}}</td><td>{{f2 .P1}}</td><td>{{f2 .P5}}</td><td>{{f2 .P10}}</td><td>{{f2 .P25}}</td><td>{{f2 .P50}}</td><td>{{f2 .P75}}</td><td>{{f2 .P90}}</td><td>{{f2 .P95}}</td><td>{{f2 .P99}}</td><td>{{f2 .Std}}</td>{{end}}</tr>
{{end}}</table>
<table>{{range .Singles}}<tr><td>{{.Name}} ({{.Unit}})</td><td>{{f2 .Value}}</td></tr>
{{end}}<tr><td>Cancelled requests</td><td>{{.Run.Summary.Cancelled}}</td></tr>
{{with .Run.Summary.ClientPaused}}<tr><td>Client-paused requests (left out of every figure: the client did not run while they were in flight)</td><td>{{.}}</td></tr>
{{end}}{{with .Run.Summary.Lost}}<tr><td>Requests lost by inferprobe (its worker died)</td><td>{{.}}</td></tr>
{{end}}</table>
{{if slo .Run.SLO}}<p>Goodput counts successful requests that met every SLO.</p>{{end}}{{with .Intervals}}
<h2>Confidence intervals at {{pct $.Level}} %</h2>
<p>How far each value can be trusted: the range that holds the true value with that confidence (<code>docs/metrics.md</code> says how each is computed and when it does not hold). The bar spans the interval, the dot is the value; an arrow and — mark a side the run has too few requests to bound.</p>
<table><tr><th>Metric</th><th>statistic</th><th>value</th><th>interval</th><th></th></tr>
{{range .}}<tr><td>{{.Metric.Name}} ({{.Metric.Unit}})</td><td>{{.Stat}}</td><td>{{f2 .Value}}</td><td>{{.Bracket}}</td><td>{{.ErrorBar}}</td></tr>
{{end}}</table>{{end}}
{{with .Compare}}<section id="compare">
<h2>Compared with the baseline</h2>
<p>Baseline: <code>{{.Path}}</code>. Change is (current − baseline) / baseline; the baseline's percentiles are also marked on the CDFs below.</p>
<table><tr><th>Metric</th><th>baseline</th><th>current</th><th>change</th>{{if .Tested}}<th>{{pct .Level}} % interval</th><th>significance</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Metric}}</td><td>{{.Baseline}}</td><td>{{.Current}}</td><td>{{.Change}}</td>{{if $.Compare.Tested}}<td>{{.Interval}}</td><td>{{.Significance}}</td>{{end}}</tr>
{{end}}</table>
{{if .Tested}}<p>~ marks a change not significant at {{pct .Level}} % once corrected (Holm) for the number of tests; p is the adjusted p-value. docs/metrics.md says how each is computed.</p>{{else}}<p>{{.Note}}</p>{{end}}
{{if .RuleError}}<p class="warn">The --compare-fail rules could not be judged: {{.RuleError}}.</p>{{end}}
{{if .Rules}}<table><tr><th>--compare-fail rule</th><th>baseline</th><th>current</th><th>change</th><th>verdict</th></tr>
{{range .Rules}}<tr{{if .Failed}} class="fail"{{end}}><td>{{.Metric}}</td><td>{{.Baseline}}</td><td>{{.Current}}</td><td>{{.Change}}</td><td>{{if .Failed}}FAIL{{else}}pass{{end}}</td></tr>
{{end}}</table>{{end}}
</section>{{end}}
{{with .Server}}<section id="server">
<h2>The server's own metrics</h2>
{{range $u, $why := .Off}}<p>None from <code>{{$u}}</code>: {{$why}}.</p>
{{end}}{{range .Engines}}<h3>{{if .Engine}}{{.Engine}}{{else}}unknown engine{{end}} — <code>{{.Endpoint}}</code></h3>
<table><tr><th>over the run</th><th>avg</th><th>max</th></tr>
{{with .Waiting}}<tr><td>Queue (waiting requests)</td><td>{{f2 .Avg}}</td><td>{{f2 .Max}}</td></tr>{{end}}
{{with .Running}}<tr><td>Running requests</td><td>{{f2 .Avg}}</td><td>{{f2 .Max}}</td></tr>{{end}}
{{with .KVCache}}<tr><td>KV-cache use (%)</td><td>{{pct .Avg}}</td><td>{{pct .Max}}</td></tr>{{end}}
</table>
{{with .TTFT}}<table><tr><th>Time to First Token (ms)</th><th>p50</th><th>p90</th><th>p99</th></tr>
<tr><td>server ({{.Count}} requests)</td><td>{{ms .P50}}</td><td>{{ms .P90}}</td><td>{{ms .P99}}</td></tr>{{end}}
{{with .ClientTTFT}}<tr><td>client</td><td>{{ms .P50}}</td><td>{{ms .P90}}</td><td>{{ms .P99}}</td></tr>{{end}}
{{with .TTFTGap}}<tr><td>client − server</td><td>{{gapms .P50}}</td><td>{{gapms .P90}}</td><td>{{gapms .P99}}</td></tr>{{end}}
{{if .TTFT}}</table>{{with .TTFTGap}}<p>Client − server is the network, queueing outside the engine (its HTTP layer, a proxy) and the client.{{if .Unresolved}} {{gapnote}}{{end}}</p>{{end}}{{end}}
{{with .Lacks}}<p>The engine exports no {{range $i, $c := .}}{{if $i}}, {{end}}{{$c}}{{end}}.</p>{{end}}
{{end}}</section>
{{end}}{{range .Groups}}<h2>{{.Title}}</h2>
<div class="charts">{{range .Charts}}<figure id="{{.ID}}"><h3>{{.Title}}</h3>{{if .SVG}}{{.SVG}}{{else}}<p class="nodata">No samples.</p>{{end}}
{{with .Key}}<figcaption>{{range .}}<span class="key"><svg width="24" height="10" aria-hidden="true">{{if .Dots}}<path d="M8 1L16 9M8 9L16 1" stroke="{{.Color}}" stroke-width="1.5"/>{{else}}<line x1="0" y1="5" x2="24" y2="5" stroke="{{.Color}}" stroke-width="2"{{with .Dash}} stroke-dasharray="{{.}}"{{end}}/>{{end}}</svg> {{.Label}}</span>
{{end}}</figcaption>{{end}}</figure>
{{end}}</div>
{{end}}<h2>Errors</h2>
{{if .Errors}}<table><tr><th>reason</th><th>HTTP status</th><th>count</th><th>first message</th></tr>
{{range .Errors}}<tr><td>{{.Reason}}</td><td>{{.Status}}</td><td>{{.Count}}</td><td style="text-align:left">{{.Message}}</td></tr>
{{end}}</table>{{else}}<p>No request failed.</p>{{end}}
</body></html>
`))
