package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// targetErrorsMark is where the landing page shows the probes and the targets' errors:
// the toolkit renders its page once, so each request fills them in there.
const targetErrorsMark = "<!-- target errors -->"

const targetErrorsCSS = `table.errors{border-collapse:collapse}table.errors td,table.errors th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
table.errors .failing{color:#c00;font-weight:bold}`

var targetErrorsHTML = template.Must(template.New("target errors").Funcs(template.FuncMap{
	"at":         func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"ago":        func(now, t time.Time) string { return now.Sub(t).Round(time.Second).String() },
	"percent":    percent,
	"ms":         milliseconds,
	"pathEscape": url.PathEscape,
	"add":        func(a, b int) int { return a + b },
}).Parse(`<h3>Probes</h3>
{{if .Probes}}<table class="errors"><tr><th>probe</th><th>target</th><th>model</th><th>last success</th><th>error ratio, last 5 min</th><th>TTFT p50 / p99</th><th>ITL p50 / p99</th><th>client saturation</th></tr>
{{range .Probes}}<tr><td>{{.Probe}}</td><td>{{.Target}}</td><td>{{.Model}}</td><td>{{if .LastOK.IsZero}}<span class="failing">none yet</span>{{else}}{{at .LastOK}} ({{ago $.Now .LastOK}} ago){{end}}</td><td{{if .Errors}} class="failing"{{end}}>{{if .Requests}}{{percent .Errors .Requests}} ({{.Errors}} of {{.Requests}}){{else}}no requests{{end}}</td><td>{{if .TTFT.Count}}{{ms .TTFT.P50}} / {{ms .TTFT.P99}}{{else}}none{{end}}</td><td>{{if .ITL.Count}}{{ms .ITL.P50}} / {{ms .ITL.P99}}{{else}}none{{end}}</td>{{if $.Saturated}}<td class="failing">saturated: {{$.Saturated}}; the figures may describe inferprobe, not the server</td>{{else}}<td>not saturated</td>{{end}}</tr>
{{end}}</table>
<p>Error ratio over the last 5 minutes; TTFT and ITL over the last {{.RecentLatencies}} successful requests of those 5 minutes, as this process measured them.</p>{{else}}<p>No probe is running.</p>{{end}}
<h3>Target errors</h3>
{{if .Errors}}<table class="errors"><tr><th>target</th><th>reason</th><th>state</th><th>failures</th><th>last</th><th>in</th><th>HTTP status</th><th>last error</th></tr>
{{range .Errors}}<tr><td>{{.Target}}</td><td>{{.Reason}}</td>{{if .Failing}}<td class="failing">failing since {{at .Since}}</td>{{else}}<td>recovered at {{at .RecoveredAt}}</td>{{end}}<td>{{.Count}}</td><td>{{at .LastAt}}</td><td>{{.Scenario}}</td><td>{{if .Status}}{{.Status}}{{end}}</td><td><code>{{.LastError}}</code></td></tr>
{{end}}</table>{{else}}<p>No request has failed since inferprobe started.</p>{{end}}
{{if .Capacity}}<h3>Capacity</h3>
<table class="errors"><tr><th>search burst</th><th>target</th><th>last answer</th><th>searched</th></tr>
{{range .Capacity}}<tr><td>{{.Burst}}</td><td>{{.Target}}</td>{{if .Ended.IsZero}}<td>no search yet</td><td></td>{{else}}<td>{{.Answer}}</td><td>{{at .Ended}} ({{ago $.Now .Ended}} ago)</td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .Runs}}<h3>Burst runs</h3>
<table class="errors"><tr><th>run</th><th>burst</th><th>target</th><th>trigger</th><th>state</th><th>ended</th><th>error ratio</th><th>TTFT p50 / p99</th><th>ITL p50 / p99</th><th>against the earlier runs</th>{{if .BurstAPI.Enabled}}<th>report</th>{{end}}</tr>
{{range .Runs}}<tr><td>{{.ID}}</td><td>{{.Burst}}</td><td>{{.Target}}</td><td>{{.Trigger}}</td><td{{if eq .State "failed"}} class="failing"{{end}}>{{.State}}{{if .Error}}: {{.Error}}{{end}}</td><td>{{if not .Ended.IsZero}}{{at .Ended}}{{end}}</td>{{with .Report}}{{$n := add .Summary.OK .Summary.Failed}}<td{{if .Summary.Failed}} class="failing"{{end}}>{{if $n}}{{percent .Summary.Failed $n}} ({{.Summary.Failed}} of {{$n}}){{else}}no requests{{end}}</td><td>{{if .Summary.TTFT.Count}}{{ms .Summary.TTFT.P50}} / {{ms .Summary.TTFT.P99}}{{end}}</td><td>{{if .Summary.ITL.Count}}{{ms .Summary.ITL.P50}} / {{ms .Summary.ITL.P99}}{{end}}</td>{{else}}<td></td><td></td><td></td>{{end}}<td>{{range .Verdicts}}<span{{if .Regressed}} class="failing"{{end}}>{{.Text}}</span><br>{{end}}</td>{{if $.BurstAPI.Enabled}}<td>{{if .Artifacts}}{{if $.BurstAPI.Token}}<a href="#burst-api">with the token</a>{{else}}<a href="/api/v1/bursts/runs/{{pathEscape .ID}}/report.html">report.html</a>{{end}}{{end}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .BurstAPI.Enabled}}<h3 id="burst-api">Burst API</h3>
{{if .BurstAPI.Token}}<p>The burst API needs the bearer token of <code>--web.burst-api.token-file</code>, which a browser link cannot send, so its pages answer 401 here. Call it with the token, e.g.:</p>
<pre>TOKEN=$(cat TOKEN_FILE)   # the file given to --web.burst-api.token-file
curl -H "Authorization: Bearer $TOKEN" {{.BaseURL}}/api/v1/bursts
curl -H "Authorization: Bearer $TOKEN" -O {{.BaseURL}}/api/v1/bursts/runs/RUN/report.html
curl -H "Authorization: Bearer $TOKEN" -X POST {{.BaseURL}}/api/v1/bursts/BURST</pre>
{{else}}<p><a href="/api/v1/bursts">The configured bursts and the recent runs</a> (JSON); start an on-demand burst with <code>curl -X POST {{.BaseURL}}/api/v1/bursts/BURST</code>.</p>{{end}}{{end}}`))

