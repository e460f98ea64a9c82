package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeScenario writes a scenario with one probe, steady, at 5 req/s
// (constant gaps) to the simulator at simAddr, and returns its path.
func writeScenario(t *testing.T, dir, name, simAddr string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(scenario(simAddr)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func scenario(simAddr string) string {
	return fmt.Sprintf(`targets:
  sim:
    url: http://%s/v1
    model: inferprobe-simulator
    timeout: 2s
probes:
  steady:
    target: sim
    arrival: {pattern: constant, rate: 5}
    dataset:
      synthetic:
        input_tokens: {mean: 16}
        output_tokens: {mean: 8}
`, simAddr)
}

// startSimulator runs `inferprobe simulate` on addr and waits until it serves.
func startSimulator(t *testing.T, addr string) *process {
	t.Helper()
	p := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate",
		"--web.listen-address="+addr, "--sim.ttft=20ms", "--sim.itl=5ms")
	waitHealthy(t, p, "http://"+addr+"/health", 10*time.Second)
	return p
}

func TestTargetDownKeepsServing(t *testing.T) {
	dir := t.TempDir()
	simAddr := freeAddr(t)
	sim := startSimulator(t, simAddr)
	addr := freeAddr(t)
	serve := inferprobe(t, "inferprobe serve", dir, "serve",
		"--config.file="+writeScenario(t, dir, "scenario.yml", simAddr), "--web.listen-address="+addr)
	metricsURL := "http://" + addr + "/metrics"
	waitHealthy(t, serve, metricsURL, 10*time.Second)

	// counts scrapes the daemon; /metrics must answer every time, whatever
	// the target does.
	counts := func() (ok, connect float64) {
		t.Helper()
		serve.checkRunning(t)
		fams, err := scrapeText(metricsURL)
		if err != nil {
			t.Fatalf("/metrics while the target is down: %v", err)
		}
		return value(fams, "inferprobe_requests_total", "outcome", "ok"),
			value(fams, "inferprobe_request_errors_total", "reason", "connect")
	}

	eventually(t, 10*time.Second, "probe requests succeed", func() error {
		if ok, _ := counts(); ok < 3 {
			return fmt.Errorf("%v ok requests", ok)
		}
		return nil
	})
	if _, connect := counts(); connect != 0 {
		t.Fatalf("%v connect errors while the simulator was up", connect)
	}

	sim.kill()
	// Two refused connections, 200ms apart at 5 req/s, mean that requests in
	// flight when the simulator died have been recorded.
	var okDown, connectDown float64
	eventually(t, 5*time.Second, "connect errors after the simulator died", func() error {
		if okDown, connectDown = counts(); connectDown < 2 {
			return fmt.Errorf("%v connect errors", connectDown)
		}
		return nil
	})
	eventually(t, 10*time.Second, "ten more connect errors, and no ok request", func() error {
		ok, connect := counts()
		if ok != okDown {
			t.Fatalf("ok requests went from %v to %v while the target was down", okDown, ok)
		}
		if connect < connectDown+10 {
			return fmt.Errorf("connect errors went from %v to %v", connectDown, connect)
		}
		return nil
	})

	// Same port: the daemon must reconnect by itself.
	startSimulator(t, simAddr)
	eventually(t, 10*time.Second, "ok requests resume after the simulator is back", func() error {
		if ok, _ := counts(); ok <= okDown {
			return fmt.Errorf("ok requests still %v", ok)
		}
		return nil
	})
}
