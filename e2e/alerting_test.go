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

	"go.yaml.in/yaml/v3"
)

// Rule windows for TestAlertingEndToEnd. The TTFT alert compares its statistic
// over the last regWindow (20m in production) with the window before it and
// with the same time regDay earlier (1d in production): the steady phase must
// last regDay plus the windows before the alert can judge at all, and the
// raised phase plus the time to resolve must end before the level baseline
// (centred regDay earlier) reaches the raised phase, or the baseline would
// catch up and resolve the alert by itself.
const (
	regWindow = 20 * time.Second
	regBefore = 40 * time.Second // the 2h before the window
	regDay    = 90 * time.Second
	// The level baseline's window is regBefore wide, centred regDay earlier.
	regLevelOffset = regDay - regBefore/2
)

// promDuration writes d in seconds, as PromQL reads it.
func promDuration(d time.Duration) string { return fmt.Sprintf("%ds", int(d.Seconds())) }

// testShortening maps every duration in alerts/inferprobe-rules.yml to one a
// test can wait for, with a 1s scrape and evaluation interval.
var testShortening = shortening{
	windows: map[string]string{
		"5m": "10s", "10m": "10s", "15m": "15s", "20m": promDuration(regWindow), "30m": "20s",
		// The goodput burn-rate windows (the steady phase fails no request and
		// the probe has no SLO, so they must stay quiet at any length), and the
		// latency baselines' windows. The tail alerts' 1h holds 600 requests
		// at 20 req/s, under their 1,500-request guard: they stay quiet too.
		"1h": "30s", "2h": "40s", "4h": "60s", "6h": "60s", "3d": "90s",
		"1d": "60s", "7d": "10m",
	},
	steps: map[string]string{"5m": "5s"},
	offsets: map[string]string{
		// The step's window before, and the three 20m rates that make up the tail's hour.
		"20m": promDuration(regWindow), "40m": promDuration(2 * regWindow),
		// A day earlier: the step's two baseline windows and the level and tail baselines, each
		// centred on regDay as the production offsets are on 1d.
		"23h30m": promDuration(regDay - 15*time.Second), "1d20m": promDuration(regDay + regWindow),
		"23h": promDuration(regLevelOffset), "22h": promDuration(regDay - 30*time.Second),
		// Longer than the test: the week-ago baselines never hold data, so
		// the alerts judge against the day-ago ones alone.
		"6d23h30m": "10m", "7d20m": "10m", "6d23h": "10m", "6d22h": "10m",
	},
	// ProbesAbsent's 5m becomes 10s: a fresh Prometheus has no sample for a
	// moment and must not call the probes absent.
	fors: map[string]string{"2m": "5s", "5m": "10s", "10m": "5s", "15m": "5s"},
}

const (
	ttftAlert = "InferprobeTTFTRegression"
	// The recorded step the TTFT alert judges.
	ttftStepRecord = "target_model_phase:inferprobe_time_to_first_token_seconds:quartiles_gmean_step_excess_ln_rate20m"
	itlAlert       = "InferprobeITLRegression"
	durationAlert  = "InferprobeRequestDurationRegression"
	// The smaller of the factors (its step, its level) above which ttftAlert fires.
	regFactor = 1.25
	// The one alert the steady phase tolerates: it reports the CI machine
	// (a busy shared runner can lag a client by 10ms), not the rules under test.
	saturatedAlert = "InferprobeClientSaturated"
	simModel       = "inferprobe-simulator"
	steadyTTFT     = 200 * time.Millisecond
	raisedTTFT     = time.Second
)

