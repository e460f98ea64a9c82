package e2e

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/inferprobe/inferprobe/prober" // its endpoint types, which the saved scenario names
	"github.com/inferprobe/inferprobe/scenarios"
)

// TestBenchRateSeriesAsAIPerf: bench follows a --request-rate-series file
// at the rates AIPerf 0.13's own RateSeriesController sets: AIPerf reads the
// file and gives its rate at every 0.1 s update, and bench's steps (as
// --save-scenario writes them) give the same rate over each update.
func TestBenchRateSeriesAsAIPerf(t *testing.T) {
	venv := requireAIPerf(t)
	dir := t.TempDir()
	series := filepath.Join(dir, "series.json")
	if err := os.WriteFile(series, []byte(`[{"time_s": 0.35, "qps": 4}, {"time_s": 1.2, "qps": 30}, {"time_s": 2, "qps": 30}, {"time_s": 2.6, "qps": 7.5}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	const script = `
import json, sys
from aiperf.config.rate_series import RateSeriesConfig
from aiperf.timing.rate_series import RateSeriesController
c = RateSeriesController(setter=lambda r: None, config=RateSeriesConfig(path=sys.argv[1]), update_interval=0.1)
print(json.dumps([c.value_at(k * 0.1) for k in range(40)]))
`
	var aiperf []float64
	if err := json.Unmarshal(runAIPerf(t, time.Minute, nil, filepath.Join(venv, "bin", "python"), "-c", script, series), &aiperf); err != nil {
		t.Fatal(err)
	}

	// The run itself fails (nothing listens); the scenario is written first.
	saved := filepath.Join(dir, "run.yml")
	inferprobe(t, "inferprobe bench", dir, "bench", "--model", "m", "--url", "127.0.0.1:1", "--request-rate-series", series,
		"--request-count", "1", "--save-scenario", saved, "--artifact-dir", filepath.Join(dir, "art")).exitCode(t, 60*time.Second)
	cfg, err := scenarios.Load(saved)
	if err != nil {
		t.Fatal(err)
	}
	steps := cfg.Bursts["bench"].Arrival.Series
	rateAt := func(k int) float64 { // bench's rate over update k
		at := time.Duration(k) * 100 * time.Millisecond
		for _, s := range steps {
			if s.Duration == 0 || at < time.Duration(s.Duration) {
				return s.Rate
			}
			at -= time.Duration(s.Duration)
		}
		return math.NaN()
	}
	for k, want := range aiperf {
		if got := rateAt(k); math.Abs(got-want) > 1e-9 {
			t.Errorf("at %.1f s: bench sends at %g/s, AIPerf at %g/s", float64(k)/10, got, want)
		}
	}
}

// TestAIPerfReadsWarmupAndSeriesConfig: a run with a rate series and a
// warmup of its own load and grace period writes them into input_config as
// AIPerf writes its phases, and real AIPerf 0.13 loads that export with its
// own model (BenchmarkConfig validates every phase).
func TestAIPerfReadsWarmupAndSeriesConfig(t *testing.T) {
	venv := requireAIPerf(t)
	url := startBlogSimulator(t)
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "series.json"), []byte(`[{"time_s": 0, "qps": 20}, {"time_s": 0.5, "qps": 40}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := benchIn(t, work, "--model", blogModel, "--url", url, "--streaming", "--request-rate-series", "series.json",
		"--request-count", "8", "--osl", "8", "--warmup-duration", "0.3", "--warmup-grace-period", "1", "--warmup-concurrency", "2",
		"--progress", "off", "--artifact-dir", "run")
	if code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}
	dir := filepath.Join(work, "run")
	runAIPerf(t, 2*time.Minute, nil, filepath.Join(venv, "bin", "python"),
		filepath.Join(repoRoot(t), "e2e", "testdata", "aiperf", "check_artifacts.py"), dir)
	b, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		InputConfig struct {
			Phases []map[string]any `json:"phases"`
		} `json:"input_config"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	phases := doc.InputConfig.Phases
	if len(phases) != 2 || phases[0]["type"] != "concurrency" || phases[0]["concurrency"] != 2.0 || phases[0]["grace_period"] != 1.0 ||
		phases[0]["duration"] != 0.3 || phases[1]["type"] != "poisson" || phases[1]["rate_series"] == nil {
		t.Errorf("input_config phases %v; want a warmup at concurrency 2 for 0.3 s with a 1 s grace period, then poisson at the rate series", phases)
	}
}
