package daemon

import (
	"bytes"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"time"
)

// targetErrorsMark is where the landing page shows the targets' errors: the
// toolkit renders its page once, so each request fills them in there.
const targetErrorsMark = "<!-- target errors -->"

const targetErrorsCSS = `table.errors{border-collapse:collapse}table.errors td,table.errors th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
table.errors .failing{color:#c00;font-weight:bold}`

var targetErrorsHTML = template.Must(template.New("target errors").Funcs(template.FuncMap{
	"at": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
}).Parse(`<h3>Target errors</h3>
{{if .}}<table class="errors"><tr><th>target</th><th>reason</th><th>state</th><th>failures</th><th>last</th><th>in</th><th>HTTP status</th><th>last error</th></tr>
{{range .}}<tr><td>{{.Target}}</td><td>{{.Reason}}</td>{{if .Failing}}<td class="failing">failing since {{at .Since}}</td>{{else}}<td>recovered at {{at .RecoveredAt}}</td>{{end}}<td>{{.Count}}</td><td>{{at .LastAt}}</td><td>{{.Scenario}}</td><td>{{if .Status}}{{.Status}}{{end}}</td><td><code>{{.LastError}}</code></td></tr>
{{end}}</table>{{else}}<p>No request has failed since inferprobe started.</p>{{end}}`))

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
		if err := targetErrorsHTML.Execute(&b, d.failures.snapshot()); err != nil {
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
