package e2e

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// missingTool skips the test, or fails it under INFERPROBE_E2E=1 (make test).
func missingTool(t *testing.T, why, fix string) {
	t.Helper()
	if os.Getenv("INFERPROBE_E2E") == "1" {
		t.Fatalf("%s and INFERPROBE_E2E=1: %s", why, fix)
	}
	t.Skipf("%s; %s (set INFERPROBE_E2E=1 to fail instead of skipping)", why, fix)
}

// requirePrometheus316 returns a Prometheus 3.16 server: $PROMETHEUS, else
// .cache/bin/prometheus (make tools). Debian's 2.42 on PATH cannot be used: it
// knows neither scrape_native_histograms nor always_scrape_classic_histograms.
func requirePrometheus316(t *testing.T) string {
	t.Helper()
	const fix = "run `make tools` to build Prometheus 3.16 into .cache/bin (or set $PROMETHEUS)"
	path := os.Getenv("PROMETHEUS")
	if path == "" {
		path = filepath.Join("..", ".cache", "bin", "prometheus")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		missingTool(t, "Prometheus 3.16 not found at "+abs, fix)
	}
	// go install leaves --version empty, so its build info is checked first;
	// a release binary is recognised by its --version line.
	if bi, err := buildinfo.ReadFile(abs); err == nil && bi.Main.Path == "github.com/prometheus/prometheus" && strings.HasPrefix(bi.Main.Version, "v0.316.") {
		return abs
	}
	out, err := exec.Command(abs, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "version 3.16.") {
		first, _, _ := strings.Cut(string(out), "\n")
		missingTool(t, abs+" is not Prometheus 3.16 ("+first+")", fix)
	}
	return abs
}

