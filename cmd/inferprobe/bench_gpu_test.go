package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/simulator"
)

// TestBenchNoGPUUnasked: on a machine without GPU telemetry, a run that did
// not ask for it says nothing about GPUs, in its console or its log, as the
// daemon logs nothing above debug then; one that asked (AIPerf's
// --gpu-telemetry) says there was none.
func TestBenchNoGPUUnasked(t *testing.T) {
	sim, err := simulator.New(simulator.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim.Handler())
	defer ts.Close()
	bench := func(extra ...string) (stdout, stderr string) {
		t.Helper()
		var out, errs bytes.Buffer
		dir := t.TempDir()
		args := append([]string{"--model", simulator.DefaultModel, "--url", ts.URL, "--streaming", "--osl", "4", "--request-count", "3",
			"--artifact-dir", dir, "--workers", "1", "--no-server-metrics", "--progress", "off"}, extra...)
		if code := runBenchArgs(t, &out, &errs, args...); code != 0 {
			t.Fatalf("bench %v: exit %d\n%s", extra, code, errs.String())
		}
		// The directory is named after this test, GPU and all.
		return strings.ReplaceAll(out.String(), dir, "DIR"), strings.ReplaceAll(errs.String(), dir, "DIR")
	}
	asked, _ := bench("--gpu-telemetry")
	if !strings.Contains(asked, "GPU: no telemetry over the run") {
		t.Skip("this machine has GPU telemetry")
	}
	stdout, stderr := bench()
	for name, text := range map[string]string{"console": stdout, "log": stderr} {
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "GPU") {
				t.Errorf("unasked, the %s mentions GPUs: %q", name, line)
			}
		}
	}

	// DCGM exporter URLs alone ask for their GPUs, not this host's.
	sample, err := os.ReadFile("../../gputelemetry/testdata/dcgm-exporter.txt")
	if err != nil {
		t.Fatal(err)
	}
	dcgm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(sample) }))
	defer dcgm.Close()
	stdout, stderr = bench("--gpu-telemetry", dcgm.URL)
	if strings.Contains(stdout+stderr, "GPU: no telemetry") || strings.Contains(stdout+stderr, "GPU telemetry unavailable") {
		t.Errorf("--gpu-telemetry URL asked for this host's GPUs too:\n%s\n%s", stdout, stderr)
	}
	if !strings.Contains(stdout, "GPU telemetry (over the run)") || !strings.Contains(stdout, "NVIDIA H100 80GB HBM3") {
		t.Errorf("no table of the endpoint's GPUs:\n%s", stdout)
	}
}
