package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// fakeControl keeps bursts and runs in memory with the rules the API relies
// on: unknown names, bursts that are not on demand, one run per target.
type fakeControl struct {
	mu        sync.Mutex
	bursts    []BurstInfo
	runs      []RunInfo
	overrides []BurstOverrides // what each trigger received
	closed    bool             // the daemon is shutting down
}

func newFakeControl() *fakeControl {
	return &fakeControl{
		bursts: []BurstInfo{
			{Name: "load", Target: "gpu-a", OnDemand: true},
			{Name: "nightly", Target: "gpu-b", Schedule: "every 24h"},
			{Name: "runs", Target: "gpu-c", OnDemand: true},
		},
		runs: []RunInfo{{ID: "done-1", Burst: "nightly", Target: "gpu-b", Trigger: TriggerSchedule, State: RunSucceeded}},
	}
}

func (f *fakeControl) Bursts() []BurstInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]BurstInfo(nil), f.bursts...)
}

func (f *fakeControl) TriggerBurst(name string, o BurstOverrides) (RunInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return RunInfo{}, errShuttingDown
	}
	for _, b := range f.bursts {
		if b.Name != name {
			continue
		}
		if !b.OnDemand {
			return RunInfo{}, ErrNotOnDemand
		}
		for _, r := range f.runs {
			if r.Target == b.Target && r.State == RunRunning {
				return RunInfo{}, &BusyError{Target: b.Target, RunID: r.ID}
			}
		}
		f.overrides = append(f.overrides, o)
		run := RunInfo{ID: fmt.Sprintf("run-%d", len(f.runs)), Burst: name, Target: b.Target, Trigger: TriggerAPI, State: RunRunning, Overrides: o}
		f.runs = append(f.runs, run)
		return run, nil
	}
	return RunInfo{}, ErrUnknownBurst
}

func (f *fakeControl) BurstRun(id string) (RunInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.runs {
		if r.ID == id {
			return r, true
		}
	}
	return RunInfo{}, false
}

func (f *fakeControl) CancelBurst(id string) (RunInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.runs {
		if r.ID != id {
			continue
		}
		if r.State != RunRunning {
			return r, ErrRunFinished
		}
		f.runs[i].State = RunCancelled
		return f.runs[i], nil
	}
	return RunInfo{}, ErrUnknownRun
}

func (f *fakeControl) BurstRuns() []RunInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]RunInfo(nil), f.runs...)
}

func (f *fakeControl) BurstArtifacts(id string) ([]string, error) {
	if _, ok := f.BurstRun(id); !ok {
		return nil, ErrUnknownRun
	}
	return nil, nil
}

func (f *fakeControl) BurstArtifact(id, _ string) (*Artifact, error) {
	if _, ok := f.BurstRun(id); !ok {
		return nil, ErrUnknownRun
	}
	return nil, ErrNoArtifact
}

// apiRequest is one call in a test.
type apiRequest struct {
	method, path, body string
	header             http.Header
}