// percent writes part of whole as a percentage, to a tenth.
func percent(part, whole int) string {
	return strconv.FormatFloat(100*float64(part)/float64(whole), 'f', 1, 64) + " %"
}

// milliseconds writes seconds as milliseconds with three significant digits or more.
func milliseconds(seconds float64) string {
	ms := seconds * 1000
	prec := 0
	switch { // by the value as rounded: 9.996 is "10.0", not "10.00"
	case ms < 9.995:
		prec = 2
	case ms < 99.95:
		prec = 1
	}
	return strconv.FormatFloat(ms, 'f', prec, 64) + " ms"
}

// landingRuns is how many of the newest burst runs the landing page lists.
const landingRuns = 10

// landingData is what the landing page shows at one request.
type landingData struct {
	Now    time.Time
	Probes []probeRow
	// Saturated is why the client counts as saturated, "" when it does not: one verdict
	// for every probe, since they share the worker processes.
	Saturated string
	Errors    []TargetError
	// Capacity is each search burst's last answer.
	Capacity []capacityRow
	// Runs are the newest burst runs, newest first.
	Runs            []runRow
	BurstAPI        landingBurstAPI
	BaseURL         string // this server as the browser reached it, for the curl examples
	RecentLatencies int
}

// landingBurstAPI is what the page says of the burst API: whether it is on, and whether it
// needs a token, which a browser link cannot send.
type landingBurstAPI struct{ Enabled, Token bool }

