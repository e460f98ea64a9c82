package daemon_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/prober"
)

// TestProbingSurvivesFaults runs a daemon with the real client against a
// server that answers each request with the next fault of a cycle (the rows
// of prober's fault matrix that cost no waiting, plus a no-headers timeout
// and a good stream): the probe keeps sending and every request is counted.
func TestProbingSurvivesFaults(t *testing.T) {
	chunk := `data: {"choices":[{"index":0,"delta":{"content":" a"},"finish_reason":null}]}` + "\n\n"
	faults := []http.HandlerFunc{
		func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			io.WriteString(w, "<html>oops</html>")
		},
		func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429); io.WriteString(w, `{"error":{}}`) },
		func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, chunk+"data: {\"choices\"\n\n") },
		func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, chunk) }, // cut without [DONE]
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html></html>")
		},
		func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/x", http.StatusFound) },
		func(w http.ResponseWriter, r *http.Request) { // no headers until the client's timeout
			select {
			case <-r.Context().Done():
			case <-time.After(patience):
			}
		},
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk+chunk+"data: [DONE]\n\n")
		},
	}
	var n atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		faults[(n.Add(1)-1)%uint64(len(faults))](w, r)
	}))
	defer srv.Close()

	ld := &loader{}
	ld.set(strings.ReplaceAll(probesYAML(srv.URL+"/v1", map[string]string{"f": "100"}), "timeout: 5s", "timeout: 200ms"), nil)
	d := daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, prober.NewClient())
	start(t, d)

	total := func() float64 {
		ok, _ := requestsTotal(t, d, "f", "ok")
		bad, _ := requestsTotal(t, d, "f", "error")
		return ok + bad
	}
	waitFor(t, "every fault to be served", func() bool { return n.Load() > uint64(3*len(faults)) })
	waitFor(t, "errors and successes to be counted", func() bool {
		bad, _ := requestsTotal(t, d, "f", "error")
		return requestsOK(t, d, "f") > 0 && bad > float64(len(faults))
	})
	before := total()
	waitFor(t, "requests_total to keep rising", func() bool { return total() > before+float64(2*len(faults)) })
}