// do sends req to h and returns the response with its body read.
func (req apiRequest) do(t *testing.T, h http.Handler) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if req.body != "" {
		body = strings.NewReader(req.body)
	}
	r := httptest.NewRequest(req.method, req.path, body)
	for k, v := range req.header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	resp := w.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestBurstAPIStatusCodes(t *testing.T) {
	enabled := BurstAPIOptions{Enabled: true}
	trigger := apiRequest{method: http.MethodPost, path: "/api/v1/bursts/load"}
	for _, c := range []struct {
		name       string
		opts       BurstAPIOptions
		closed     bool         // the daemon is shutting down
		before     []apiRequest // sent first, answers ignored
		req        apiRequest
		wantStatus int
		wantHeader map[string]string
		wantBody   string // substring of the body
	}{
		{name: "list", opts: enabled, req: apiRequest{method: "GET", path: "/api/v1/bursts"},
			wantStatus: 200, wantBody: `"bursts":[{"name":"load"`},
		{name: "list has runs", opts: enabled, req: apiRequest{method: "GET", path: "/api/v1/bursts"},
			wantStatus: 200, wantBody: `"runs":[{"id":"done-1"`},
		{name: "history", opts: enabled, req: apiRequest{method: "GET", path: "/api/v1/bursts/runs"},
			wantStatus: 200, wantBody: `{"runs":[{"id":"done-1"`},
		{name: "trigger", opts: enabled, req: trigger, wantStatus: 202,
			wantHeader: map[string]string{"Location": "/api/v1/bursts/runs/run-1", "Content-Type": "application/json"},
			wantBody:   `{"id":"run-1","status_url":"/api/v1/bursts/runs/run-1"}`},
		{name: "trigger a burst named runs", opts: enabled, req: apiRequest{method: "POST", path: "/api/v1/bursts/runs"},
			wantStatus: 202, wantBody: `"id":"run-1"`},
		{name: "unknown burst", opts: enabled, req: apiRequest{method: "POST", path: "/api/v1/bursts/nope"},
			wantStatus: 404, wantBody: `no burst named \"nope\" is configured; GET /api/v1/bursts lists them`},
		{name: "not on demand", opts: enabled, req: apiRequest{method: "POST", path: "/api/v1/bursts/nightly"},
			wantStatus: 403, wantBody: "set on_demand: true"},
		{name: "busy names the running run", opts: enabled, before: []apiRequest{trigger}, req: trigger,
			wantStatus: 409, wantBody: `"running":"run-1"`},
		{name: "shutting down", opts: enabled, closed: true, req: trigger,
			wantStatus: 503, wantBody: "shutting down"},
		{name: "get run", opts: enabled, req: apiRequest{method: "GET", path: "/api/v1/bursts/runs/done-1"},
			wantStatus: 200, wantBody: `"state":"succeeded"`},
		{name: "get unknown run", opts: enabled, req: apiRequest{method: "GET", path: "/api/v1/bursts/runs/nope"},
			wantStatus: 404, wantBody: `no run \"nope\"`},
		{name: "cancel", opts: enabled, before: []apiRequest{trigger}, req: apiRequest{method: "DELETE", path: "/api/v1/bursts/runs/run-1"},
			wantStatus: 200, wantBody: `"state":"cancelled"`},
		{name: "cancel unknown run", opts: enabled, req: apiRequest{method: "DELETE", path: "/api/v1/bursts/runs/nope"},
			wantStatus: 404, wantBody: `"error":`},
		{name: "cancel finished run", opts: enabled, req: apiRequest{method: "DELETE", path: "/api/v1/bursts/runs/done-1"},
			wantStatus: 409, wantBody: "already finished"},
		{name: "unknown path", opts: enabled, req: apiRequest{method: "GET", path: "/api/v1/bursts/a/b"},
			wantStatus: 404, wantBody: "no such burst API path"},
		{name: "trailing slash", opts: enabled, req: apiRequest{method: "POST", path: "/api/v1/bursts/"},
			wantStatus: 404, wantBody: "no such burst API path"},
		{name: "GET a burst", opts: enabled, req: apiRequest{method: "GET", path: "/api/v1/bursts/load"},
			wantStatus: 405, wantHeader: map[string]string{"Allow": "POST"}, wantBody: "use POST"},
		{name: "POST the list", opts: enabled, req: apiRequest{method: "POST", path: "/api/v1/bursts"},
			wantStatus: 405, wantHeader: map[string]string{"Allow": "GET"}},
		{name: "DELETE the history", opts: enabled, req: apiRequest{method: "DELETE", path: "/api/v1/bursts/runs"},
			wantStatus: 405, wantHeader: map[string]string{"Allow": "GET, POST"}},
		{name: "PUT a run", opts: enabled, req: apiRequest{method: "PUT", path: "/api/v1/bursts/runs/done-1"},
			wantStatus: 405, wantHeader: map[string]string{"Allow": "GET, DELETE"}},
		{name: "cross-site trigger", opts: enabled,
			req:        apiRequest{method: "POST", path: "/api/v1/bursts/load", header: http.Header{"Sec-Fetch-Site": {"cross-site"}}},
			wantStatus: 403, wantBody: "cross-origin request refused"},
		{name: "cross-site read", opts: enabled,
			req:        apiRequest{method: "GET", path: "/api/v1/bursts", header: http.Header{"Sec-Fetch-Site": {"cross-site"}}},
			wantStatus: 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctl := newFakeControl()
			ctl.closed = c.closed
			h := NewBurstAPI(ctl, c.opts, discardLogger())
			for _, b := range c.before {
				b.do(t, h)
			}
			resp, body := c.req.do(t, h)
			if resp.StatusCode != c.wantStatus {
				t.Fatalf("%s %s: status %d, want %d; body %s", c.req.method, c.req.path, resp.StatusCode, c.wantStatus, body)
			}
			for k, v := range c.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if !strings.Contains(body, c.wantBody) {
				t.Errorf("body %s, want it to contain %s", body, c.wantBody)
			}
			if !json.Valid([]byte(body)) {
				t.Errorf("body is not JSON: %s", body)
			}
		})
	}
}

