package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// prometheusServer is a real Prometheus with native histograms enabled,
// scraping one target every second.
type prometheusServer struct {
	url string
}

// startPrometheus starts Prometheus scraping target (host:port) as job and
// waits until it is ready.
func startPrometheus(t *testing.T, job, target string) *prometheusServer {
	t.Helper()
	return runPrometheus(t, "prometheus", requirePrometheus(t), fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: %s
    static_configs:
      - targets: ['%s']
`, job, target), 30*time.Second, "--enable-feature=native-histograms")
}

// runPrometheus starts bin with config in a fresh directory, plus flags, and
// waits up to ready for it to answer.
func runPrometheus(t *testing.T, name, bin, config string, ready time.Duration, flags ...string) *prometheusServer {
	t.Helper()
	dir := t.TempDir()
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	p := start(t, name, dir, bin, append([]string{
		"--config.file=" + configFile,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
	}, flags...)...)
	s := &prometheusServer{url: "http://" + addr}
	waitHealthy(t, p, s.url+"/-/ready", ready)
	return s
}

// promSample is one element of an instant vector: a float sample or a
// native histogram sample.
type promSample struct {
	Metric    map[string]string `json:"metric"`
	Value     []json.RawMessage `json:"value"`     // [time, "float"]
	Histogram []json.RawMessage `json:"histogram"` // [time, {"count": "…", "sum": "…", "buckets": …}]
}

// float is the sample's value; it fails for a histogram sample.
func (s promSample) float() (float64, error) {
	if len(s.Value) != 2 {
		return 0, fmt.Errorf("not a float sample: %v", s)
	}
	var v string
	if err := json.Unmarshal(s.Value[1], &v); err != nil {
		return 0, err
	}
	return strconv.ParseFloat(v, 64)
}

// query runs an instant query and returns the vector it evaluates to.
func (s *prometheusServer) query(expr string) ([]promSample, error) {
	resp, err := httpClient.Get(s.url + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("query %s: decoding answer (status %d): %w", expr, resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK || body.Status != "success" {
		return nil, fmt.Errorf("query %s: status %d: %s", expr, resp.StatusCode, body.Error)
	}
	if body.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: result type %q, want vector", expr, body.Data.ResultType)
	}
	return body.Data.Result, nil
}

// scalar runs a query that must give exactly one float sample.
func (s *prometheusServer) scalar(expr string) (float64, error) {
	res, err := s.query(expr)
	if err != nil {
		return 0, err
	}
	if len(res) != 1 {
		return 0, fmt.Errorf("query %s: %d samples, want 1", expr, len(res))
	}
	return res[0].float()
}
