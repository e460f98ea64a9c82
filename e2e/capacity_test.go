package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSearchBurstInPrometheus: a scheduled search burst in serve finds the
// simulator's capacity (four slots: 4, which its capacity model gives for
// this SLO) and a real Prometheus scrapes it as inferprobe_capacity_*.
func TestSearchBurstInPrometheus(t *testing.T) {
	requirePrometheus(t)
	simAddr, addr := freeAddr(t), freeAddr(t)
	sim := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate", "--web.listen-address="+simAddr,
		"--sim.ttft=100ms", "--sim.itl=25ms", "--sim.max-concurrency=4")
	waitHealthy(t, sim, "http://"+simAddr+"/health", 10*time.Second)

	dir := t.TempDir()
	scenarioFile := filepath.Join(dir, "scenario.yml")
	if err := os.WriteFile(scenarioFile, []byte(fmt.Sprintf(`
targets:
  sim: {url: http://%s/v1, model: inferprobe-simulator}
bursts:
  capacity:
    target: sim
    every: 2s
    requests: 16
    arrival: {pattern: concurrency, concurrency: 1}
    dataset: {synthetic: {input_tokens: {mean: 16}, output_tokens: {mean: 7}}}
    params: {ignore_eos: true}
    search: {recipe: max-concurrency-under-sla, ttft_sla: 225ms, concurrency_min: 2, concurrency_max: 16, sla_warmup: 0s}
`, simAddr)), 0o644); err != nil {
		t.Fatal(err)
	}
	serve := inferprobe(t, "inferprobe serve", dir, "serve", "--config.file="+scenarioFile,
		"--web.listen-address="+addr, "--workers=1", "--no-collector.gpu")
	waitHealthy(t, serve, "http://"+addr+"/-/ready", 10*time.Second)
	prom := startPrometheus(t, "inferprobe", addr)

	const series = `inferprobe_capacity_concurrency{burst="capacity", target="sim", recipe="max-concurrency-under-sla", sla="time_to_first_token:p95:lt:225"}`
	eventually(t, 2*time.Minute, "Prometheus has the search's answer", func() error {
		v, err := prom.scalar(series)
		if err != nil {
			return err
		}
		if v < 3 || v > 5 {
			return fmt.Errorf("capacity %v, want 4 within one", v)
		}
		return nil
	})
	for _, name := range []string{"inferprobe_capacity_output_token_throughput", "inferprobe_capacity_timestamp_seconds"} {
		if v, err := prom.scalar(name + `{burst="capacity"}`); err != nil || v <= 0 {
			t.Errorf("%s = %v (%v), want it above 0", name, v, err)
		}
	}
}
