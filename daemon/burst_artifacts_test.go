package daemon_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/simulator"
)

// simBursts is a scenario of one on-demand burst, load, against the simulator at url.
func simBursts(url string) string {
	return strings.ReplaceAll(`
targets:
  sim: {url: URL/v1, model: inferprobe-simulator}
probes:
  steady:
    target: sim
    arrival: {pattern: constant, rate: 20}
    dataset: {synthetic: {input_tokens: {mean: 8}, output_tokens: {mean: 8}}}
bursts:
  load:
    target: sim
    on_demand: true
    requests: 30
    arrival: {pattern: concurrency, concurrency: 4}
    dataset: {synthetic: {input_tokens: {mean: 8}, output_tokens: {mean: 8}}}
    params: {ignore_eos: true}
`, "URL", url)
}

func newSim(t *testing.T) string {
	t.Helper()
	sim, err := simulator.New(simulator.Config{Profile: simulator.Profile{TTFT: 5 * time.Millisecond, ITL: time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestBurstRunArtifacts: each burst run against the simulator has bench's HTML report and
// AIPerf's artifacts, downloadable from the burst API, whose figures are the run's; in
// memory, and under --storage.path, where they survive a restart. The landing page lists
// the runs with their regression verdicts and links their reports.
func TestBurstRunArtifacts(t *testing.T) {
	simURL := newSim(t)
	for _, storage := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "storage"}[storage]
		t.Run(name, func(t *testing.T) {
			dir := ""
			if storage {
				dir = t.TempDir()
			}
			d, _, stop := startBursts(t, simBursts(simURL), prober.NewClient(), daemon.WithHistory(dir, 10))
			h, err := d.Handler(false, daemon.BurstAPIOptions{Enabled: true, TriggerInterval: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			first := waitRun(t, d, trigger(t, d, "load", daemon.BurstOverrides{}).ID, daemon.RunSucceeded)
			second := waitRun(t, d, trigger(t, d, "load", daemon.BurstOverrides{}).ID, daemon.RunSucceeded)
			checkArtifacts(t, srv.URL, first)

			_, _, page := get(t, http.MethodGet, srv.URL+"/", nil)
			row := func(id string) string { return regexp.MustCompile(`<tr><td>` + id + `</td>.*</tr>`).FindString(page) }
			for _, c := range []struct {
				run  daemon.RunInfo
				want []string
			}{
				{first, []string{"no earlier run to compare with", `/api/v1/bursts/runs/` + first.ID + `/report.html`}},
				{second, []string{"time_to_first_token: ", "inter_token_latency: ", "vs 1 earlier runs", `/api/v1/bursts/runs/` + second.ID + `/report.html`}},
			} {
				r := row(c.run.ID)
				for _, w := range append(c.want, "<td>load</td>", "<td>succeeded</td>", "0.0 % (0 of 30)") {
					if !strings.Contains(r, w) {
						t.Errorf("landing page row of run %s lacks %q: %s", c.run.ID, w, r)
					}
				}
			}
			if !storage {
				return
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			d2, _, _ := startBursts(t, simBursts(simURL), prober.NewClient(), daemon.WithHistory(dir, 1))
			h2, err := d2.Handler(false, daemon.BurstAPIOptions{Enabled: true})
			if err != nil {
				t.Fatal(err)
			}
			srv2 := httptest.NewServer(h2)
			defer srv2.Close()
			checkArtifacts(t, srv2.URL, second)
			// The history keeps one run now: the older one's artifacts went with it.
			if _, err := os.Stat(filepath.Join(dir, first.ID)); !os.IsNotExist(err) {
				t.Errorf("the trimmed run's artifacts are still there: %v", err)
			}
		})
	}
}

// checkArtifacts downloads run's report and artifacts from the API at base and checks them
// against its report.
func checkArtifacts(t *testing.T, base string, run daemon.RunInfo) {
	t.Helper()
	runURL := base + "/api/v1/bursts/runs/" + run.ID
	code, hdr, page := get(t, http.MethodGet, runURL+"/report.html", nil)
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || !strings.Contains(page, "inferprobe-simulator") || !strings.Contains(page, "<svg") {
		t.Fatalf("report.html: %d %s, %d bytes", code, hdr.Get("Content-Type"), len(page))
	}
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("report.html's Content-Security-Policy %q", csp)
	}
	checkIntervals(t, runURL, run, page)
	code, _, body := get(t, http.MethodGet, runURL+"/artifacts", nil)
	var list struct {
		Files []struct{ Name, URL string }
	}
	if err := json.Unmarshal([]byte(body), &list); code != http.StatusOK || err != nil {
		t.Fatalf("artifacts list: %d %v: %s", code, err, body)
	}
	var names []string
	for _, f := range list.Files {
		names = append(names, f.Name)
	}
	for _, want := range []string{"inputs.json", "profile_export.jsonl", "profile_export_aiperf.csv", "profile_export_aiperf.json", "report.html"} {
		if !slices.Contains(names, want) {
			t.Errorf("artifacts %v lack %s", names, want)
		}
	}
	s := run.Report.Summary

	code, _, body = get(t, http.MethodGet, runURL+"/artifacts/profile_export_aiperf.json", nil)
	var js struct {
		TTFT struct {
			P50   float64 `json:"p50"`
			Count int     `json:"count"`
		} `json:"time_to_first_token"`
		RequestCount struct{ Avg float64 } `json:"request_count"`
	}
	if err := json.Unmarshal([]byte(body), &js); code != http.StatusOK || err != nil {
		t.Fatalf("profile_export_aiperf.json: %d %v", code, err)
	}
	if js.RequestCount.Avg != float64(s.OK) || js.TTFT.Count != s.TTFT.Count || math.Abs(js.TTFT.P50-1000*s.TTFT.P50) > 1e-6 {
		t.Errorf("profile_export_aiperf.json: %v requests, TTFT p50 %v ms of %d; the run: %d, %v s of %d", js.RequestCount.Avg, js.TTFT.P50, js.TTFT.Count, s.OK, s.TTFT.P50, s.TTFT.Count)
	}

	code, hdr, body = get(t, http.MethodGet, runURL+"/artifacts/profile_export.jsonl", nil)
	lines := 0
	for sc := bufio.NewScanner(strings.NewReader(body)); sc.Scan(); lines++ {
		var line struct {
			Metadata map[string]any `json:"metadata"`
			Metrics  map[string]any `json:"metrics"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Metadata["benchmark_phase"] != "profiling" || line.Metrics["time_to_first_token"] == nil {
			t.Fatalf("profile_export.jsonl line %d: %v: %s", lines+1, err, sc.Text())
		}
	}
	if code != http.StatusOK || lines != s.OK+s.Failed || !strings.Contains(hdr.Get("Content-Disposition"), "profile_export.jsonl") {
		t.Errorf("profile_export.jsonl: %d, %d lines, %q; want one line per request, %d", code, lines, hdr.Get("Content-Disposition"), s.OK+s.Failed)
	}
	code, _, body = get(t, http.MethodGet, runURL+"/artifacts/profile_export_aiperf.csv", nil)
	if code != http.StatusOK || !strings.HasPrefix(body, "Metric,avg,min,max") {
		t.Errorf("profile_export_aiperf.csv: %d: %.80s", code, body)
	}
	for path, want := range map[string]int{
		"/artifacts/..%2f" + run.ID + ".json": http.StatusNotFound, // no path but the run's own files
		"/artifacts/.hidden":                  http.StatusNotFound,
		"/artifacts/nothing.json":             http.StatusNotFound,
		"/summary.html":                       http.StatusNotFound,
	} {
		if code, _, body := get(t, http.MethodGet, runURL+path, nil); code != want {
			t.Errorf("GET %s: %d, want %d: %s", path, code, want, body)
		}
	}
	if code, _, _ := get(t, http.MethodGet, base+"/api/v1/bursts/runs/no-such-run/report.html", nil); code != http.StatusNotFound {
		t.Errorf("an unknown run's report: %d, want 404", code)
	}
}

// checkIntervals: the run's summary carries the intervals bench's report
// has, at bench's default level: in the API's record of the run, in its
// profile_export_aiperf.json and as report.html's error bars.
func checkIntervals(t *testing.T, runURL string, run daemon.RunInfo, page string) {
	t.Helper()
	s := run.Report.Summary
	ttft, thru := s.TTFT.Intervals, s.Throughputs
	if ttft == nil || thru == nil {
		t.Fatalf("the run's summary has no intervals: TTFT %+v, throughputs %+v", ttft, thru)
	}
	if ttft.Level != 0.95 || thru.Level != 0.95 || !(ttft.P50.Low <= s.TTFT.P50 && s.TTFT.P50 <= ttft.P50.High) || !ttft.P50.Bounded() ||
		!(thru.Request.Low < s.RequestThroughput && s.RequestThroughput < thru.Request.High) {
		t.Errorf("intervals: TTFT p50 %g in %+v, request throughput %g in %+v, at %g and %g; want each value inside its interval at 0.95",
			s.TTFT.P50, ttft.P50, s.RequestThroughput, thru.Request, ttft.Level, thru.Level)
	}
	code, _, body := get(t, http.MethodGet, runURL, nil)
	var rec struct {
		Report struct {
			Summary struct {
				TTFT struct {
					Intervals struct {
						Level float64   `json:"level"`
						P50   []float64 `json:"P50"`
					} `json:"intervals"`
				} `json:"time_to_first_token_seconds"`
				Throughputs struct {
					Request []float64 `json:"request_throughput"`
				} `json:"throughput_intervals"`
			} `json:"summary"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(body), &rec); code != http.StatusOK || err != nil {
		t.Fatalf("GET the run: %d %v: %s", code, err, body)
	}
	if got := rec.Report.Summary; got.TTFT.Intervals.Level != 0.95 || len(got.TTFT.Intervals.P50) != 2 || len(got.Throughputs.Request) != 2 {
		t.Errorf("the run's record in the API: %+v; want TTFT's and the throughputs' intervals", got)
	}
	code, _, body = get(t, http.MethodGet, runURL+"/artifacts/profile_export_aiperf.json", nil)
	var js struct {
		Inferprobe struct {
			Intervals struct {
				Level float64 `json:"level"`
			} `json:"confidence_intervals"`
		} `json:"inferprobe"`
	}
	if err := json.Unmarshal([]byte(body), &js); code != http.StatusOK || err != nil || js.Inferprobe.Intervals.Level != 0.95 {
		t.Errorf("profile_export_aiperf.json: %d %v, intervals at %g; want them at 0.95", code, err, js.Inferprobe.Intervals.Level)
	}
	if !strings.Contains(page, "Confidence intervals at 95.0 %") {
		t.Error("report.html has no confidence intervals")
	}
}

// TestBurstArtifactsNeedTheToken: with a token, a run's report and artifacts answer 401
// without it, as the rest of the burst API does; the landing page then sends the reader
// to how to call it instead of linking the report.
func TestBurstArtifactsNeedTheToken(t *testing.T) {
	d, _, _ := startBursts(t, simBursts(newSim(t)), prober.NewClient())
	h, err := d.Handler(false, daemon.BurstAPIOptions{Enabled: true, Token: "not-a-real-token"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	run := waitRun(t, d, trigger(t, d, "load", daemon.BurstOverrides{}).ID, daemon.RunSucceeded)
	report := srv.URL + "/api/v1/bursts/runs/" + run.ID + "/report.html"
	if code, _, _ := get(t, http.MethodGet, report, nil); code != http.StatusUnauthorized {
		t.Errorf("report.html without the token: %d, want 401", code)
	}
	if code, _, _ := get(t, http.MethodGet, report, http.Header{"Authorization": {"Bearer not-a-real-token"}}); code != http.StatusOK {
		t.Errorf("report.html with the token: %d, want 200", code)
	}
	_, _, page := get(t, http.MethodGet, srv.URL+"/", nil)
	row := regexp.MustCompile(`<tr><td>` + run.ID + `</td>.*</tr>`).FindString(page)
	if !strings.Contains(row, `<a href="#burst-api">with the token</a>`) || strings.Contains(row, "report.html") {
		t.Errorf("the run's row with a token: %s", row)
	}
}

// TestBurstArtifactsOfCancelledRuns: a run cancelled while measuring keeps the artifacts of
// what it measured, its cancelled requests included; one cancelled in its warmup measured
// nothing and keeps none.
func TestBurstArtifactsOfCancelledRuns(t *testing.T) {
	exec := newFakeExec()
	open := exec.gate("tb")
	d, _, _ := startBursts(t, burstYAML(
		"measuring: {target: tb, on_demand: true, duration: 1h, arrival: {pattern: concurrency, concurrency: 3}}",
		"warming: {target: tb, on_demand: true, duration: 1h, warmup: {requests: 2}, arrival: {pattern: concurrency, concurrency: 2}}",
	), exec)
	for _, c := range []struct {
		burst string
		lines int // of profile_export.jsonl; -1: no artifacts
	}{{"measuring", 3}, {"warming", -1}} {
		ri := trigger(t, d, c.burst, daemon.BurstOverrides{})
		waitFor(t, c.burst+"'s held requests", func() bool { return exec.running() > 0 })
		if _, err := d.CancelBurst(ri.ID); err != nil {
			t.Fatalf("cancel %s: %v", c.burst, err)
		}
		ri = waitRun(t, d, ri.ID, daemon.RunCancelled)
		names, err := d.BurstArtifacts(ri.ID)
		if err != nil {
			t.Fatal(err)
		}
		a, err := d.BurstArtifact(ri.ID, "profile_export.jsonl")
		if c.lines < 0 {
			if len(names) != 0 || !errors.Is(err, daemon.ErrNoArtifact) {
				t.Errorf("%s, cancelled in its warmup: artifacts %v (%v); want none", c.burst, names, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.burst, err)
		}
		b, _ := io.ReadAll(a.Content)
		a.Close()
		if n := strings.Count(string(b), "\n"); n != c.lines || !strings.Contains(string(b), `"was_cancelled":true`) {
			t.Errorf("%s: %d JSONL lines, want its %d cancelled requests: %.300s", c.burst, n, c.lines, b)
		}
	}
	open()
}
