package daemon_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
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

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFailuresAPersonCanSee: a target that fails every request is logged
// once per target × reason, even at debug level, with the server's message
// and without the key it echoes; /api/v1/status and the landing page show
// the last error; the recovery is logged once, and steady success logs
// nothing more.
func TestFailuresAPersonCanSee(t *testing.T) {
	const key = "sk-daemon-planted-key"
	var healthy atomic.Bool
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		served.Add(1)
		if !healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"model is overloaded; your key `+r.Header.Get("Authorization")+` is fine"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":" a"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	logs := &syncBuffer{}
	ld := &loader{}
	ld.set(`targets:
  down: {url: `+srv.URL+`/v1, model: m, timeout: 5s, headers: {Authorization: "Bearer `+key+`"}}
probes:
  steady: {target: down, arrival: {pattern: constant, rate: 200}, dataset: {synthetic: {input_tokens: {mean: 4}, output_tokens: {mean: 2}}}}
`, nil)
	d := daemon.New(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		prometheus.NewRegistry(), ld.load, prober.NewClient())
	h, err := d.Handler(false, daemon.BurstAPIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(h)
	defer web.Close()
	start(t, d)

	count := func(msg string) int { return strings.Count(logs.String(), `msg="`+msg+`"`) }
	lastError := func() (daemon.TargetError, bool) {
		errs := status(t, web.URL).TargetErrors
		if len(errs) != 1 {
			return daemon.TargetError{}, false
		}
		return errs[0], true
	}
	waitFor(t, "20 failures", func() bool { e, ok := lastError(); return ok && e.Count >= 20 })
	e, _ := lastError()
	if e.Target != "down" || e.Reason != record.ReasonHTTP5xx || !e.Failing || e.Status != 503 || e.Scenario != "steady" ||
		!strings.Contains(e.LastError, "model is overloaded") || strings.Contains(e.LastError, key) {
		t.Errorf("status shows %+v", e)
	}
	_, _, page := get(t, http.MethodGet, web.URL+"/", nil)
	if !strings.Contains(page, "http_5xx") || !strings.Contains(page, "model is overloaded") || !strings.Contains(page, "failing since") {
		t.Errorf("the landing page does not show the error:\n%s", page)
	}
	if n := count("requests to a target are failing"); n != 1 {
		t.Errorf("%d failure lines logged for one target × reason, want 1:\n%s", n, logs)
	}

	healthy.Store(true)
	waitFor(t, "the recovery", func() bool { e, ok := lastError(); return ok && !e.Failing })
	recoveredAt := served.Load()
	waitFor(t, "20 more requests", func() bool { return served.Load() > recoveredAt+20 })
	if n := count("requests to a target succeed again"); n != 1 {
		t.Errorf("%d recovery lines logged, want 1:\n%s", n, logs)
	}
	if n := count("requests to a target are failing"); n != 1 {
		t.Errorf("%d failure lines logged after the recovery, want still 1", n)
	}
	_, _, page = get(t, http.MethodGet, web.URL+"/", nil)
	if !strings.Contains(page, "recovered at") {
		t.Errorf("the landing page does not show the recovery:\n%s", page)
	}
	for where, text := range map[string]string{"the log": logs.String(), "the landing page": page} {
		if strings.Contains(text, key) {
			t.Errorf("%s shows the key", where)
		}
	}
}
