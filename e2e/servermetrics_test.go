package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serverMetricsExport is what the test reads of server_metrics_export.json.
type serverMetricsExport struct {
	SchemaVersion string `json:"schema_version"`
	Summary       struct {
		Successful []string `json:"endpoints_successful"`
	} `json:"summary"`
	Metrics map[string]struct {
		Type   string `json:"type"`
		Series []struct {
			Stats map[string]float64 `json:"stats"`
		} `json:"series"`
	} `json:"metrics"`
}

func readServerMetrics(t *testing.T, dir string) serverMetricsExport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "server_metrics_export.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc serverMetricsExport
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "server_metrics_export.csv")); err != nil {
		t.Error(err)
	}
	return doc
}

// TestBenchServerMetrics runs bench against the simulator's vLLM-style
// /metrics and a real llama-server --metrics: both runs write
// server_metrics_export.* with the engine's series; against the simulator
// the console shows the server's TTFT beside the client's, against
// llama-server its queue and batch and the concepts it does not export.
func TestBenchServerMetrics(t *testing.T) {
	t.Run("simulator", func(t *testing.T) {
		sim := freeAddr(t)
		startSimulator(t, sim)
		work := t.TempDir()
		code, out := benchIn(t, work, "--model", "inferprobe-simulator", "--url", "http://"+sim, "--streaming",
			"--concurrency", "4", "--request-count", "40", "--isl", "32", "--osl", "8", "--progress", "off", "--artifact-dir", "out")
		if code != 0 {
			t.Fatalf("bench exited %d:\n%s", code, out)
		}
		doc := readServerMetrics(t, filepath.Join(work, "out"))
		ttft := doc.Metrics["vllm:time_to_first_token_seconds"]
		if doc.SchemaVersion != "1.1" || len(doc.Summary.Successful) != 1 || ttft.Type != "histogram" ||
			len(ttft.Series) != 1 || ttft.Series[0].Stats["count"] != 40 {
			t.Errorf("server_metrics_export.json: %+v", doc)
		}
		for _, want := range []string{"Server metrics (vllm, http://" + sim + "/metrics), over the run:", "Running requests",
			"KV-cache use", "server (40 requests)", "\n  client ", "client - server"} {
			if !strings.Contains(out, want) {
				t.Errorf("the console lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("llama-server", func(t *testing.T) {
		e := startEngine(t, engines[0])
		work := t.TempDir()
		code, out := benchIn(t, work, "--model", realEngineModel, "--url", e.url(), "--streaming",
			"--concurrency", "2", "--request-count", "6", "--isl", "32", "--osl", "8", "--extra-inputs", pin(e.honours, 8),
			"--progress", "off", "--artifact-dir", "out")
		if code != 0 {
			t.Fatalf("bench exited %d:\n%s", code, out)
		}
		doc := readServerMetrics(t, filepath.Join(work, "out"))
		predicted := doc.Metrics["llamacpp:tokens_predicted_total"]
		if len(predicted.Series) != 1 || predicted.Series[0].Stats["total"] < 6 {
			t.Errorf("llamacpp:tokens_predicted_total over the run: %+v", predicted)
		}
		if _, ok := doc.Metrics["llamacpp:requests_processing"]; !ok {
			t.Errorf("no llamacpp:requests_processing in the export: %v", doc.Metrics)
		}
		for _, want := range []string{"Server metrics (llamacpp, http://" + e.addr + "/metrics), over the run:", "Queue (waiting requests)",
			"Running requests", "llamacpp exports no kv_cache_usage, ttft"} {
			if !strings.Contains(out, want) {
				t.Errorf("the console lacks %q:\n%s", want, out)
			}
		}
	})
}