// shortenedRules writes alerts/inferprobe-rules.yml with testShortening
// applied into dir, checks that the TTFT alert under test was shortened as
// planned, and returns the file's path.
func shortenedRules(t *testing.T, dir string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "alerts", "inferprobe-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	short, counts := testShortening.apply(t, string(src))
	t.Logf("shortened durations (kind, original: count): %v", counts)
	for _, kind := range []string{"window 20m", "window 2h", "window 1h", "offset 20m", "offset 23h30m", "offset 1d20m", "offset 23h", "offset 6d23h"} {
		if counts[kind] == 0 {
			t.Fatalf("no %s was shortened: the rule file changed under the test (%v)", kind, counts)
		}
	}

	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert  string `yaml:"alert"`
				Record string `yaml:"record"`
				Expr   string `yaml:"expr"`
				For    string `yaml:"for"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal([]byte(short), &rules); err != nil {
		t.Fatalf("shortened rules: %v", err)
	}
	// The step is recorded (its window before, regBefore wide, ends regWindow ago); the alert
	// reads it and the level baseline (regBefore wide, centred regDay earlier).
	found := false
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Record == ttftStepRecord {
				if want := "[40s] offset " + promDuration(regWindow); !strings.Contains(r.Expr, want) {
					t.Fatalf("shortened %s has no %q:\n%s", ttftStepRecord, want, r.Expr)
				}
			}
			if r.Alert != ttftAlert {
				continue
			}
			found = true
			if want := "[40s] offset " + promDuration(regLevelOffset); !strings.Contains(r.Expr, want) {
				t.Fatalf("shortened %s has no %q:\n%s", ttftAlert, want, r.Expr)
			}
			if strings.Contains(r.Expr, "[20m") || strings.Contains(r.Expr, "offset 23h") || r.For != "" {
				t.Fatalf("%s not fully shortened (for: %s):\n%s", ttftAlert, r.For, r.Expr)
			}
		}
	}
	if !found {
		t.Fatalf("no alert %s in the rule file", ttftAlert)
	}
	path := filepath.Join(dir, "inferprobe-rules.yml")
	if err := os.WriteFile(path, []byte(short), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// setSimTTFT changes the simulator's time to first token at run time.
func setSimTTFT(t *testing.T, simAddr string, ttft time.Duration) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, "http://"+simAddr+"/admin/profile", strings.NewReader(`{"ttft": "`+ttft.String()+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("PUT /admin/profile: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /admin/profile ttft=%s: status %d", ttft, resp.StatusCode)
	}
}

// TestAlertingEndToEnd runs the whole alerting path with the real rules: the
// simulator, inferprobe probing it at 20 req/s, Prometheus 3.16 scraping native
// histograms and evaluating alerts/inferprobe-rules.yml with shortened windows,
// and Alertmanager routing by severity through a stock-shaped tree to a pager
// and a ticket webhook. Steady latency raises nothing; a 5x TTFT raised
// through the simulator's admin endpoint reaches Alertmanager and pages
// (severity="critical"); restoring it resolves the alert. It runs twice: with
// native histograms, and on a Prometheus that ingests only the classic buckets,
// where the rules' classic form must do the same. About 2.5 minutes each.
func TestAlertingEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("takes minutes of real time")
	}
	t.Run("native", func(t *testing.T) { alertingEndToEnd(t, true) })
	t.Run("classic-only", func(t *testing.T) { alertingEndToEnd(t, false) })
}