// Every path answers 403 while the API is off, whatever the method.
func TestBurstAPIDisabled(t *testing.T) {
	h := NewBurstAPI(newFakeControl(), BurstAPIOptions{}, discardLogger())
	for _, req := range []apiRequest{
		{method: "GET", path: "/api/v1/bursts"},
		{method: "POST", path: "/api/v1/bursts/load"},
		{method: "GET", path: "/api/v1/bursts/runs"},
		{method: "GET", path: "/api/v1/bursts/runs/done-1"},
		{method: "DELETE", path: "/api/v1/bursts/runs/done-1"},
		{method: "PATCH", path: "/api/v1/bursts/a/b"},
	} {
		resp, body := req.do(t, h)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "--web.enable-burst-api") {
			t.Errorf("%s %s: %d %s, want 403 naming --web.enable-burst-api", req.method, req.path, resp.StatusCode, body)
		}
	}
}

func TestBurstAPIBearerToken(t *testing.T) {
	const token = "s3cret-t0ken"
	for _, c := range []struct {
		name          string
		authorization string
		wantStatus    int
		wantChallenge string
	}{
		{"no header", "", 401, `Bearer realm="inferprobe burst API"`},
		{"basic instead", "Basic dXNlcjpwYXNz", 401, `Bearer realm="inferprobe burst API"`},
		{"empty token", "Bearer ", 401, `Bearer realm="inferprobe burst API"`},
		{"wrong token", "Bearer s3cret-t0keN", 401, `error="invalid_token"`},
		{"prefix of the token", "Bearer s3cret", 401, `error="invalid_token"`},
		{"token", "Bearer " + token, 202, ""},
		{"scheme is case-insensitive", "bearer " + token, 202, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := NewBurstAPI(newFakeControl(), BurstAPIOptions{Enabled: true, Token: token}, discardLogger())
			req := apiRequest{method: "POST", path: "/api/v1/bursts/load", header: http.Header{}}
			if c.authorization != "" {
				req.header.Set("Authorization", c.authorization)
			}
			resp, body := req.do(t, h)
			if resp.StatusCode != c.wantStatus {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, c.wantStatus, body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); !strings.Contains(got, c.wantChallenge) || (c.wantChallenge == "") != (got == "") {
				t.Errorf("WWW-Authenticate %q, want %q", got, c.wantChallenge)
			}
			if strings.Contains(body, token) {
				t.Errorf("the token is echoed in the body: %s", body)
			}
		})
	}
}

func TestBurstAPIRateLimit(t *testing.T) {
	ctl := newFakeControl()
	// A burst per target so that triggers do not collide with 409s.
	for i := range TriggerBurst + 1 {
		ctl.bursts = append(ctl.bursts, BurstInfo{Name: fmt.Sprint("b", i), Target: fmt.Sprint("t", i), OnDemand: true})
	}
	h := NewBurstAPI(ctl, BurstAPIOptions{Enabled: true, TriggerInterval: time.Minute}, discardLogger())
	post := func(name string) (*http.Response, string) {
		return apiRequest{method: "POST", path: "/api/v1/bursts/" + name}.do(t, h)
	}
	// Refused triggers start nothing, so they do not spend the limit.
	for range 2 * TriggerBurst {
		if resp, body := post("nope"); resp.StatusCode != 404 {
			t.Fatalf("unknown burst: %d %s", resp.StatusCode, body)
		}
	}
	for i := range TriggerBurst {
		if resp, body := post(fmt.Sprint("b", i)); resp.StatusCode != 202 {
			t.Fatalf("trigger %d of %d allowed at once: %d %s", i+1, TriggerBurst, resp.StatusCode, body)
		}
	}
	resp, body := post(fmt.Sprint("b", TriggerBurst))
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("trigger %d: %d %s, want 429", TriggerBurst+1, resp.StatusCode, body)
	}
	retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || retry < 59 || retry > 60 {
		t.Errorf("Retry-After %q, want about 60 seconds (one token per minute)", resp.Header.Get("Retry-After"))
	}
	if !strings.Contains(body, "--web.burst-api.rate-limit") {
		t.Errorf("429 body %s does not say which flag sets the limit", body)
	}
	if got := len(ctl.BurstRuns()); got != 1+TriggerBurst {
		t.Errorf("%d runs, want %d: the rate-limited trigger reached the control", got, 1+TriggerBurst)
	}
	// A refused attempt after the limit does not push the wait further out.
	resp, _ = post(fmt.Sprint("b", TriggerBurst))
	if again, _ := strconv.Atoi(resp.Header.Get("Retry-After")); again > retry {
		t.Errorf("Retry-After grew from %d to %d: refused triggers spent tokens", retry, again)
	}
}

