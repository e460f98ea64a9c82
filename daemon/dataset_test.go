package daemon_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/daemon"
)

// TestDatasetFailsMidRun: a probe whose dataset file goes bad while it runs
// records one dataset error and stops; a reload after the file is fixed
// starts it again, although its configuration did not change.
func TestDatasetFailsMidRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "prompts.jsonl")
	good := []byte("{\"text\": \"one\"}\n{\"text\": \"two\"}\n")
	if err := os.WriteFile(file, good, 0o644); err != nil {
		t.Fatal(err)
	}
	l := &loader{}
	l.set(`targets:
  tp: {url: http://127.0.0.1:9/v1, model: m}
probes:
  p:
    target: tp
    arrival: {pattern: constant, rate: 200}
    dataset: {file: {path: `+file+`, format: single_turn}}
`, nil)
	exec := newFakeExec()
	d := daemon.New(quietLogger(), prometheus.NewRegistry(), l.load, exec)
	start(t, d)
	waitFor(t, "requests from the file", func() bool { return len(exec.sent("tp")) >= 4 })

	// Rewritten in place: the probe's open file now holds a bad line, which
	// it reads on its next pass over the file.
	if err := os.WriteFile(file, []byte("{\"text\": \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a dataset error", func() bool { return datasetErrors(t, d) == 1 })
	stopped := len(exec.sent("tp"))
	waitFor(t, "the probe to stay stopped", func() bool {
		return len(exec.sent("tp")) == stopped && datasetErrors(t, d) == 1
	})

	if err := os.WriteFile(file, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the probe to send again after the reload", func() bool { return len(exec.sent("tp")) >= stopped+4 })
	if n := datasetErrors(t, d); n != 1 {
		t.Errorf("%v dataset errors, want 1", n)
	}
}

// datasetErrors is inferprobe_request_errors_total{reason="dataset"}, 0 when absent.
func datasetErrors(t *testing.T, d *daemon.Daemon) float64 {
	t.Helper()
	v, _ := counter(t, d, "inferprobe_request_errors_total", map[string]string{"reason": "dataset"})
	return v
}
