package export

import (
	"bytes"
	"html/template"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report"
)

// maxPoints bounds the dots and line vertices per series, so a run of a
// million requests still gives a report a browser opens.
const maxPoints = 2000

// HTML returns a self-contained report: the statistics table, latency CDFs,
// TTFT, TTFOT and ITL over time, throughput and errors over time. Inline SVG and
// CSS only: no script, no fonts, nothing fetched.
func HTML(r Run) ([]byte, error) {
	var ttft, ttfot, itl, lat []float64
	var ttftT, ttfotT, itlT []point
	for _, q := range r.Requests {
		if q.Sent.IsZero() {
			continue
		}
		at := q.Sent.Sub(r.Summary.Start).Seconds()
		if q.HasTTFT {
			ttft = append(ttft, q.TTFT.Seconds()*ms)
			ttftT = append(ttftT, point{at, q.TTFT.Seconds() * ms})
		}
		if q.HasTTFOT {
			ttfot = append(ttfot, q.TTFOT.Seconds()*ms)
			ttfotT = append(ttfotT, point{at, q.TTFOT.Seconds() * ms})
		}
		if q.ITL > 0 {
			itl = append(itl, q.ITL.Seconds()*ms)
			itlT = append(itlT, point{at, q.ITL.Seconds() * ms})
		}
		if q.Outcome == prober.OutcomeOK {
			lat = append(lat, q.Duration.Seconds()*ms)
		}
	}
	tokens, reqs, errs := overTime(r)
	data := struct {
		Run          Run
		Dists        []metric
		Singles      []metric
		Errors       []errorGroup
		Charts       []template.HTML
		Start, Ended string
		Mismatches   string
	}{
		Run: r, Dists: distributions(r.Summary), Singles: singles(r), Errors: errorGroups(r.Requests), Mismatches: mismatchNote(r.Summary),
		Start: r.Summary.Start.UTC().Format(time.RFC3339), Ended: r.Summary.End.UTC().Format(time.RFC3339),
		Charts: []template.HTML{
			chart{title: "Latency CDF", xLabel: "ms", yLabel: "% of requests", series: []series{
				cdf("time to first token", colorA, ttft), cdf("time to first output token", colorD, ttfot), cdf("request latency", colorB, lat)}}.svg(),
			chart{title: "Inter-token latency CDF", xLabel: "ms", yLabel: "% of requests", series: []series{
				cdf("inter-token latency", colorC, itl)}}.svg(),
			// TTFT is drawn last: where a request has no reasoning, its TTFOT dot hides under it.
			chart{title: "Time to first token over time", xLabel: "seconds since start (send time)", yLabel: "ms", scatter: true,
				series: []series{{label: "TTFOT", color: colorD, points: thin(ttfotT)}, {label: "TTFT", color: colorA, points: thin(ttftT)}}}.svg(),
			chart{title: "Inter-token latency over time", xLabel: "seconds since start (send time)", yLabel: "ms", scatter: true,
				series: []series{{label: "ITL", color: colorC, points: thin(itlT)}}}.svg(),
			chart{title: "Output token throughput over time", xLabel: "seconds since start (end time)", yLabel: "tokens/s",
				series: []series{{label: "output tokens/s", color: colorB, points: tokens}}}.svg(),
			chart{title: "Requests and errors over time", xLabel: "seconds since start (end time)", yLabel: "per second",
				series: []series{{label: "completed/s", color: colorA, points: reqs}, {label: "errors/s", color: colorError, points: errs}}}.svg(),
		},
	}
	var b bytes.Buffer
	if err := page.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// cdf is the empirical distribution of v, in percent.
func cdf(label, color string, v []float64) series {
	s := slices.Clone(v)
	slices.Sort(s)
	pts := make([]point, 0, len(s))
	for i, x := range s {
		pts = append(pts, point{x, float64(i+1) / float64(len(s)) * 100})
	}
	return series{label: label, color: color, points: thin(pts)}
}

// thin keeps at most maxPoints evenly spaced points, and always the last.
func thin(p []point) []point {
	if len(p) <= maxPoints {
		return p
	}
	out := make([]point, 0, maxPoints+1)
	step := float64(len(p)) / maxPoints
	for i := 0.0; int(i) < len(p); i += step {
		out = append(out, p[int(i)])
	}
	if out[len(out)-1] != p[len(p)-1] {
		out = append(out, p[len(p)-1])
	}
	return out
}

// overTime bins the run by end time: output tokens, completed requests and
// errors per second, in bins of at least a second and at most 120 bins.
func overTime(r Run) (tokens, reqs, errs []point) {
	d := r.Summary.Duration
	if d <= 0 {
		return nil, nil, nil
	}
	bin := max(time.Second, d/120)
	n := int(math.Ceil(float64(d)/float64(bin))) + 1
	tok, ok, bad := make([]float64, n), make([]float64, n), make([]float64, n)
	for _, q := range r.Requests {
		if q.Sent.IsZero() || q.Outcome == prober.OutcomeCancelled {
			continue
		}
		// By end time, failures too (their Latency is zero).
		i := min(max(int(q.Sent.Add(q.Duration).Sub(r.Summary.Start)/bin), 0), n-1)
		if q.Outcome == prober.OutcomeOK {
			tok[i] += float64(q.OutputTokens)
			ok[i]++
		} else {
			bad[i]++
		}
	}
	secs := bin.Seconds()
	for i := range n {
		x := (float64(i) + 0.5) * secs
		tokens = append(tokens, point{x, tok[i] / secs})
		reqs = append(reqs, point{x, ok[i] / secs})
		errs = append(errs, point{x, bad[i] / secs})
	}
	return tokens, reqs, errs
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"f2":  func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"slo": func(s report.SLO) bool { return s != report.SLO{} },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>inferprobe bench: {{.Run.Config.Model}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}
td:first-child,th:first-child{text-align:left}code{background:#f4f4f4;padding:2px 4px;word-break:break-all}
.warn{background:#fee;border:1px solid #d62728;padding:8px;font-weight:bold}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg .t{font-weight:bold;font-size:13px}svg .f{fill:#fafafa;stroke:#999}svg .g{stroke:#e4e4e4}
svg text{font-size:11px}svg .xt{text-anchor:middle}svg .yt{text-anchor:end}svg .xl{text-anchor:middle}svg .yl{text-anchor:middle}svg .lg{text-anchor:end}
</style></head><body>
<h1>inferprobe bench — {{.Run.Config.Model}} ({{.Run.Config.EndpointType}}{{if .Run.Config.Streaming}}, streaming{{end}})</h1>
{{if .Run.ClientBound}}<p class="warn">CLIENT-BOUND RUN: {{.Run.ClientBound}}. These figures may describe inferprobe, not the server.</p>{{end}}
{{if .Run.Interrupted}}<p class="warn">Interrupted: the report covers the requests that finished.</p>{{end}}
{{if .Mismatches}}<p class="warn">Output length mismatches: {{.Mismatches}}.</p>{{end}}
<p>{{.Run.Config.URL}} · {{.Start}} to {{.Ended}} · sequence digest <code>{{.Run.Digest}}</code></p>
<p>Repeat with: <code>{{.Run.Config.Command}}</code></p>
<h2>Statistics</h2>
<table><tr><th>Metric</th><th>avg</th><th>min</th><th>max</th><th>p1</th><th>p5</th><th>p10</th><th>p25</th><th>p50</th><th>p75</th><th>p90</th><th>p95</th><th>p99</th><th>std</th></tr>
{{range .Dists}}<tr><td>{{.Name}} ({{.Unit}})</td>{{with .Stats}}<td>{{f2 .Avg}}</td><td>{{f2 .Min}}</td><td>{{f2 .Max}}</td><td>{{f2 .P1}}</td><td>{{f2 .P5}}</td><td>{{f2 .P10}}</td><td>{{f2 .P25}}</td><td>{{f2 .P50}}</td><td>{{f2 .P75}}</td><td>{{f2 .P90}}</td><td>{{f2 .P95}}</td><td>{{f2 .P99}}</td><td>{{f2 .Std}}</td>{{end}}</tr>
{{end}}</table>
<table>{{range .Singles}}<tr><td>{{.Name}} ({{.Unit}})</td><td>{{f2 .Value}}</td></tr>
{{end}}<tr><td>Cancelled requests</td><td>{{.Run.Summary.Cancelled}}</td></tr></table>
{{if slo .Run.SLO}}<p>Goodput counts successful requests that met every SLO.</p>{{end}}
<h2>Charts</h2>
<div class="charts">{{range .Charts}}{{.}}{{end}}</div>
<h2>Errors</h2>
{{if .Errors}}<table><tr><th>reason</th><th>HTTP status</th><th>count</th><th>first message</th></tr>
{{range .Errors}}<tr><td>{{.Reason}}</td><td>{{.Status}}</td><td>{{.Count}}</td><td style="text-align:left">{{.Message}}</td></tr>
{{end}}</table>{{else}}<p>No request failed.</p>{{end}}
</body></html>
`))