// failingControl answers a trigger with a rate override with a run that
// failed to start, as the daemon does for a rate on a closed loop.
type failingControl struct{ *fakeControl }

func (f failingControl) TriggerBurst(name string, o BurstOverrides) (RunInfo, error) {
	if o.Rate > 0 {
		return RunInfo{ID: "failed-" + name, Burst: name, State: RunFailed, Error: "no arrival rate to override"}, nil
	}
	return f.fakeControl.TriggerBurst(name, o)
}

// A run that failed to start sent nothing, so it does not spend the limit:
// "start with a bad override, fix it, start again" must not be refused.
func TestBurstAPIRateLimitFailedRuns(t *testing.T) {
	ctl := failingControl{newFakeControl()}
	for i := range TriggerBurst {
		ctl.bursts = append(ctl.bursts, BurstInfo{Name: fmt.Sprint("b", i), Target: fmt.Sprint("t", i), OnDemand: true})
	}
	h := NewBurstAPI(ctl, BurstAPIOptions{Enabled: true, TriggerInterval: time.Hour}, discardLogger())
	for range 2 * TriggerBurst {
		if resp, body := (apiRequest{method: "POST", path: "/api/v1/bursts/load", body: `{"rate":5}`}).do(t, h); resp.StatusCode != http.StatusAccepted || !strings.Contains(body, `"id":"failed-load"`) {
			t.Fatalf("trigger of a run that fails to start: %d %s, want 202 naming the failed run", resp.StatusCode, body)
		}
	}
	for i := range TriggerBurst {
		if resp, body := (apiRequest{method: "POST", path: fmt.Sprint("/api/v1/bursts/b", i)}).do(t, h); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("trigger %d of %d after failed runs: %d %s, want 202: failed runs spent the limit", i+1, TriggerBurst, resp.StatusCode, body)
		}
	}
	if resp, _ := (apiRequest{method: "POST", path: "/api/v1/bursts/load"}).do(t, h); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("trigger %d: %d, want 429: runs that start still spend the limit", TriggerBurst+1, resp.StatusCode)
	}
}

