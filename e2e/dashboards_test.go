package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDashboardQueriesReturnData runs the demo with a burst and a capacity
// search, lets two real Prometheus servers scrape it, one storing native
// histograms and one only the classic buckets, and then evaluates every query of every Grafana
// dashboard (panels, annotations, variables) on each the way Grafana would:
// each must be valid and return data on both. A panel that stays empty on a
// demo run is a panel with a wrong metric, label or function, or one that
// works on one storage mode only. It also measures how far the classic p99s
// are from the native ones (within 10 %, BENCHMARKS.md).
func TestDashboardQueriesReturnData(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in ../dashboards (%v)", err)
	}
	addr, simAddr := freeAddr(t), freeAddr(t)
	demo := inferprobe(t, "inferprobe demo", t.TempDir(), "demo", "--web.listen-address="+addr,
		"--simulator.listen-address="+simAddr, "--web.enable-burst-api", "--workers=2",
		// Some failures, so that the error panels have series.
		"--sim.error-rate=0.05")
	base := "http://" + addr
	waitHealthy(t, demo, base+"/metrics", 15*time.Second)
	prom := startDashboardPrometheus(t, addr, simAddr, true)
	classic := startDashboardPrometheus(t, addr, simAddr, false)
	begin := time.Now()

	// Probe traffic first, then a short burst beside it, so that probe and
	// burst series exist side by side.
	time.Sleep(8 * time.Second)
	// The demo's burst, and its capacity search (for the capacity panels).
	for _, burst := range []string{"demo-burst", "demo-capacity"} {
		var run struct {
			ID        string `json:"id"`
			StatusURL string `json:"status_url"`
		}
		body := `{"duration":"8s"}`
		if burst == "demo-capacity" {
			body = `{}`
		}
		if code := dashboardCall(t, "POST", base+"/api/v1/bursts/"+burst, body, &run); code != http.StatusAccepted || run.StatusURL == "" {
			t.Fatalf("POST /api/v1/bursts/%s: status %d (%+v), want 202 with a status_url", burst, code, run)
		}
		eventually(t, 90*time.Second, "burst run "+run.ID+" ends", func() error {
			var info struct{ State string }
			dashboardCall(t, "GET", base+run.StatusURL, "", &info)
			if info.State != "succeeded" {
				if info.State != "queued" && info.State != "running" {
					t.Fatalf("burst run %s ended %q, want succeeded", run.ID, info.State)
				}
				return fmt.Errorf("state %s", info.State)
			}
			return nil
		})
	}
	for _, p := range []*dashboardPrometheus{prom, classic} {
		eventually(t, 15*time.Second, "Prometheus has scraped the burst's results", func() error {
			res, err := p.query(`inferprobe_capacity_concurrency`)
			if err == nil && len(res) == 0 {
				err = fmt.Errorf("no inferprobe_capacity_concurrency yet")
			}
			return err
		})
	}
	time.Sleep(3 * time.Second) // a few more scrapes after the burst

	end := time.Now()
	// The demo's GPUs are simulated, say so, and follow the load.
	for _, expr := range []string{
		`inferprobe_gpu_telemetry_backend_info{backend="simulated"} == 1`,
		fmt.Sprintf(`max_over_time(DCGM_FI_DEV_GPU_UTIL{gpu="0"}[%ds]) > 10`, int(end.Sub(begin).Seconds())),
	} {
		if res, err := prom.query(expr); err != nil || len(res) != 1 {
			t.Errorf("%s: %d samples (%v), want 1", expr, len(res), err)
		}
	}
	// The storage modes are what they claim: native histograms only in one,
	// classic buckets only in the other.
	for _, c := range []struct {
		p    *dashboardPrometheus
		expr string
		want bool
	}{
		{prom, `count(inferprobe_time_to_first_token_seconds)`, true},
		{prom, `count(inferprobe_time_to_first_token_seconds_bucket)`, false},
		{classic, `count(inferprobe_time_to_first_token_seconds)`, false},
		{classic, `count(inferprobe_time_to_first_token_seconds_bucket)`, true},
	} {
		if res, err := c.p.query(c.expr); err != nil || (len(res) > 0) != c.want {
			t.Fatalf("%s on the %s Prometheus: %d results (%v), want data: %v", c.expr, c.p.mode, len(res), err, c.want)
		}
	}
	// The simulated GPUs carry the label the GPU panels exclude by default.
	if res, err := prom.query(`DCGM_FI_DEV_POWER_USAGE{simulated!="true"}`); err != nil || len(res) != 0 {
		t.Errorf("DCGM_FI_DEV_POWER_USAGE without simulated=\"true\": %d series (%v), want none in the demo", len(res), err)
	}
	dashCompareQuantiles(t, prom, classic, end.Sub(begin))
	builtins := map[string]string{
		// What Grafana substitutes for a 1s scrape interval and this run.
		"__rate_interval": "1m",
		"__interval":      "2s",
		"__range":         strconv.Itoa(int(end.Sub(begin).Seconds())+1) + "s",
	}
	for _, p := range []*dashboardPrometheus{prom, classic} {
		n := dashEvaluateAll(t, p, files, builtins, begin, end)
		t.Logf("%d dashboard queries evaluated against %s (%s histograms)", n, p.version, p.mode)
	}
}

