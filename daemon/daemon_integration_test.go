package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/simulator"
)

// patience bounds every wait for something the daemon does asynchronously;
// it is a deadline against hangs, not an expectation of speed.
const patience = 10 * time.Second

// loader is a load func whose answer the test controls: the YAML it parses,
// or an error it returns.
type loader struct {
	mu   sync.Mutex
	yml  string
	err  error
	runs int
}

func (l *loader) set(yml string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.yml, l.err = yml, err
}

func (l *loader) load() (*scenarios.Config, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs++
	if l.err != nil {
		return nil, l.err
	}
	return scenarios.Parse([]byte(l.yml), "scenario.yml")
}

// fakeExec records the sequence numbers each target is sent, and holds the
// requests of gated targets until the gate opens or the request is cut.
type fakeExec struct {
	mu       sync.Mutex
	seqs     map[string][]uint64
	gates    map[string]chan struct{}
	inFlight int
}

func newFakeExec() *fakeExec {
	return &fakeExec{seqs: map[string][]uint64{}, gates: map[string]chan struct{}{}}
}

func (f *fakeExec) Do(ctx context.Context, t *prober.Target, req *prober.Request) *record.Record {
	f.mu.Lock()
	f.seqs[t.Name] = append(f.seqs[t.Name], req.Seq)
	f.inFlight++
	gate := f.gates[t.Name]
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	rec := &record.Record{
		Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(),
		Chunks: []time.Duration{time.Millisecond, 2 * time.Millisecond}, FirstOutput: 0, Duration: 3 * time.Millisecond,
		InputTokens: req.InputTokens, OutputTokens: 2, Status: 200,
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			rec.Outcome = record.OutcomeCancelled
		}
	}
	return rec
}

// gate makes target's next requests wait; the returned func lets them go.
func (f *fakeExec) gate(target string) (open func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	f.gates[target] = ch
	f.mu.Unlock()
	return sync.OnceFunc(func() {
		f.mu.Lock()
		delete(f.gates, target)
		f.mu.Unlock()
		close(ch)
	})
}

func (f *fakeExec) sent(target string) []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seqs[target])
}

func (f *fakeExec) running() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inFlight
}

// probesYAML is a scenario with one target per probe (named t<probe>), so the
// fake executor can tell the probes apart; rates are per probe.
func probesYAML(url string, rates map[string]string) string {
	var b strings.Builder
	b.WriteString("targets:\n")
	for _, p := range slices.Sorted(maps.Keys(rates)) {
		b.WriteString("  t" + p + ": {url: " + url + ", model: m, timeout: 5s}\n")
	}
	b.WriteString("probes:\n")
	for _, p := range slices.Sorted(maps.Keys(rates)) {
		b.WriteString("  " + p + ": {target: t" + p + ", arrival: {pattern: constant, rate: " + rates[p] +
			"}, dataset: {synthetic: {input_tokens: {mean: 4}, output_tokens: {mean: 2}}}}\n")
	}
	return b.String()
}

const fakeURL = "http://127.0.0.1:9/v1" // never dialled: the fake executor answers

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// start runs d until the test ends, and returns a func that stops it and
// waits for Run's result.
func start(t *testing.T, d *daemon.Daemon) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(patience):
				t.Fatalf("Run did not return within %v of its context ending", patience)
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", patience, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gauge returns the value of an unlabelled gauge in d's registry.
func gauge(t *testing.T, d *daemon.Daemon, name string) float64 {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("gauge %s not found", name)
	return 0
}

// seriesOf lists the families holding a series with scenario=probe.
func seriesOf(t *testing.T, d *daemon.Daemon, probe string) []string {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
				return l.GetName() == "scenario" && l.GetValue() == probe
			}) {
				out = append(out, mf.GetName())
				break
			}
		}
	}
	return out
}

// requestsOK is inferprobe_requests_total{scenario=probe,outcome="ok"}, or -1
// when that series is not exported.
func requestsOK(t *testing.T, d *daemon.Daemon, probe string) float64 {
	t.Helper()
	if v, ok := requestsTotal(t, d, probe, "ok"); ok {
		return v
	}
	return -1
}

// requestsTotal is inferprobe_requests_total{scenario=probe,outcome=outcome},
// and whether that series is exported.
func requestsTotal(t *testing.T, d *daemon.Daemon, probe, outcome string) (float64, bool) {
	t.Helper()
	return counter(t, d, "inferprobe_requests_total", map[string]string{"scenario": probe, "outcome": outcome})
}

