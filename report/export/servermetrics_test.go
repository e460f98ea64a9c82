package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/servermetrics"
)

// collected scrapes a vLLM-style endpoint over a run in which it served 10
// requests, each with a server TTFT of 50 ms to le seconds.
func collected(t *testing.T, le string) *servermetrics.Collection {
	t.Helper()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := served.Load()
		fmt.Fprintf(w, "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\"} 1\n")
		fmt.Fprintf(w, "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name=\"m\"} 0.5\n")
		fmt.Fprintf(w, "# HELP vllm:generation_tokens_total Number of generation tokens processed.\n# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"m\"} %d\n", 8*n)
		fmt.Fprintf(w, "# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.\n# TYPE vllm:time_to_first_token_seconds histogram\n")
		fmt.Fprintf(w, "vllm:time_to_first_token_seconds_bucket{le=\"0.05\",model_name=\"m\"} 0\nvllm:time_to_first_token_seconds_bucket{le=%q,model_name=\"m\"} %d\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} %d\n", le, n, n)
		fmt.Fprintf(w, "vllm:time_to_first_token_seconds_sum{model_name=\"m\"} %g\nvllm:time_to_first_token_seconds_count{model_name=\"m\"} %d\n", 0.055*float64(n), n)
		fmt.Fprintf(w, "# HELP vllm:cache_config_info Information of the cache config.\n# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{block_size=\"16\"} 1\n")
	}))
	t.Cleanup(srv.Close)
	c := servermetrics.Start(servermetrics.Options{URLs: []string{srv.URL + "/metrics"}, Interval: 5 * time.Millisecond})
	start := c.Mark()
	for range 10 {
		served.Add(1)
		time.Sleep(time.Millisecond)
	}
	return c.Stop(start)
}