// dashEvaluateAll evaluates every variable, annotation and panel query of
// the dashboard files on p and returns how many it ran.
func dashEvaluateAll(t *testing.T, prom *dashboardPrometheus, files []string, builtins map[string]string, begin, end time.Time) int {
	t.Helper()
	queries := 0
	for _, file := range files {
		d := dashRead(t, file)
		vars := map[string]string{}
		for k, v := range builtins {
			vars[k] = v
		}
		for _, v := range d.Templating.List {
			if v.Type == "query" {
				vars[v.Name] = ".*" // All, as the variables' allValue
			}
		}
		// The demo's GPUs are simulated: include them, or the GPU panels
		// are empty by design.
		vars["simulated_gpus"] = "none"
		name := filepath.Base(file)
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			queries++
			if err := dashLabelValuesHaveData(prom.url, dashSubstitute(t, v.Definition, vars)); err != nil {
				t.Errorf("%s: variable %s: %v", name, v.Name, err)
			}
		}
		for _, a := range d.Annotations.List {
			if a.Expr == "" {
				continue
			}
			queries++
			if err := dashRangeHasData(prom.url, dashSubstitute(t, a.Expr, vars), begin, end); err != nil {
				t.Errorf("%s: annotation %q: %v", name, a.Name, err)
			}
		}
		for _, p := range d.panels() {
			for _, tg := range p.Targets {
				queries++
				expr := dashSubstitute(t, tg.Expr, vars)
				var err error
				if tg.Instant {
					err = dashInstantHasData(prom.url, expr, end)
				} else {
					err = dashRangeHasData(prom.url, expr, begin, end)
				}
				if err != nil {
					t.Errorf("%s (%s histograms): panel %q, query %s: %v", name, prom.mode, p.Title, tg.RefID, err)
				}
			}
		}
	}
	return queries
}

// dashCompareQuantiles compares the p50 and p99 of the demo's latency
// histograms over the run, by phase, as the dashboards read them from
// native histograms on one server and from classic buckets on the other:
// the classic ones must be within 10 % of the native ones.
func dashCompareQuantiles(t *testing.T, native, classic *dashboardPrometheus, run time.Duration) {
	t.Helper()
	window := fmt.Sprintf("[%ds]", int(run.Seconds())+1)
	for _, metric := range []string{"inferprobe_time_to_first_token_seconds", "inferprobe_inter_token_latency_seconds", "inferprobe_request_duration_seconds"} {
		for _, phase := range []string{"probe", "burst"} {
			for _, q := range []float64{0.5, 0.99} {
				sel := `{job="inferprobe", phase="` + phase + `"}`
				n, err := native.scalar(fmt.Sprintf("histogram_quantile(%g, sum(increase(%s%s%s)))", q, metric, sel, window))
				if err != nil {
					t.Fatal(err)
				}
				c, err := classic.scalar(fmt.Sprintf("histogram_quantile(%g, sum by (le) (increase(%s_bucket%s%s)))", q, metric, sel, window))
				if err != nil {
					t.Fatal(err)
				}
				diff := (c - n) / n
				t.Logf("%s{phase=%q} p%g: native %.4fs, classic %.4fs (%+.1f %%)", metric, phase, q*100, n, c, diff*100)
				if math.IsNaN(diff) || math.Abs(diff) > 0.10 {
					t.Errorf("%s{phase=%q} p%g: classic %.4fs is %+.1f %% off the native %.4fs, want within 10 %%", metric, phase, q*100, c, diff*100, n)
				}
			}
		}
	}
}

