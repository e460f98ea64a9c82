package daemon

import (
	"bytes"
	"errors"
	"html/template"
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
	"at":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"ago": func(now, t time.Time) string { return now.Sub(t).Round(time.Second).String() },
	"percent": func(part, whole int) string {
		return strconv.FormatFloat(100*float64(part)/float64(whole), 'f', 1, 64) + " %"
	},
}).Parse(`<h3>Probes</h3>
{{if .Probes}}<table class="errors"><tr><th>probe</th><th>target</th><th>model</th><th>last success</th><th>error ratio, last 5 min</th><th>client saturation</th></tr>
{{range .Probes}}<tr><td>{{.Probe}}</td><td>{{.Target}}</td><td>{{.Model}}</td><td>{{if .LastOK.IsZero}}<span class="failing">none yet</span>{{else}}{{at .LastOK}} ({{ago $.Now .LastOK}} ago){{end}}</td><td{{if .Errors}} class="failing"{{end}}>{{if .Requests}}{{percent .Errors .Requests}} ({{.Errors}} of {{.Requests}}){{else}}no requests{{end}}</td>{{if $.Saturated}}<td class="failing">saturated: {{$.Saturated}}; the figures may describe inferprobe, not the server</td>{{else}}<td>not saturated</td>{{end}}</tr>
{{end}}</table>{{else}}<p>No probe is running.</p>{{end}}
<h3>Target errors</h3>
{{if .Errors}}<table class="errors"><tr><th>target</th><th>reason</th><th>state</th><th>failures</th><th>last</th><th>in</th><th>HTTP status</th><th>last error</th></tr>
{{range .Errors}}<tr><td>{{.Target}}</td><td>{{.Reason}}</td>{{if .Failing}}<td class="failing">failing since {{at .Since}}</td>{{else}}<td>recovered at {{at .RecoveredAt}}</td>{{end}}<td>{{.Count}}</td><td>{{at .LastAt}}</td><td>{{.Scenario}}</td><td>{{if .Status}}{{.Status}}{{end}}</td><td><code>{{.LastError}}</code></td></tr>
{{end}}</table>{{else}}<p>No request has failed since inferprobe started.</p>{{end}}
{{if .Capacity}}<h3>Capacity</h3>
<table class="errors"><tr><th>search burst</th><th>target</th><th>last answer</th><th>searched</th></tr>
{{range .Capacity}}<tr><td>{{.Burst}}</td><td>{{.Target}}</td>{{if .Ended.IsZero}}<td>no search yet</td><td></td>{{else}}<td>{{.Answer}}</td><td>{{at .Ended}} ({{ago $.Now .Ended}} ago)</td>{{end}}</tr>
{{end}}</table>{{end}}`))

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
}

type capacityRow struct {
	Burst, Target, Answer string
	Ended                 time.Time // zero before the first search succeeded
}

type probeRow struct {
	Probe, Target, Model string
	LastOK               time.Time
	Requests, Errors     int
}

func (d *Daemon) landingData(now time.Time) landingData {
	d.mu.Lock()
	rows := make([]probeRow, 0, len(d.probes))
	for _, name := range sortedKeys(d.probes) {
		r := d.probes[name]
		row := probeRow{Probe: name, Target: r.labels.Target, Model: r.labels.Model}
		row.LastOK, row.Requests, row.Errors = r.summary.snapshot(now)
		rows = append(rows, row)
	}
	d.mu.Unlock()
	return landingData{Now: now, Probes: rows, Saturated: d.saturation.Verdict(), Errors: d.failures.snapshot(), Capacity: d.bursts.capacityRows()}
}

// landingPage serves the toolkit's landing page with the targets' errors
// in it, as they are at each request.
func (d *Daemon) landingPage(toolkit http.Handler) (http.Handler, error) {
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
		if err := targetErrorsHTML.Execute(&b, d.landingData(time.Now())); err != nil {
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