func alertingEndToEnd(t *testing.T, native bool) {
	requirePrometheus316(t)
	requireAlertmanager(t)
	dir := t.TempDir()
	rules := shortenedRules(t, dir)

	// Prometheus and Alertmanager start first: their start-up takes the CPU
	// for a moment, which would put slow outliers into the first probes and so
	// into the baseline window.
	hook, tickets := startWebhook(t), startWebhook(t)
	amURL := startAlertmanager(t, hook.url, tickets.url)
	addr := freeAddr(t)
	prom := startPrometheus316(t, addr, rules, strings.TrimPrefix(amURL, "http://"), native)

	simAddr := freeAddr(t)
	sim := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate",
		// Latencies of hundreds of ms: the few ms of scheduling noise on a busy
		// runner must not look like a 1.5x regression of ITL or duration.
		"--web.listen-address="+simAddr, "--sim.ttft="+steadyTTFT.String(), "--sim.itl=50ms")
	waitHealthy(t, sim, "http://"+simAddr+"/health", 10*time.Second)
	// 20 req/s gives 400 samples a 20s window, well over the 100-sample guard.
	scenarioFile := filepath.Join(dir, "scenario.yml")
	if err := os.WriteFile(scenarioFile, []byte(fmt.Sprintf(`targets:
  sim:
    url: http://%s/v1
    model: %s
    timeout: 10s
probes:
  steady:
    target: sim
    arrival: {pattern: constant, rate: 20}
    dataset:
      synthetic:
        input_tokens: {mean: 16}
        output_tokens: {mean: 8}
`, simAddr, simModel)), 0o644); err != nil {
		t.Fatal(err)
	}
	serve := inferprobe(t, "inferprobe serve", dir, "serve", "--config.file="+scenarioFile,
		"--web.listen-address="+addr, "--workers=1", "--no-collector.gpu")
	waitHealthy(t, serve, "http://"+addr+"/-/ready", 10*time.Second)
	began := time.Now()

	// unexpected fails the test on any alert firing in Prometheus, held by
	// Alertmanager or notified, other than those allowed. Pending alerts are
	// not failures: ProbesAbsent is pending until the first scrape.
	unexpected := func(phase string, allowed ...string) {
		t.Helper()
		ok := func(name string) bool { return name == saturatedAlert || slices.Contains(allowed, name) }
		pa, err := prom.alerts()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range pa {
			if a.State == "firing" && !ok(a.Labels["alertname"]) {
				t.Fatalf("%s: Prometheus has %s %s", phase, a.State, a.Labels)
			}
		}
		aa, err := alertmanagerAlerts(amURL)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range aa {
			if !ok(a.Labels["alertname"]) {
				t.Fatalf("%s: Alertmanager holds %s", phase, a.Labels)
			}
		}
		for _, a := range append(hook.received(), tickets.received()...) {
			if !ok(a.Labels["alertname"]) {
				t.Fatalf("%s: a webhook was notified of %s %s", phase, a.Status, a.Labels)
			}
		}
		// Routing is by severity: the pager gets critical alerts only, the
		// ticket receiver warnings only, and info reaches neither.
		for _, a := range hook.received() {
			if a.Labels["severity"] != "critical" {
				t.Fatalf("%s: the pager was notified of %s %s", phase, a.Status, a.Labels)
			}
		}
		for _, a := range tickets.received() {
			if a.Labels["severity"] != "warning" {
				t.Fatalf("%s: the ticket receiver was notified of %s %s", phase, a.Status, a.Labels)
			}
		}
	}

	// Steady phase. Wait until the rule's earliest baseline window (the window
	// before, a day earlier) holds requests and its p99 (above the quartiles the
	// rule compares) is low enough for the raised TTFT to be a regression by
	// the rule's own factor: otherwise "no alert" would only mean "no data",
	// and a late alert would only mean start-up noise.
	ttft := `inferprobe_time_to_first_token_seconds{phase="probe"}`
	window, offset := "["+promDuration(regBefore)+"]", " offset "+promDuration(regDay+regWindow)
	guard := `sum(histogram_count(increase(` + ttft + window + offset + `)))`
	baseP99 := `histogram_quantile(0.99, sum(rate(` + ttft + window + offset + `)))`
	curP99 := `histogram_quantile(0.99, sum(rate(` + ttft + window + `)))`
	if !native {
		bucket, count := `inferprobe_time_to_first_token_seconds_bucket{phase="probe"}`, `inferprobe_time_to_first_token_seconds_count{phase="probe"}`
		guard = `sum(increase(` + count + window + offset + `))`
		baseP99 = `histogram_quantile(0.99, sum by (le) (rate(` + bucket + window + offset + `)))`
		curP99 = `histogram_quantile(0.99, sum by (le) (rate(` + bucket + window + `)))`
	}
	maxBase := raisedTTFT.Seconds() / regFactor * 0.9
	eventually(t, regDay+regWindow+regBefore+60*time.Second, "a full, steady baseline window", func() error {
		serve.checkRunning(t)
		unexpected("steady phase, building the baseline")
		n, err := prom.scalar(guard)
		if err != nil {
			return err
		}
		if n < 100 {
			return fmt.Errorf("%v samples in the baseline window, the rule needs 100", n)
		}
		base, err := prom.scalar(baseP99)
		if err != nil {
			return err
		}
		if base > maxBase {
			return fmt.Errorf("baseline p99 %.3fs: a %s TTFT would not be %gx worse", base, raisedTTFT, regFactor)
		}
		return nil
	})
	t.Logf("baseline complete after %s", time.Since(began).Round(time.Second))
	for range 10 {
		unexpected("steady phase")
		time.Sleep(time.Second)
	}
	base, err := prom.scalar(baseP99)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := prom.scalar(curP99)
	if err != nil {
		t.Fatal(err)
	}
	// The recording rules work on the scraped native histograms.
	recorded, err := prom.scalar(`target_model_phase:inferprobe_time_to_first_token_seconds:p99_rate5m{target="sim", phase="probe"}`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("steady phase: TTFT p99 %.3fs now, %.3fs in the baseline window, %.3fs recorded", cur, base, recorded)
	if recorded < steadyTTFT.Seconds() || recorded >= raisedTTFT.Seconds() {
		t.Fatalf("recorded TTFT p99 %.3fs in the steady phase, want at least %s and under %s", recorded, steadyTTFT, raisedTTFT)
	}

	// Raise TTFT 5x: the regression alert (its day-ago baseline here 90s ago) must reach
	// Alertmanager and the webhook. Request duration regresses with it; ITL
	// does not and must stay quiet.
	setSimTTFT(t, simAddr, raisedTTFT)
	raised := time.Now()
	wantLabels := map[string]string{"alertname": ttftAlert, "severity": "critical", "target": "sim", "model": simModel, "phase": "probe"}
	wantRunbook := "https://github.com/inferprobe/inferprobe/blob/main/alerts/RUNBOOK.md#" + strings.ToLower(ttftAlert)
	// When Prometheus first showed the alert pending and firing: the log then
	// says which stage a slow alert spent its time in.
	seen := map[string]time.Duration{}
	eventually(t, 45*time.Second, ttftAlert+" active in Alertmanager and notified", func() error {
		unexpected("raised TTFT", ttftAlert, durationAlert)
		pa, err := prom.alerts()
		if err != nil {
			return err
		}
		for _, a := range pa {
			if _, ok := seen[a.State]; !ok && a.Labels["alertname"] == ttftAlert {
				seen[a.State] = time.Since(raised).Round(100 * time.Millisecond)
			}
		}
		aa, err := alertmanagerAlerts(amURL)
		if err != nil {
			return err
		}
		var active bool
		for _, a := range aa {
			if a.Labels["alertname"] == ttftAlert {
				if !hasLabels(a.Labels, wantLabels) || a.Annotations["runbook_url"] != wantRunbook {
					t.Fatalf("Alertmanager holds %s with labels %v, annotations %v; want labels %v and runbook_url %s",
						ttftAlert, a.Labels, a.Annotations, wantLabels, wantRunbook)
				}
				active = a.Status.State == "active"
			}
		}
		if !active {
			return fmt.Errorf("not active in Alertmanager: %v", aa)
		}
		for _, a := range hook.received() {
			if a.Status == "firing" && hasLabels(a.Labels, wantLabels) && a.Annotations["runbook_url"] == wantRunbook {
				return nil
			}
		}
		return fmt.Errorf("the pager has no firing %s with labels %v and runbook_url %s: %v", ttftAlert, wantLabels, wantRunbook, hook.received())
	})
	fired := time.Since(raised)
	t.Logf("%s active in Alertmanager and notified %s after the TTFT was raised (Prometheus: pending after %s, firing after %s)",
		ttftAlert, fired.Round(time.Second), seen["pending"], seen["firing"])

	// Restore: the current window holds only fast requests again after
	// regWindow, and the alert must resolve before the baseline window reaches
	// the raised phase (regLevelOffset after the raise), which would also clear it.
	// Alertmanager keeps an alert a while after the last word from Prometheus,
	// so Prometheus itself must still have it firing: the resolution to come
	// must not be one that already happened.
	pa, err := prom.alerts()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(pa, func(a promAlert) bool { return a.Labels["alertname"] == ttftAlert && a.State == "firing" }) {
		t.Fatalf("%s no longer firing in Prometheus before the TTFT was restored: %v", ttftAlert, pa)
	}
	setSimTTFT(t, simAddr, steadyTTFT)
	restored := time.Now()
	eventually(t, regLevelOffset-time.Since(raised)-time.Second, ttftAlert+" resolved in Alertmanager and notified", func() error {
		aa, err := alertmanagerAlerts(amURL)
		if err != nil {
			return err
		}
		for _, a := range aa {
			if a.Labels["alertname"] == ttftAlert {
				return fmt.Errorf("still held by Alertmanager: %v", a.Status.State)
			}
		}
		for _, a := range hook.received() {
			if a.Status == "resolved" && hasLabels(a.Labels, wantLabels) {
				return nil
			}
		}
		return fmt.Errorf("webhook has no resolved %s", ttftAlert)
	})
	t.Logf("%s resolved %s after the TTFT was restored (fired after %s; whole test %s)",
		ttftAlert, time.Since(restored).Round(time.Second), fired.Round(time.Second), time.Since(began).Round(time.Second))
	for _, a := range append(hook.received(), tickets.received()...) {
		if a.Labels["alertname"] == itlAlert {
			t.Fatalf("a webhook was notified of %s %v: the inter-token latency never changed", a.Status, a.Labels)
		}
	}
}

// hasLabels reports whether got has every label of want.
func hasLabels(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