// dashboardPrometheus is a Prometheus for the dashboard test.
type dashboardPrometheus struct {
	*prometheusServer
	version, mode string
}

// startDashboardPrometheus scrapes target (inferprobe) and engine every second, storing native
// histograms or (native false) only the classic buckets, as a Prometheus
// without native histograms turned on does. It prefers Prometheus 3
// ($PROMETHEUS, or .cache/bin from `make tools`), which is what the
// dashboards are for, and falls back to the Prometheus on PATH (Debian's
// 2.42, native histograms by its feature flag).
func startDashboardPrometheus(t *testing.T, target, engine string, native bool) *dashboardPrometheus {
	t.Helper()
	bin := os.Getenv("PROMETHEUS")
	if bin == "" {
		if abs, err := filepath.Abs(filepath.Join("..", ".cache", "bin", "prometheus")); err == nil {
			if _, err := os.Stat(abs); err == nil {
				bin = abs
			}
		}
	}
	if bin == "" {
		bin = requirePrometheus(t)
	}
	out, _ := exec.Command(bin, "--version").CombinedOutput()
	version, _, _ := strings.Cut(string(out), "\n")
	// Prometheus 2 turns native histograms on by a flag and refuses the
	// Prometheus 3 setting; a binary from go install prints no version.
	legacy := strings.Contains(version, "version 2.")
	setting, flags, mode := "", []string(nil), "classic"
	switch {
	case native && legacy:
		flags, mode = []string{"--enable-feature=native-histograms"}, "native"
	case native:
		setting, mode = "  scrape_native_histograms: true\n", "native"
	}
	// The engine (the demo's simulator) is scraped with the target label of
	// the demo's target, as docs/metrics.md says, for the engine row.
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n%sscrape_configs:\n  - job_name: inferprobe\n    static_configs:\n      - targets: ['%s']\n"+
		"  - job_name: engine\n    static_configs:\n      - targets: ['%s']\n        labels: {target: simulator}\n", setting, target, engine)
	return &dashboardPrometheus{runPrometheus(t, "prometheus "+mode, bin, config, 60*time.Second, flags...), version, mode}
}

// dashboardCall sends a request to inferprobe and decodes its JSON answer
// into into; it returns the status code.
func dashboardCall(t *testing.T, method, u, body string, into any) int {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("%s %s: status %d, answer not JSON: %v", method, u, resp.StatusCode, err)
	}
	return resp.StatusCode
}