func TestBurstAPIOverrides(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       BurstOverrides
		wantStatus int
		wantError  string
	}{
		{name: "no body", wantStatus: 202},
		{name: "empty object", body: `{}`, wantStatus: 202},
		{name: "all", body: `{"duration":"30s","requests":100,"rate":5,"concurrency":8}`, wantStatus: 202,
			want: BurstOverrides{Duration: 30 * time.Second, Requests: 100, Rate: 5, Concurrency: 8}},
		{name: "values above the max pass through to be lowered", body: `{"requests":1000000000,"rate":100000}`, wantStatus: 202,
			want: BurstOverrides{Requests: 1000000000, Rate: 100000}},
		{name: "requests out of range", body: `{"requests":18446744073709551615}`, wantStatus: 400,
			wantError: "is out of range: must be 1 to 1,000,000,000 requests"},
		{name: "requests asked by mistake", body: `{"requests":99999999999}`, wantStatus: 400,
			wantError: "requests 99999999999 is out of range: must be 1 to 1,000,000,000 requests"},
		{name: "rate out of range", body: `{"rate":1e9}`, wantStatus: 400, wantError: "rate 1000000000 is out of range: must be 0 to 100,000 requests/s"},
		{name: "concurrency out of range", body: `{"concurrency":100000000}`, wantStatus: 400, wantError: "concurrency 100000000 is out of range: must be 1 to 100,000 requests"},
		{name: "duration out of range", body: `{"duration":"10000h"}`, wantStatus: 400, wantError: "duration 10000h0m0s is out of range: must be 0s to 720h0m0s"},
		{name: "zero requests", body: `{"requests":0}`, wantStatus: 400, wantError: "requests 0: must be ≥ 1; leave it out to keep the burst's own"},
		{name: "zero duration", body: `{"duration":"0s"}`, wantStatus: 400, wantError: "duration 0s: must be > 0; leave it out to keep the burst's own"},
		{name: "zero rate", body: `{"rate":0}`, wantStatus: 400, wantError: "rate 0: must be > 0"},
		{name: "zero concurrency", body: `{"concurrency":0}`, wantStatus: 400, wantError: "concurrency 0: must be ≥ 1"},
		{name: "null keeps the burst's own", body: `{"requests":null}`, wantStatus: 202},
		{name: "unknown field", body: `{"url":"http://evil.example/v1"}`, wantStatus: 400, wantError: `unknown field \"url\"`},
		{name: "bad duration", body: `{"duration":"soon"}`, wantStatus: 400, wantError: "duration"},
		{name: "duration as a number", body: `{"duration":30}`, wantStatus: 400, wantError: "duration"},
		{name: "negative duration", body: `{"duration":"-1s"}`, wantStatus: 400, wantError: "duration -1s: must be > 0"},
		{name: "negative requests", body: `{"requests":-1}`, wantStatus: 400, wantError: "requests"},
		{name: "negative rate", body: `{"rate":-5}`, wantStatus: 400, wantError: "rate -5: must be > 0"},
		{name: "negative concurrency", body: `{"concurrency":-1}`, wantStatus: 400, wantError: "concurrency -1: must be ≥ 1"},
		{name: "not JSON", body: `rate=5`, wantStatus: 400, wantError: "bad overrides"},
		{name: "two values", body: `{} {}`, wantStatus: 400, wantError: "more than one JSON value"},
		{name: "over 4 KiB", body: `{"duration":"` + strings.Repeat("1", maxBurstBody) + `s"}`, wantStatus: 413, wantError: "over 4096 bytes"},
		{name: "over 4 KiB after a value", body: `{}` + strings.Repeat(" ", maxBurstBody), wantStatus: 413, wantError: "over 4096 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctl := newFakeControl()
			h := NewBurstAPI(ctl, BurstAPIOptions{Enabled: true}, discardLogger())
			resp, body := apiRequest{method: "POST", path: "/api/v1/bursts/load", body: c.body}.do(t, h)
			if resp.StatusCode != c.wantStatus || !strings.Contains(body, c.wantError) {
				t.Fatalf("%d %s, want %d containing %q", resp.StatusCode, body, c.wantStatus, c.wantError)
			}
			if c.wantStatus != 202 {
				if len(ctl.overrides) != 0 {
					t.Errorf("a refused body still triggered a run with %+v", ctl.overrides)
				}
				return
			}
			if len(ctl.overrides) != 1 || ctl.overrides[0] != c.want {
				t.Errorf("control got %+v, want [%+v]", ctl.overrides, c.want)
			}
		})
	}
}

// One line per call with who did what and how it ended, reads at debug
// level; never the secrets.
func TestBurstAPIAuditLog(t *testing.T) {
	const token = "audit-token-93f1"
	var logs bytes.Buffer
	h := NewBurstAPI(newFakeControl(), BurstAPIOptions{Enabled: true, Token: token}, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	bearer := http.Header{"Authorization": {"Bearer " + token}}
	calls := []struct {
		req  apiRequest
		want map[string]any
	}{
		{apiRequest{method: "POST", path: "/api/v1/bursts/load", header: bearer},
			map[string]any{"level": "INFO", "method": "POST", "path": "/api/v1/bursts/load", "burst": "load", "run": "run-1", "status": 202.0, "principal": "bearer"}},
		{apiRequest{method: "DELETE", path: "/api/v1/bursts/runs/run-1", header: bearer},
			map[string]any{"method": "DELETE", "run": "run-1", "status": 200.0, "principal": "bearer"}},
		{apiRequest{method: "POST", path: "/api/v1/bursts/load", header: http.Header{"Authorization": {"Bearer wrong-" + token}}},
			map[string]any{"burst": nil, "status": 401.0, "principal": "anonymous"}},
		{apiRequest{method: "GET", path: "/api/v1/bursts", header: http.Header{"Authorization": {"Basic YWxpY2U6aHVudGVyMg=="}}}, // alice:hunter2
			map[string]any{"level": "DEBUG", "status": 401.0, "principal": "unverified:alice"}},
		{apiRequest{method: "GET", path: "/api/v1/bursts/runs/run-1", header: bearer},
			map[string]any{"level": "DEBUG", "method": "GET", "run": "run-1", "status": 200.0}},
	}
	for _, c := range calls {
		c.req.do(t, h)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != len(calls) {
		t.Fatalf("%d log lines for %d calls:\n%s", len(lines), len(calls), logs.String())
	}
	for i, c := range calls {
		var got map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatal(err)
		}
		if got["remote"] != "192.0.2.1:1234" { // httptest's client address
			t.Errorf("line %d: remote %v", i, got["remote"])
		}
		for k, want := range c.want {
			if got[k] != want {
				t.Errorf("line %d: %s = %v, want %v\n%s", i, k, got[k], want, lines[i])
			}
		}
	}
	for _, secret := range []string{token, "hunter2", "YWxpY2U6aHVudGVyMg=="} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the audit log contains the secret %q:\n%s", secret, logs.String())
		}
	}
}

func TestReadTokenFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, c := range []struct {
		name, path, want, wantErr string
	}{
		{name: "trimmed", path: write("ok", "  tok3n\n"), want: "tok3n"},
		{name: "empty", path: write("empty", " \n\t"), wantErr: "is empty; write a token"},
		{name: "missing", path: filepath.Join(dir, "missing"), wantErr: "no such file"},
		{name: "directory", path: dir, wantErr: "not a regular file"},
		{name: "too big", path: write("big", strings.Repeat("x", maxTokenFile+1)), wantErr: "over the 65536-byte limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadTokenFile(c.path)
			if c.wantErr == "" {
				if err != nil || got != c.want {
					t.Fatalf("ReadTokenFile = %q, %v; want %q", got, err, c.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

// A DELETE that comes after the run has taken its result, but before it has
// left the running list, cancels nothing: it answers 409 like any DELETE of
// an ended run, not 200 with a run that succeeded.
func TestBurstAPICancelRunThatJustEnded(t *testing.T) {
	d := New(discardLogger(), prometheus.NewRegistry(), nil, nil)
	m := d.bursts
	r := &burstRun{entry: &burstEntry{name: "b"}, done: make(chan struct{}), ended: true,
		stop: func() { t.Error("the ended run was stopped") }, cancelRq: func() { t.Error("the ended run's requests were cut") },
		info: RunInfo{ID: "ending-1", Burst: "b", Target: "t", State: RunRunning}}
	m.active = append(m.active, r)
	h := NewBurstAPI(d, BurstAPIOptions{Enabled: true}, discardLogger())
	resp, body := apiRequest{method: "DELETE", path: "/api/v1/bursts/runs/ending-1"}.do(t, h)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "already finished") {
		t.Errorf("DELETE of a run that has just ended: %d %s, want 409", resp.StatusCode, body)
	}
	if r.cancelled {
		t.Error("the run was marked cancelled after its result was taken")
	}
}

// Polling a run logs nothing at info level.
func TestBurstAPIReadsQuiet(t *testing.T) {
	var logs bytes.Buffer
	h := NewBurstAPI(newFakeControl(), BurstAPIOptions{Enabled: true}, slog.New(slog.NewJSONHandler(&logs, nil)))
	for range 3 {
		apiRequest{method: "GET", path: "/api/v1/bursts"}.do(t, h)
		apiRequest{method: "GET", path: "/api/v1/bursts/runs"}.do(t, h)
	}
	if logs.Len() > 0 {
		t.Errorf("reads logged at info level:\n%s", logs.String())
	}
}

// With basic_auth_users configured, exporter-toolkit has checked the user
// name before the API runs, and the audit log names it as is.
func TestBurstAPIAuditVerifiedUser(t *testing.T) {
	var logs bytes.Buffer
	h := NewBurstAPI(newFakeControl(), BurstAPIOptions{Enabled: true, BasicAuth: true}, slog.New(slog.NewJSONHandler(&logs, nil)))
	apiRequest{method: "POST", path: "/api/v1/bursts/load", header: http.Header{"Authorization": {"Basic YWxpY2U6aHVudGVyMg=="}}}.do(t, h)
	if !strings.Contains(logs.String(), `"principal":"alice"`) {
		t.Errorf("audit line does not name the verified user:\n%s", logs.String())
	}
}