// counter is the counter name whose labels include match, and whether it is exported.
func counter(t *testing.T, d *daemon.Daemon, name string, match map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if containsAll(labels, match) {
				return m.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}

func containsAll(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func status(t *testing.T, url string) daemon.Status {
	t.Helper()
	resp, err := http.Get(url + "/api/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s daemon.Status
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func get(t *testing.T, method, url string, header http.Header) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(req.Header, header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

func TestBadInitialConfig(t *testing.T) {
	ld := &loader{}
	ld.set("targets: {x: {url: http://127.0.0.1:9/v1}}\nprobes: {p: {target: y, arrival: {rate: 1}}}\n", nil)
	d := daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, newFakeExec())
	err := d.Run(context.Background()) // must return at once: nothing to run
	var errs scenarios.Errors
	if !errors.As(err, &errs) || len(errs) < 2 {
		t.Fatalf("Run = %v, want the scenario errors (missing model, undefined target)", err)
	}
	for _, want := range []string{"model", `target "y" is not defined`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if got := gauge(t, d, "inferprobe_config_last_reload_successful"); got != 0 {
		t.Errorf("config_last_reload_successful = %v after a failed load", got)
	}

	// A load func failing outright is returned as is.
	boom := errors.New("reading scenario file: permission denied")
	ld.set("", boom)
	d = daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, newFakeExec())
	if err := d.Run(context.Background()); !errors.Is(err, boom) {
		t.Errorf("Run = %v, want %v", err, boom)
	}
}

// TestReloads walks one daemon through the reloads an operator does, checking
// which probes restart, which keep their schedule, and what is exported.
func TestReloads(t *testing.T) {
	ld := &loader{}
	ld.set(probesYAML(fakeURL, map[string]string{"a": "200", "b": "200"}), nil)
	exec := newFakeExec()
	d := daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, exec)
	h, err := d.Handler(true, daemon.BurstAPIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	if code, _, _ := get(t, http.MethodGet, srv.URL+"/-/ready", nil); code != http.StatusServiceUnavailable {
		t.Errorf("/-/ready before any load: %d, want 503", code)
	}
	stop := start(t, d)
	waitFor(t, "readiness", func() bool { code, _, _ := get(t, http.MethodGet, srv.URL+"/-/ready", nil); return code == 200 })
	if s := status(t, srv.URL); !s.ReloadSuccessful || !slices.Equal(s.Probes, []string{"a", "b"}) || s.LoadedAt.IsZero() {
		t.Errorf("status after load: %+v", s)
	}
	if got := gauge(t, d, "inferprobe_config_last_reload_successful"); got != 1 {
		t.Errorf("config_last_reload_successful = %v after a good load", got)
	}
	if got := gauge(t, d, "inferprobe_probes"); got != 2 {
		t.Errorf("inferprobe_probes = %v, want 2", got)
	}
	progress := func(target string, beyond int) func() bool {
		return func() bool { return len(exec.sent(target)) > beyond }
	}
	waitFor(t, "both probes to send", func() bool { return progress("ta", 3)() && progress("tb", 3)() })

	// A failed reload changes nothing but the reload gauge and status.
	ld.set("", errors.New("scenario.yml:3:5: probes.a.arrival.rate: must be > 0"))
	if err := d.RequestReload(context.Background()); err == nil || !strings.Contains(err.Error(), "must be > 0") {
		t.Fatalf("RequestReload = %v, want the load error", err)
	}
	if got := gauge(t, d, "inferprobe_config_last_reload_successful"); got != 0 {
		t.Errorf("config_last_reload_successful = %v after a failed reload", got)
	}
	if s := status(t, srv.URL); s.ReloadSuccessful || !strings.Contains(s.LastError, "must be > 0") || !slices.Equal(s.Probes, []string{"a", "b"}) {
		t.Errorf("status after a failed reload: %+v", s)
	}
	n := len(exec.sent("ta"))
	waitFor(t, "probe a to keep sending after a failed reload", progress("ta", n+3))
	if code, _, _ := get(t, http.MethodGet, srv.URL+"/-/ready", nil); code != 200 {
		t.Errorf("/-/ready after a failed reload: %d, want 200 (the old configuration runs)", code)
	}

	// A good reload: a unchanged, b's rate changed (restart), c added.
	ld.set(probesYAML(fakeURL, map[string]string{"a": "200", "b": "100", "c": "200"}), nil)
	if err := d.RequestReload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := gauge(t, d, "inferprobe_config_last_reload_successful"); got != 1 {
		t.Errorf("config_last_reload_successful = %v after a good reload", got)
	}
	if got := gauge(t, d, "inferprobe_probes"); got != 3 {
		t.Errorf("inferprobe_probes = %v, want 3", got)
	}
	na, nb := len(exec.sent("ta")), len(exec.sent("tb"))
	waitFor(t, "all three probes to send", func() bool {
		return progress("ta", na+3)() && progress("tb", nb+3)() && progress("tc", 3)()
	})
	zeros := func(target string) int {
		n := 0
		for _, s := range exec.sent(target) {
			if s == 0 {
				n++
			}
		}
		return n
	}
	uniq := func(target string) bool {
		s := exec.sent(target)
		slices.Sort(s)
		return len(slices.Compact(slices.Clone(s))) == len(s)
	}
	if zeros("ta") != 1 || !uniq("ta") {
		t.Errorf("unchanged probe a restarted: seqs %v", exec.sent("ta"))
	}
	if zeros("tb") != 2 {
		t.Errorf("probe b, whose rate changed, started %d times, want 2 (seqs %v)", zeros("tb"), exec.sent("tb"))
	}

	// A removed probe's series go once its in-flight requests have ended.
	openC := exec.gate("tc")
	nc := len(exec.sent("tc"))
	waitFor(t, "a held request of c", func() bool { return exec.running() > 0 && len(exec.sent("tc")) > nc })
	ld.set(probesYAML(fakeURL, map[string]string{"a": "200", "b": "100"}), nil)
	if err := d.RequestReload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := status(t, srv.URL); !slices.Equal(s.Probes, []string{"a", "b"}) {
		t.Errorf("status after removing c: probes %v", s.Probes)
	}
	if got := seriesOf(t, d, "c"); !slices.Contains(got, "inferprobe_in_flight_requests") {
		t.Errorf("c's series went before its in-flight request ended: left %v", got)
	}
	openC()
	waitFor(t, "c's series to go", func() bool { return len(seriesOf(t, d, "c")) == 0 })
	if got := seriesOf(t, d, "a"); len(got) < 10 {
		t.Errorf("a's series: %v", got)
	}
	sentC := len(exec.sent("tc"))

	// Shutdown: Run returns once every probe and request has ended.
	exec.gate("ta") // hold a's requests: shutdown must cut them
	na = len(exec.sent("ta"))
	waitFor(t, "a held request of a", func() bool { return len(exec.sent("ta")) > na })
	if err := stop(); err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
	if n := exec.running(); n != 0 {
		t.Errorf("Run returned with %d requests still running", n)
	}
	after := len(exec.sent("ta")) + len(exec.sent("tb"))
	time.Sleep(50 * time.Millisecond) // several send intervals of a and b
	if got := len(exec.sent("ta")) + len(exec.sent("tb")); got != after || len(exec.sent("tc")) != sentC {
		t.Errorf("requests sent after Run returned: %d, then %d", after, got)
	}
}

// TestRemovedThenReAddedProbe: a probe removed while a request is in flight
// and added back before that request ends must keep exporting metrics. The
// removed probe's delayed Forget must not delete the series the new one writes to.
// TestShard checks that WithShard reaches the probes: replica 1 of 3 sends
// exactly the sequence numbers 1, 4, 7, … of each probe.
func TestShard(t *testing.T) {
	ld := &loader{}
	ld.set(probesYAML(fakeURL, map[string]string{"a": "200"}), nil)
	exec := newFakeExec()
	stop := start(t, daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, exec, daemon.WithShard(record.Shard{Index: 1, Count: 3})))
	waitFor(t, "requests", func() bool { return len(exec.sent("ta")) >= 10 })
	if err := stop(); err != nil { // Run returns after every request it sent has ended
		t.Fatal(err)
	}
	seqs := exec.sent("ta")
	slices.Sort(seqs)
	for k, seq := range seqs {
		if want := uint64(1 + 3*k); seq != want {
			t.Fatalf("shard 1/3 sent seqs %v, want 1, 4, 7, …", seqs)
		}
	}
}

func TestRemovedThenReAddedProbe(t *testing.T) {
	ld := &loader{}
	both := probesYAML(fakeURL, map[string]string{"a": "200", "b": "200"})
	ld.set(both, nil)
	exec := newFakeExec()
	d := daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, exec)
	start(t, d)
	waitFor(t, "b to be exported", func() bool { return requestsOK(t, d, "b") > 0 })

	openB := exec.gate("tb")
	n := len(exec.sent("tb"))
	waitFor(t, "a held request of b", func() bool { return len(exec.sent("tb")) > n })
	ld.set(probesYAML(fakeURL, map[string]string{"a": "200"}), nil)
	if err := d.RequestReload(context.Background()); err != nil {
		t.Fatal(err)
	}
	ld.set(both, nil)
	if err := d.RequestReload(context.Background()); err != nil {
		t.Fatal(err)
	}
	openB() // the removed b's last request ends: its Forget runs now

	before := requestsOK(t, d, "b")
	n = len(exec.sent("tb"))
	waitFor(t, "the new b to send more", func() bool { return len(exec.sent("tb")) > n+20 })
	waitFor(t, "the new b's requests to be counted", func() bool { return requestsOK(t, d, "b") > max(before, 0) })
}

// TestHTTPSurface runs a daemon with the real client against the simulator
// and checks its HTTP endpoints, including protobuf negotiation on /metrics.
func TestHTTPSurface(t *testing.T) {
	sim, err := simulator.New(simulator.Config{Profile: simulator.Profile{TTFT: 2 * time.Millisecond, ITL: time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	simSrv := httptest.NewServer(sim.Handler())
	defer simSrv.Close()
	good := strings.ReplaceAll(`
targets:
  sim: {url: URL/v1, model: inferprobe-simulator}
probes:
  steady:
    target: sim
    arrival: {pattern: constant, rate: 50}
    dataset: {synthetic: {input_tokens: {mean: 8}, output_tokens: {mean: 8}}}
    params: {ignore_eos: true}
    slo: {time_to_first_token: 1s}
`, "URL", simSrv.URL)

	ld := &loader{}
	ld.set(good, nil)
	d := daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, prober.NewClient())
	servers := map[bool]string{}
	for _, lifecycle := range []bool{false, true} {
		h, err := d.Handler(lifecycle, daemon.BurstAPIOptions{})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		servers[lifecycle] = srv.URL
	}
	start(t, d)
	url := servers[false]
	waitFor(t, "readiness", func() bool { code, _, _ := get(t, http.MethodGet, url+"/-/ready", nil); return code == 200 })
	if code, _, body := get(t, http.MethodGet, url+"/-/healthy", nil); code != 200 || !strings.Contains(body, "Healthy") {
		t.Errorf("/-/healthy: %d %q", code, body)
	}
	if s := status(t, url); !slices.Equal(s.Probes, []string{"steady"}) || !s.ReloadSuccessful {
		t.Errorf("status: %+v", s)
	}
	if code, _, body := get(t, http.MethodGet, url+"/", nil); code != 200 || !strings.Contains(body, "/metrics") {
		t.Errorf("landing page: %d, links to /metrics: %v", code, strings.Contains(body, "/metrics"))
	} else if strings.Contains(body, "/debug/pprof") {
		t.Error("landing page links to /debug/pprof, which is not served")
	}

	t.Run("reload", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			lifecycle bool
			method    string
			loadErr   error
			code      int
			body      string
		}{
			{"GET", true, http.MethodGet, nil, http.StatusMethodNotAllowed, "POST"},
			{"GET without lifecycle", false, http.MethodGet, nil, http.StatusMethodNotAllowed, "POST"},
			{"POST without lifecycle", false, http.MethodPost, nil, http.StatusForbidden, "--web.enable-lifecycle"},
			{"POST", true, http.MethodPost, nil, http.StatusOK, "reloaded"},
			{"PUT", true, http.MethodPut, nil, http.StatusOK, "reloaded"},
			{"POST, bad file", true, http.MethodPost, errors.New("scenario.yml:7:11: probes.steady.target: not defined"),
				http.StatusInternalServerError, "probes.steady.target: not defined"},
			{"POST, fixed file", true, http.MethodPost, nil, http.StatusOK, "reloaded"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ld.set(good, tc.loadErr)
				before := ld.runsNow()
				code, header, body := get(t, tc.method, servers[tc.lifecycle]+"/-/reload", nil)
				if code != tc.code || !strings.Contains(body, tc.body) {
					t.Errorf("%s /-/reload: %d %q, want %d containing %q", tc.method, code, body, tc.code, tc.body)
				}
				if code == http.StatusMethodNotAllowed && header.Get("Allow") == "" {
					t.Errorf("405 without an Allow header")
				}
				loads := ld.runsNow() - before
				if wantLoad := tc.code == 200 || tc.code == 500; (loads == 1) != wantLoad {
					t.Errorf("%d loads, want a load: %v", loads, wantLoad)
				}
				wantGauge := 1.0
				if tc.loadErr != nil {
					wantGauge = 0
				}
				if got := gauge(t, d, "inferprobe_config_last_reload_successful"); got != wantGauge {
					t.Errorf("config_last_reload_successful = %v, want %v", got, wantGauge)
				}
			})
		}
	})

	t.Run("metrics protobuf", func(t *testing.T) {
		waitFor(t, "a probe request to finish", func() bool { return requestsOK(t, d, "steady") > 0 })
		accept := http.Header{"Accept": {`application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3`}}
		req, _ := http.NewRequest(http.MethodGet, url+"/metrics", nil)
		req.Header = accept
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		ct := resp.Header.Get("Content-Type")
		if !strings.HasPrefix(ct, "application/vnd.google.protobuf") || !strings.Contains(ct, "proto=io.prometheus.client.MetricFamily") ||
			!strings.Contains(ct, "encoding=delimited") {
			t.Fatalf("Content-Type %q, want delimited protobuf", ct)
		}
		dec := expfmt.NewDecoder(resp.Body, expfmt.NewFormat(expfmt.TypeProtoDelim))
		found := map[string]bool{}
		for {
			var mf dto.MetricFamily
			if err := dec.Decode(&mf); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			found[mf.GetName()] = true
			if mf.GetName() != "inferprobe_time_to_first_token_seconds" {
				continue
			}
			h := mf.GetMetric()[0].GetHistogram()
			if h.GetSchema() != 5 || h.GetSampleCount() == 0 || len(h.GetPositiveSpan()) == 0 || len(h.GetBucket()) == 0 {
				t.Errorf("TTFT over protobuf: schema %d, %d samples, %d spans, %d classic buckets; want a native and classic histogram",
					h.GetSchema(), h.GetSampleCount(), len(h.GetPositiveSpan()), len(h.GetBucket()))
			}
		}
		for _, name := range []string{
			"inferprobe_time_to_first_token_seconds", "inferprobe_inter_token_latency_seconds", "inferprobe_requests_total",
			"inferprobe_good_requests_total", "inferprobe_config_last_reload_successful", "inferprobe_build_info",
			"promhttp_metric_handler_requests_total",
		} {
			if !found[name] {
				t.Errorf("/metrics over protobuf lacks %s", name)
			}
		}

		// Without the protobuf Accept header: the text format.
		_, header, body := get(t, http.MethodGet, url+"/metrics", nil)
		if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || !strings.Contains(body, "inferprobe_requests_total{") {
			t.Errorf("plain /metrics: Content-Type %q", ct)
		}
	})
}

func (l *loader) runsNow() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.runs
}

// TestReloadRefusesUnbuildable: a file whose prompts could not be built
// (this one used to answer 200 and crash the daemon a second later) is
// refused by the reload, with the field and its range, and the running
// probes go on.
func TestReloadRefusesUnbuildable(t *testing.T) {
	ld := &loader{}
	good := probesYAML(fakeURL, map[string]string{"a": "200"})
	ld.set(good, nil)
	exec := newFakeExec()
	d := daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, exec)
	start(t, d)
	waitFor(t, "probe a to send", func() bool { return len(exec.sent("ta")) > 3 })
	ld.set(strings.Replace(good, "input_tokens: {mean: 4}", "input_tokens: {mean: 99999999999999}", 1), nil)
	err := d.RequestReload(context.Background())
	if err == nil || !strings.Contains(err.Error(), "probes.a.dataset.synthetic.input_tokens.mean: must be at most 1,048,576 tokens") {
		t.Fatalf("RequestReload = %v, want the length refused with its range", err)
	}
	n := len(exec.sent("ta"))
	waitFor(t, "probe a to keep sending", func() bool { return len(exec.sent("ta")) > n+3 })
}