type runRow struct {
	RunInfo
	Verdicts []verdictText
	// Artifacts says the run's report and artifacts can be downloaded.
	Artifacts bool
}

type verdictText struct {
	Text      string
	Regressed bool
}

type capacityRow struct {
	Burst, Target, Answer string
	Ended                 time.Time // zero before the first search succeeded
}

type probeRow struct {
	Probe, Target, Model string
	summaryView
}

func (d *Daemon) landingData(now time.Time) landingData {
	d.mu.Lock()
	rows := make([]probeRow, 0, len(d.probes))
	for _, name := range sortedKeys(d.probes) {
		r := d.probes[name]
		rows = append(rows, probeRow{Probe: name, Target: r.labels.Target, Model: r.labels.Model, summaryView: r.summary.snapshot(now)})
	}
	d.mu.Unlock()
	runs := d.BurstRuns()
	var runRows []runRow
	for _, r := range runs[:min(len(runs), landingRuns)] {
		runRows = append(runRows, runRow{RunInfo: r, Verdicts: verdicts(r), Artifacts: d.bursts.history.hasArtifacts(r.ID)})
	}
	return landingData{Now: now, Probes: rows, Saturated: d.saturation.Verdict(), Errors: d.failures.snapshot(), Capacity: d.bursts.capacityRows(),
		Runs: runRows, RecentLatencies: recentLatencies}
}

// verdicts say, per metric, how an ended run compares with the earlier runs of its burst
// (its report's regression).
func verdicts(r RunInfo) []verdictText {
	switch {
	case r.Search != nil:
		return []verdictText{{Text: "a search: " + r.Search.Answer}}
	case r.State != RunSucceeded || r.Report == nil:
		return nil
	case r.Report.Regression == nil:
		return []verdictText{{Text: "no earlier run to compare with"}}
	}
	var out []verdictText
	for _, m := range r.Report.Regression.Metrics {
		v := verdictText{Regressed: m.Regressed, Text: m.Metric + ": no regression"}
		if m.Regressed {
			v.Text = m.Metric + ": regressed"
		}
		change := math.Round(1000*m.P99Change) / 10
		v.Text += fmt.Sprintf(" (p99 %+.1f %% vs %d earlier runs)", change+0, r.Report.Regression.EarlierRuns) // +0: no "-0.0"
		out = append(out, v)
	}
	return out
}

// landingPage serves the toolkit's landing page with the targets' errors
// in it, as they are at each request.
func (d *Daemon) landingPage(toolkit http.Handler, burstAPI BurstAPIOptions) (http.Handler, error) {
	var page pageBuffer
	toolkit.ServeHTTP(&page, toolkitPageRequest)
	before, after, ok := bytes.Cut(page.Bytes(), []byte(targetErrorsMark))
	if !ok {
		return nil, errors.New("the landing page has no place for the targets' errors")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		var b bytes.Buffer
		b.Write(before)
		data := d.landingData(time.Now())
		data.BurstAPI = landingBurstAPI{Enabled: burstAPI.Enabled, Token: burstAPI.Token != ""}
		data.BaseURL = "http://" + r.Host
		if r.TLS != nil {
			data.BaseURL = "https://" + r.Host
		}
		if err := targetErrorsHTML.Execute(&b, data); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		b.Write(after)
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		_, _ = w.Write(b.Bytes())
	}), nil
}

// toolkitPageRequest asks the toolkit for its page.
var toolkitPageRequest = &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/"}}

// pageBuffer keeps what a handler writes.
type pageBuffer struct {
	bytes.Buffer
	header http.Header
}

func (p *pageBuffer) Header() http.Header {
	if p.header == nil {
		p.header = http.Header{}
	}
	return p.header
}

func (*pageBuffer) WriteHeader(int) {}