// requireAlertmanager returns $ALERTMANAGER, else alertmanager or Debian's
// prometheus-alertmanager from PATH.
func requireAlertmanager(t *testing.T) string {
	t.Helper()
	if path := os.Getenv("ALERTMANAGER"); path != "" {
		return path
	}
	for _, name := range []string{"alertmanager", "prometheus-alertmanager"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	missingTool(t, "neither alertmanager nor prometheus-alertmanager is on PATH", "run `make deps` to install Debian's prometheus-alertmanager (or set $ALERTMANAGER)")
	return ""
}

// shortening says how a rule file's durations are shortened for a test that
// must run in minutes: every duration in a range, an offset or a for: must
// have an entry, so no long window survives unnoticed.
type shortening struct {
	windows, steps, offsets, fors map[string]string
}

var (
	rangeRE  = regexp.MustCompile(`\[((?:\d+[smhdwy])+)(?::((?:\d+[smhdwy])+))?\]`)
	offsetRE = regexp.MustCompile(`\boffset ((?:\d+[smhdwy])+)\b`)
	forRE    = regexp.MustCompile(`(?m)^(\s+for: )(\S+)$`)
)

// apply rewrites the rule file text. It fails the test on a duration without
// an entry, and returns how many times each kind of duration was replaced.
func (s shortening) apply(t *testing.T, rules string) (string, map[string]int) {
	t.Helper()
	counts := map[string]int{}
	lookup := func(kind string, table map[string]string, d string) string {
		short, ok := table[d]
		if !ok {
			t.Fatalf("the rule file has a %s of %s that the test cannot shorten: add it to the test's shortening table", kind, d)
		}
		counts[kind+" "+d]++
		return short
	}
	rules = rangeRE.ReplaceAllStringFunc(rules, func(m string) string {
		sub := rangeRE.FindStringSubmatch(m)
		w := lookup("window", s.windows, sub[1])
		if sub[2] == "" {
			return "[" + w + "]"
		}
		return "[" + w + ":" + lookup("step", s.steps, sub[2]) + "]"
	})
	rules = offsetRE.ReplaceAllStringFunc(rules, func(m string) string {
		return "offset " + lookup("offset", s.offsets, offsetRE.FindStringSubmatch(m)[1])
	})
	rules = forRE.ReplaceAllStringFunc(rules, func(m string) string {
		sub := forRE.FindStringSubmatch(m)
		return sub[1] + lookup("for", s.fors, sub[2])
	})
	return rules, counts
}

// startAlertmanager runs Alertmanager with a routing tree of the stock shape
// (kube-prometheus's default, the one most installs start from): alerts are
// routed on severity alone, critical to pagerURL and warning to ticketURL,
// info and the rest to a receiver that drops them, with the stock inhibition
// of lower severities by higher ones of the same alert. Resolved notifications
// are sent; waits are a second so that a test sees notifications at once.
func startAlertmanager(t *testing.T, pagerURL, ticketURL string) string {
	t.Helper()
	bin := requireAlertmanager(t)
	dir := t.TempDir()
	config := fmt.Sprintf(`route:
  receiver: "null"
  group_by: [namespace]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 12h
  routes:
    - matchers: ['alertname = "Watchdog"']
      receiver: "null"
    - matchers: ['severity = "critical"']
      receiver: pager
    - matchers: ['severity = "warning"']
      receiver: ticket
    - matchers: ['severity = "info"']
      receiver: "null"
inhibit_rules:
  - source_matchers: ['severity = "critical"']
    target_matchers: ['severity =~ "warning|info"']
    equal: [namespace, alertname]
  - source_matchers: ['severity = "warning"']
    target_matchers: ['severity = "info"']
    equal: [namespace, alertname]
receivers:
  - name: "null"
  - name: pager
    webhook_configs:
      - url: %q
        send_resolved: true
  - name: ticket
    webhook_configs:
      - url: %q
        send_resolved: true
`, pagerURL, ticketURL)
	configFile := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	p := start(t, "alertmanager", dir, bin,
		"--config.file="+configFile,
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--cluster.listen-address=", // no gossip port: a single instance
	)
	u := "http://" + addr
	waitHealthy(t, p, u+"/-/ready", 30*time.Second)
	return u
}

// startPrometheus316 runs Prometheus 3.16 scraping target every second with
// native histograms (and the classic buckets beside them), or with classic
// buckets only when native is false (a Prometheus that does not ingest native
// histograms), evaluating rulesFile every second and sending alerts to
// alertmanager (host:port).
func startPrometheus316(t *testing.T, target, rulesFile, alertmanager string, native bool) *prometheusServer {
	t.Helper()
	histograms := "  scrape_native_histograms: false"
	if native {
		histograms = "  scrape_native_histograms: true\n  always_scrape_classic_histograms: true"
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
%s
rule_files: [%q]
alerting:
  alertmanagers:
    - static_configs:
        - targets: [%q]
scrape_configs:
  - job_name: inferprobe
    static_configs:
      - targets: [%q]
`, histograms, rulesFile, alertmanager, target)
	return runPrometheus(t, "prometheus 3.16", requirePrometheus316(t), config, 60*time.Second,
		// Firing alerts are re-sent this often (default 1m): a notification
		// lost while Alertmanager starts would otherwise wait a minute.
		"--rules.alert.resend-delay=2s",
		// Scrape targets start on this tick (default 5s): until the first
		// scrape every "absent" alert is pending.
		"--scrape.discovery-reload-interval=1s",
	)
}

// promAlert is an alert as Prometheus's /api/v1/alerts lists it.
type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"` // pending or firing
}

// alerts lists the alerts that are pending or firing in Prometheus.
func (s *prometheusServer) alerts() ([]promAlert, error) {
	var body struct {
		Status string `json:"status"`
		Data   struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	if err := getJSON(s.url+"/api/v1/alerts", &body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("/api/v1/alerts: status %q", body.Status)
	}
	return body.Data.Alerts, nil
}

// amAlert is an alert as Alertmanager's /api/v2/alerts lists it.
type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Status      struct {
		State string `json:"state"` // active, suppressed or unprocessed
	} `json:"status"`
}

// alertmanagerAlerts lists the alerts Alertmanager holds that have not
// resolved; a resolved alert leaves this list.
func alertmanagerAlerts(amURL string) ([]amAlert, error) {
	var alerts []amAlert
	err := getJSON(amURL+"/api/v2/alerts?filter="+url.QueryEscape(`alertname=~"Inferprobe.*"`), &alerts)
	return alerts, err
}

func getJSON(u string, v any) error {
	resp, err := httpClient.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// webhookAlert is one alert in an Alertmanager webhook notification.
type webhookAlert struct {
	Status      string            `json:"status"` // firing or resolved
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// webhook receives Alertmanager's notifications and keeps every alert in them.
type webhook struct {
	url    string
	mu     sync.Mutex
	alerts []webhookAlert
}

func startWebhook(t *testing.T) *webhook {
	t.Helper()
	w := &webhook{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var n struct {
			Alerts []webhookAlert `json:"alerts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			t.Errorf("webhook: undecodable notification: %v", err)
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		w.mu.Lock()
		w.alerts = append(w.alerts, n.Alerts...)
		w.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	w.url = srv.URL
	return w
}

// received returns the alerts notified so far.
func (w *webhook) received() []webhookAlert {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]webhookAlert(nil), w.alerts...)
}