// grafanaDashboard is the part of a dashboard file the test evaluates.
type grafanaDashboard struct {
	Annotations struct {
		List []struct {
			Name string `json:"name"`
			Expr string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
	Panels []grafanaPanel `json:"panels"`
}

type grafanaPanel struct {
	Title   string         `json:"title"`
	Panels  []grafanaPanel `json:"panels"` // of a collapsed row
	Targets []struct {
		RefID   string `json:"refId"`
		Expr    string `json:"expr"`
		Instant bool   `json:"instant"`
	} `json:"targets"`
}

// panels returns every panel, those in collapsed rows included.
func (d *grafanaDashboard) panels() []grafanaPanel {
	var out []grafanaPanel
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

func dashRead(t *testing.T, file string) *grafanaDashboard {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &d
}

var dashVarRE = regexp.MustCompile(`\$(?:\{(\w+)(?::\w+)?\}|(\w+))`)

// dashSubstitute replaces Grafana variables as Grafana would; an unknown one
// fails the test.
func dashSubstitute(t *testing.T, expr string, vars map[string]string) string {
	t.Helper()
	return dashVarRE.ReplaceAllStringFunc(expr, func(ref string) string {
		m := dashVarRE.FindStringSubmatch(ref)
		v, ok := vars[m[1]+m[2]]
		if !ok {
			t.Errorf("%q uses %s, which the dashboard does not define", expr, ref)
		}
		return v
	})
}

var dashLabelValuesRE = regexp.MustCompile(`^label_values\((.+), *(\w+)\)$`)

// dashLabelValuesHaveData evaluates a label_values(selector, label) variable
// query through the label values API, as Grafana's Prometheus source does.
func dashLabelValuesHaveData(promURL, def string) error {
	m := dashLabelValuesRE.FindStringSubmatch(def)
	if m == nil {
		return fmt.Errorf("%q: not a label_values(selector, label) query", def)
	}
	var values []string
	if err := dashPromGet(promURL+"/api/v1/label/"+m[2]+"/values?"+url.Values{"match[]": {m[1]}}.Encode(), &values); err != nil {
		return fmt.Errorf("%s: %w", def, err)
	}
	if len(values) == 0 {
		return fmt.Errorf("%s: no values", def)
	}
	return nil
}

// dashResult is an instant or range query result: floats or native
// histograms.
type dashResult struct {
	ResultType string `json:"resultType"`
	Result     []struct {
		Value      []json.RawMessage   `json:"value"`
		Values     [][]json.RawMessage `json:"values"`
		Histogram  []json.RawMessage   `json:"histogram"`
		Histograms [][]json.RawMessage `json:"histograms"`
	} `json:"result"`
}

func dashInstantHasData(promURL, expr string, at time.Time) error {
	return dashQueryHasData(promURL+"/api/v1/query?"+url.Values{
		"query": {expr}, "time": {strconv.FormatInt(at.Unix(), 10)},
	}.Encode(), expr)
}

func dashRangeHasData(promURL, expr string, from, to time.Time) error {
	return dashQueryHasData(promURL+"/api/v1/query_range?"+url.Values{
		"query": {expr}, "start": {strconv.FormatInt(from.Unix(), 10)},
		"end": {strconv.FormatInt(to.Unix(), 10)}, "step": {"2"},
	}.Encode(), expr)
}

// dashQueryHasData requires at least one sample that is a number (not NaN) or
// a native histogram with observations.
func dashQueryHasData(u, expr string) error {
	var res dashResult
	if err := dashPromGet(u, &res); err != nil {
		return fmt.Errorf("%w\n\t%s", err, expr)
	}
	if res.ResultType != "vector" && res.ResultType != "matrix" {
		return fmt.Errorf("result type %q, want a vector or matrix\n\t%s", res.ResultType, expr)
	}
	for _, s := range res.Result {
		points := append([][]json.RawMessage{s.Value, s.Histogram}, append(s.Values, s.Histograms...)...)
		for _, p := range points {
			if len(p) == 2 && dashPointHasData(p[1]) {
				return nil
			}
		}
	}
	return fmt.Errorf("no data (%d series, none with a number)\n\t%s", len(res.Result), expr)
}

// dashPointHasData reads a float ("1.5") or a histogram ({"count": "3", …}).
func dashPointHasData(raw json.RawMessage) bool {
	var f string
	if json.Unmarshal(raw, &f) == nil {
		v, err := strconv.ParseFloat(f, 64)
		return err == nil && !math.IsNaN(v)
	}
	var h struct {
		Count string `json:"count"`
	}
	if json.Unmarshal(raw, &h) != nil {
		return false
	}
	n, err := strconv.ParseFloat(h.Count, 64)
	return err == nil && n > 0
}

// dashPromGet calls a Prometheus API and decodes its data into into.
func dashPromGet(u string, into any) error {
	resp, err := httpClient.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("status %d, answer not JSON: %w", resp.StatusCode, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("status %d: %s", resp.StatusCode, body.Error)
	}
	return json.Unmarshal(body.Data, into)
}
