package daemon_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
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
	var body string
	waitFor(t, "both probes to have requests on the landing page", func() bool {
		_, _, body = get(t, http.MethodGet, srv.URL+"/", nil)
		return strings.Contains(row(body, "steady"), " ago)") && strings.Contains(row(body, "broken"), "100.0 %")
	})
	steady, broken := row(body, "steady"), row(body, "broken")
	for _, want := range []string{"<td>sim</td>", "<td>inferprobe-simulator</td>", "<td>0.0 % (0 of ", "<td>not saturated</td>"} {
		if !strings.Contains(steady, want) {
			t.Errorf("steady's row lacks %q: %s", want, steady)
		}
	}
	for _, want := range []string{"<td>down</td>", "<td>gone</td>", "none yet", `<td class="failing">100.0 % (`} {
		if !strings.Contains(broken, want) {
			t.Errorf("broken's row lacks %q: %s", want, broken)
		}
	}
	if strings.Contains(strings.ToLower(body), "<script") {
		t.Error("the landing page carries a script; it is meant to be plain server-side HTML")
	}
}

// TestLandingPageBurstLink: the page links to /api/v1/bursts only when the burst API is on;
// off, that path answers 403.
func TestLandingPageBurstLink(t *testing.T) {
	ld := &loader{}
	ld.set("targets: {}\nprobes: {}\n", nil)
	d := daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, prober.NewClient())
	for _, enabled := range []bool{false, true} {
		h, err := d.Handler(false, daemon.BurstAPIOptions{Enabled: enabled, Token: "not-a-real-token", TriggerInterval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if linked := strings.Contains(rec.Body.String(), `href="/api/v1/bursts"`); linked != enabled {
			t.Errorf("burst API enabled %v: landing page links to it: %v", enabled, linked)
		}
	}
}
