package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const burstRegressionAlert = "InferprobeBurstTTFTP99WorseThanEarlier"

// regressedRun is the part of a burst run's regression verdict the test reads.
type regressedRun struct {
	State  string `json:"state"`
	Error  string `json:"error"`
	Report struct {
		Regression *struct {
			EarlierRuns int `json:"earlier_runs"`
			Metrics     []struct {
				Metric    string  `json:"metric"`
				Regressed bool    `json:"regressed"`
				P99Change float64 `json:"p99_change"`
			} `json:"metrics"`
		} `json:"regression"`
	} `json:"report"`
}

// ttftRegressed is the run's verdict on time to first token; ok is false without one.
func (r regressedRun) ttftRegressed() (regressed, ok bool) {
	if r.Report.Regression == nil {
		return false, false
	}
	for _, m := range r.Report.Regression.Metrics {
		if m.Metric == "time_to_first_token" {
			return m.Regressed, true
		}
	}
	return false, false
}

// TestBurstRegressionAlertEndToEnd: the burst verdict and its alert, through the real binaries.
// inferprobe serve runs an on-demand burst against the simulator; a real Prometheus 3.16
// evaluates the shipped rules (the burst alert has no window or for to shorten) and a real
// Alertmanager routes its warnings to a ticket webhook. Three runs alike set a verdict of no
// regression and the alert stays quiet; the simulator made 50 % slower to the first token, the
// next run's verdict flips to a regression in TTFT, the alert fires and the ticket arrives.
func TestBurstRegressionAlertEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Prometheus, Alertmanager and four bursts")
	}
	requirePrometheus316(t)
	requireAlertmanager(t)
	dir := t.TempDir()
	pager, tickets := startWebhook(t), startWebhook(t)
	amURL := startAlertmanager(t, pager.url, tickets.url)
	rules, err := filepath.Abs(filepath.Join("..", "alerts", "inferprobe-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	prom := startPrometheus316(t, addr, rules, strings.TrimPrefix(amURL, "http://"), true)

	// A lognormal spread far wider than a busy machine's scheduling noise: runs alike must not
	// differ by more than chance.
	simAddr := freeAddr(t)
	sim := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate", "--web.listen-address="+simAddr,
		"--sim.ttft=100ms", "--sim.itl=5ms", "--sim.distribution=lognormal", "--sim.jitter=0.3")
	waitHealthy(t, sim, "http://"+simAddr+"/health", 10*time.Second)
	scenarioFile := filepath.Join(dir, "scenario.yml")
	if err := os.WriteFile(scenarioFile, []byte(fmt.Sprintf(`targets:
  sim:
    url: http://%s/v1
    model: %s
    timeout: 10s
probes:
  steady:
    target: sim
    arrival: {pattern: constant, rate: 1}
    dataset:
      synthetic:
        input_tokens: {mean: 16}
        output_tokens: {mean: 8}
bursts:
  nightly:
    target: sim
    on_demand: true
    requests: 300
    arrival: {pattern: poisson, rate: 60, max_concurrency: 32}
    dataset:
      synthetic:
        input_tokens: {mean: 16}
        output_tokens: {mean: 8}
`, simAddr, simModel)), 0o644); err != nil {
		t.Fatal(err)
	}
	serve := inferprobe(t, "inferprobe serve", dir, "serve", "--config.file="+scenarioFile,
		"--web.listen-address="+addr, "--workers=1", "--no-collector.gpu", "--web.enable-burst-api")
	base := "http://" + addr
	waitHealthy(t, serve, base+"/-/ready", 10*time.Second)

	runBurst := func() regressedRun {
		t.Helper()
		var started struct{ ID string }
		if status, _, body := apiCall(t, "POST", base+"/api/v1/bursts/nightly", "", nil, &started); status != http.StatusAccepted {
			t.Fatalf("POST nightly: %d %s", status, body)
		}
		waitRunEnds(t, base, started.ID, time.Minute)
		var run regressedRun
		if status, _, body := apiCall(t, "GET", base+"/api/v1/bursts/runs/"+started.ID, "", nil, &run); status != http.StatusOK || run.State != "succeeded" {
			t.Fatalf("run %s: %d %s", started.ID, status, body)
		}
		return run
	}
	// The verdict's gauge as Prometheus has it, once it has scraped the value the daemon shows.
	scrapedVerdict := func(want float64) {
		t.Helper()
		eventually(t, 30*time.Second, fmt.Sprintf("Prometheus has the TTFT verdict %g", want), func() error {
			v, err := prom.scalar(`inferprobe_burst_last_regression{burst="nightly", target="sim", metric="time_to_first_token"}`)
			if err != nil {
				return err
			}
			if v != want {
				return fmt.Errorf("verdict %g", v)
			}
			return nil
		})
	}
	burstAlerts := func() (firing bool, err error) {
		pa, err := prom.alerts()
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(pa, func(a promAlert) bool {
			return a.Labels["alertname"] == burstRegressionAlert && a.State == "firing"
		}), nil
	}

	if run := runBurst(); run.Report.Regression != nil {
		t.Fatalf("the first run has a verdict with nothing earlier to compare: %+v", run.Report.Regression)
	}
	for i := range 2 {
		run := runBurst()
		regressed, ok := run.ttftRegressed()
		if !ok || run.Report.Regression.EarlierRuns != i+1 {
			t.Fatalf("run %d alike: verdict %+v, want one on TTFT against %d earlier runs", i+2, run.Report.Regression, i+1)
		}
		if regressed {
			t.Fatalf("run %d alike regressed in TTFT: %+v", i+2, run.Report.Regression)
		}
	}
	scrapedVerdict(0)
	// Two evaluations (1s each) with the verdict in place.
	time.Sleep(3 * time.Second)
	if firing, err := burstAlerts(); err != nil || firing {
		t.Fatalf("%s firing after runs alike (err %v)", burstRegressionAlert, err)
	}

	setSimTTFT(t, simAddr, 150*time.Millisecond)
	run := runBurst()
	if regressed, ok := run.ttftRegressed(); !ok || !regressed {
		t.Fatalf("a run 50 %% slower to the first token: verdict %+v, want a regression in TTFT", run.Report.Regression)
	}
	scrapedVerdict(1)
	eventually(t, 30*time.Second, burstRegressionAlert+" firing and ticketed", func() error {
		if firing, err := burstAlerts(); err != nil || !firing {
			return fmt.Errorf("not firing in Prometheus (err %v)", err)
		}
		for _, a := range tickets.received() {
			if a.Labels["alertname"] == burstRegressionAlert && a.Status == "firing" && a.Labels["burst"] == "nightly" && a.Labels["severity"] == "warning" {
				return nil
			}
		}
		return fmt.Errorf("the ticket receiver has no firing %s: %v", burstRegressionAlert, tickets.received())
	})
	for _, a := range pager.received() {
		if a.Labels["alertname"] == burstRegressionAlert {
			t.Fatalf("the pager was notified of %s, a warning", a.Labels)
		}
	}
}