func TestServerMetricsArtifacts(t *testing.T) {
	run := fixedRun(t)
	run.ServerMetrics = collected(t, "0.06")
	run.Config.ServerMetrics = ServerMetricsConfig{Enabled: true, Formats: []string{"json", "csv"}}
	dir := t.TempDir()
	if err := WriteArtifacts(dir, run); err != nil {
		t.Fatal(err)
	}

	raw, err := os.ReadFile(filepath.Join(dir, artifactServerJSON))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SchemaVersion string `json:"schema_version"`
		Summary       struct {
			Successful []string                    `json:"endpoints_successful"`
			Info       map[string]map[string]any   `json:"endpoint_info"`
			Ranges     map[string]map[string]int64 `json:"phase_time_ranges"`
		} `json:"summary"`
		Metrics map[string]struct {
			Type   string `json:"type"`
			Unit   string `json:"unit"`
			Series []struct {
				EndpointURL string             `json:"endpoint_url"`
				Labels      map[string]string  `json:"labels"`
				Stats       map[string]float64 `json:"stats"`
				Buckets     map[string]int64   `json:"buckets"`
			} `json:"series"`
		} `json:"metrics"`
		InputConfig map[string]any `json:"input_config"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != "1.1" || len(doc.Summary.Successful) != 1 || doc.Summary.Ranges["profiling"]["end_ns"] == 0 {
		t.Errorf("summary = %+v", doc.Summary)
	}
	ttft := doc.Metrics["vllm:time_to_first_token_seconds"]
	if ttft.Type != "histogram" || ttft.Unit != "seconds" || len(ttft.Series) != 1 {
		t.Fatalf("TTFT = %+v", ttft)
	}
	s := ttft.Series[0]
	if s.Stats["count"] != 10 || s.Buckets["0.06"] != 10 || s.Buckets["+Inf"] != 10 || s.Labels["model_name"] != "m" || s.Stats["p50_estimate"] <= 0.05 {
		t.Errorf("TTFT series = %+v", s)
	}
	if got := doc.Metrics["vllm:generation_tokens_total"].Series[0].Stats["total"]; got != 80 {
		t.Errorf("generation tokens total = %v, want 80", got)
	}
	if sm, _ := doc.InputConfig["server_metrics"].(map[string]any); sm["enabled"] != true {
		t.Errorf("input_config.server_metrics = %v", doc.InputConfig["server_metrics"])
	}

	csvText, err := os.ReadFile(filepath.Join(dir, artifactServerCSV))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# AIPerf Server Metrics Export (CSV)", "Endpoint,Type,Metric,Unit,avg,min,max,std,p1,", "Endpoint,Type,Metric,Unit,total,rate,",
		"Endpoint,Type,Metric,Unit,count,count_rate,sum,", ",histogram,vllm:time_to_first_token_seconds,seconds,10,", "0.05=0;0.06=10;+Inf=10",
		"Endpoint,Metric,Key,Value,Description", ",vllm:cache_config_info,block_size,16,"} {
		if !strings.Contains(string(csvText), want) {
			t.Errorf("CSV lacks %q:\n%s", want, csvText)
		}
	}

	var console bytes.Buffer
	ConsoleServerMetrics(&console, run)
	for _, want := range []string{"Server metrics (vllm, ", "Queue (waiting requests)", "KV-cache use", "avg    50.00%", "server (10 requests)", "client - server", "the network, queueing outside the engine"} {
		if !strings.Contains(console.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, console.String())
		}
	}
	var extras struct {
		Inferprobe struct {
			ServerMetrics servermetrics.Report `json:"server_metrics"`
		} `json:"inferprobe"`
	}
	js, _ := JSON(run)
	if err := json.Unmarshal(js, &extras); err != nil {
		t.Fatal(err)
	}
	e := extras.Inferprobe.ServerMetrics.Engines
	if len(e) != 1 || e[0].TTFT == nil || e[0].ClientTTFT == nil || e[0].TTFTGap == nil || e[0].TTFTGap.P50 == nil ||
		*e[0].TTFTGap.P50 != e[0].ClientTTFT.P50-e[0].TTFT.P50 {
		t.Errorf("profile_export's inferprobe.server_metrics = %+v", extras.Inferprobe.ServerMetrics)
	}
	page, _ := HTML(run)
	if !strings.Contains(string(page), "The server's own metrics") || !strings.Contains(string(page), "client − server") {
		t.Error("the HTML report lacks the server's metrics")
	}
}

// A difference of the client's TTFT and the engine's smaller than the width
// of the engine's bucket is not printed as a number, on the console or in
// report.html.
func TestServerTTFTGapWithinTheBucket(t *testing.T) {
	run := fixedRun(t)
	run.ServerMetrics = collected(t, "0.5") // the engine's TTFTs anywhere in (50 ms, 500 ms]
	var console bytes.Buffer
	ConsoleServerMetrics(&console, run)
	var gapRow string
	for line := range strings.Lines(console.String()) {
		if strings.HasPrefix(strings.TrimSpace(line), "client - server ") {
			gapRow = line
		}
	}
	if strings.Count(gapRow, gapUnresolved) != 3 || strings.ContainsAny(gapRow, "0123456789") || !strings.Contains(console.String(), gapUnresolvedNote) {
		t.Errorf("console: want every percentile of client - server as %q, with its note:\n%s", gapUnresolved, console.String())
	}
	page, _ := HTML(run)
	if !strings.Contains(string(page), "<tr><td>client − server</td><td>"+template.HTMLEscapeString(gapUnresolved)+"</td>") {
		t.Errorf("report.html: want client − server as %q", gapUnresolved)
	}
}

// A server whose metrics could not be read: no server_metrics_export files,
// one line on the console saying why.
func TestServerMetricsOff(t *testing.T) {
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	c := servermetrics.Start(servermetrics.Options{URLs: []string{missing.URL + "/metrics"}})
	run := fixedRun(t)
	run.ServerMetrics = c.Stop(c.Mark())
	run.Config.ServerMetrics = ServerMetricsConfig{Enabled: true, Formats: []string{"json", "csv"}}
	dir := t.TempDir()
	if err := WriteArtifacts(dir, run); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{artifactServerJSON, artifactServerCSV} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s written without server metrics", f)
		}
	}
	var console bytes.Buffer
	ConsoleServerMetrics(&console, run)
	if n := strings.Count(console.String(), "Server metrics: none from"); n != 1 || !strings.Contains(console.String(), "404") {
		t.Errorf("console:\n%s", console.String())
	}
}
