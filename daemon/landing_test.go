package daemon_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/simulator"
)

// TestLandingPageProbes: the landing page lists every probe with its target, model, last
// success, error ratio over the last five minutes and the client's saturation verdict, in
// HTML the server renders (no script).
func TestLandingPageProbes(t *testing.T) {
	sim, err := simulator.New(simulator.Config{Profile: simulator.Profile{TTFT: time.Millisecond, ITL: time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	simSrv := httptest.NewServer(sim.Handler())
	defer simSrv.Close()
	// A port that refuses connections: every request of the broken probe fails.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	ld := &loader{}
	ld.set(strings.NewReplacer("SIM", simSrv.URL, "CLOSED", closed).Replace(`
targets:
  sim: {url: SIM/v1, model: inferprobe-simulator}
  down: {url: http://CLOSED/v1, model: gone}
probes:
  steady:
    target: sim
    arrival: {pattern: constant, rate: 50}
    dataset: {synthetic: {input_tokens: {mean: 8}, output_tokens: {mean: 4}}}
  broken:
    target: down
    arrival: {pattern: constant, rate: 50}
    dataset: {synthetic: {input_tokens: {mean: 8}, output_tokens: {mean: 4}}}
`), nil)
	d := daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, prober.NewClient())
	h, err := d.Handler(false, daemon.BurstAPIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	start(t, d)

	row := func(body, probe string) string {
		return regexp.MustCompile(`<tr><td>` + probe + `</td>.*</tr>`).FindString(body)
	}
	// TTFT and ITL p50 / p99 of the simulator's 1 ms each, as the page writes milliseconds.
	withLatencies := regexp.MustCompile(`<td>0\.0 % \(0 of \d+\)</td><td>(\d+\.\d+) ms / (\d+\.\d+) ms</td><td>(\d+\.\d+) ms / (\d+\.\d+) ms</td>`)
	var body string
	// Until a stream's tokens arrive apart, there is no ITL to show: on a loaded machine (the
	// race detector, CI's parallel packages) the first requests' tokens may be read together.
	waitFor(t, "both probes to have requests on the landing page, steady's with TTFT and ITL", func() bool {
		_, _, body = get(t, http.MethodGet, srv.URL+"/", nil)
		return withLatencies.MatchString(row(body, "steady")) && strings.Contains(row(body, "broken"), "100.0 %")
	})
	steady, broken := row(body, "steady"), row(body, "broken")
	if latencies := withLatencies.FindStringSubmatch(steady); latencies != nil {
		// TTFT cannot be shorter than the simulator's wait; ITL can: on a loaded machine
		// (the race detector, CI's parallel packages) the tokens of a stream are read together.
		for i, v := range latencies[1:] {
			low := 0.5
			if i >= 2 {
				low = 0
			}
			if ms, _ := strconv.ParseFloat(v, 64); ms < low || ms > 1000 {
				t.Errorf("steady's latency %d is %s ms; the simulator answers in about 1 ms", i, v)
			}
		}
	}
	for _, want := range []string{"<td>sim</td>", "<td>inferprobe-simulator</td>", "<td>0.0 % (0 of ", "<td>not saturated</td>"} {
		if !strings.Contains(steady, want) {
			t.Errorf("steady's row lacks %q: %s", want, steady)
		}
	}
	for _, want := range []string{"<td>down</td>", "<td>gone</td>", "none yet", `<td class="failing">100.0 % (`, "<td>none</td><td>none</td>"} {
		if !strings.Contains(broken, want) {
			t.Errorf("broken's row lacks %q: %s", want, broken)
		}
	}
	// The demo's live lines say the same, one a probe.
	lines := d.LiveLines(time.Now())
	wantLines := []*regexp.Regexp{
		regexp.MustCompile(`^\d\d:\d\d:\d\d broken → down: errors 100\.0 % \((\d+) of (\d+), last 5 min\)$`),
		regexp.MustCompile(`^\d\d:\d\d:\d\d steady → sim: TTFT p50 \d+\.\d+ ms, p99 \d+\.\d+ ms; ITL p50 \d+\.\d+ ms; errors 0\.0 % \(0 of \d+, last 5 min\)$`),
	}
	if len(lines) != len(wantLines) {
		t.Fatalf("live lines %q, want one a probe", lines)
	}
	for i, re := range wantLines {
		if !re.MatchString(lines[i]) {
			t.Errorf("live line %q does not match %s", lines[i], re)
		}
	}
	var live syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.WriteLive(ctx, &live, time.Millisecond); close(done) }()
	waitFor(t, "WriteLive to write both probes' lines", func() bool {
		s := live.String()
		return strings.Contains(s, " steady → sim: TTFT p50 ") && strings.Contains(s, " broken → down: errors ")
	})
	cancel()
	<-done

	if strings.Contains(strings.ToLower(body), "<script") {
		t.Error("the landing page carries a script; it is meant to be plain server-side HTML")
	}
}

// TestLandingPageBurstLink: the page links to /api/v1/bursts only when the burst API is on
// (off, that path answers 403). With a token, which a browser's click cannot send (the API
// answers it 401), the link goes to the page's own section that shows how to call the API
// with the token, and the token itself is on no page.
func TestLandingPageBurstLink(t *testing.T) {
	ld := &loader{}
	ld.set("targets: {}\nprobes: {}\n", nil)
	d := daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, prober.NewClient())
	const token = "not-a-real-token"
	for _, c := range []struct {
		name     string
		opts     daemon.BurstAPIOptions
		link     string // "" for none
		apiCode  int    // what following /api/v1/bursts from a browser answers
		sections []string
	}{
		{"off", daemon.BurstAPIOptions{}, "", http.StatusForbidden, nil},
		{"on", daemon.BurstAPIOptions{Enabled: true}, `href="/api/v1/bursts"`, http.StatusOK,
			[]string{`<h3 id="burst-api">`, "curl -X POST http://example.com/api/v1/bursts/BURST"}},
		{"token", daemon.BurstAPIOptions{Enabled: true, Token: token}, `href="/#burst-api"`, http.StatusUnauthorized,
			[]string{`<h3 id="burst-api">`, "needs the bearer token", `curl -H "Authorization: Bearer $TOKEN" http://example.com/api/v1/bursts`,
				`-O http://example.com/api/v1/bursts/runs/RUN/report.html`}},
	} {
		h, err := d.Handler(false, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://example.com/", nil))
		body := rec.Body.String()
		for _, link := range []string{`href="/api/v1/bursts"`, `href="/#burst-api"`} {
			if got := strings.Contains(body, link); got != (link == c.link) {
				t.Errorf("%s: the page has %s: %v, want %v", c.name, link, got, link == c.link)
			}
		}
		for _, want := range c.sections {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the page lacks %q", c.name, want)
			}
		}
		if c.sections == nil && strings.Contains(body, `id="burst-api"`) {
			t.Errorf("%s: the page has a burst API section", c.name)
		}
		if strings.Contains(body, token) {
			t.Errorf("%s: the page shows the token", c.name)
		}
		// What a browser's click on the API's address gets: a GET without credentials.
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://example.com/api/v1/bursts", nil))
		if rec.Code != c.apiCode {
			t.Errorf("%s: GET /api/v1/bursts from a browser answers %d, want %d", c.name, rec.Code, c.apiCode)
		}
	}
}
