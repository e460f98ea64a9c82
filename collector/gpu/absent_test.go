package gpu

import (
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// skipWithGPULibrary skips on a host where DCGM or NVML works: these tests
// are about the host without them.
func skipWithGPULibrary(t *testing.T) {
	t.Helper()
	fields, err := LoadFields("")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := openLocal(fields, "h"); err == nil {
		b.Close()
		t.Skip("a GPU library is present here")
	}
}

// Unasked (on by default), a machine without GPUs is said once at debug
// level, not warned about; asked for, their absence is a warning.
func TestNoGPULibraryWarnsOnlyWhenAsked(t *testing.T) {
	skipWithGPULibrary(t)
	for asked, want := range map[bool]string{false: "level=DEBUG", true: "level=WARN"} {
		logs := &logBuf{}
		logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c, err := New(Options{Logger: logger, Asked: asked}, prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the log line", func() bool { return logs.count() >= 1 })
		c.Close()
		if line := logs.lines()[0]; !strings.Contains(line, want) || !strings.Contains(line, "libnvidia-ml.so.1 not found") {
			t.Errorf("asked %v: %s; want %s with the reason", asked, line, want)
		}
	}
}

// The public path, with the real go-dcgm and go-nvml failing to load.
func TestNoGPULibrary(t *testing.T) {
	skipWithGPULibrary(t)
	logger, logs := newLogger()
	reg := prometheus.NewPedanticRegistry()
	c, err := New(Options{Logger: logger, Asked: true}, reg)
	if err != nil {
		t.Fatalf("New must not fail without a GPU library: %v", err)
	}
	defer c.Close()
	waitFor(t, "the log line", func() bool { return logs.count() >= 1 })

	line := logs.lines()[0]
	t.Log(line)
	for _, want := range []string{
		"level=WARN", "GPU telemetry unavailable", "collector=gpu",
		"libdcgm.so.4 not found", "libnvidia-ml.so.1 not found",
		"install DCGM", "--collector.gpu.hostengine", "--no-collector.gpu",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("log line lacks %q: %s", want, line)
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP inferprobe_gpu_telemetry_up Whether GPU telemetry is being read (1) or not (0): no GPU library or GPU, or the hostengine is unreachable.
# TYPE inferprobe_gpu_telemetry_up gauge
inferprobe_gpu_telemetry_up 0
# HELP inferprobe_gpu_telemetry_backend_info The library GPU telemetry is read from: dcgm, nvml, simulated (the demo's fake GPUs), or none.
# TYPE inferprobe_gpu_telemetry_backend_info gauge
inferprobe_gpu_telemetry_backend_info{backend="none"} 1
# HELP inferprobe_collector_scrape_success inferprobe: Whether a collector's latest read of its source succeeded.
# TYPE inferprobe_collector_scrape_success gauge
inferprobe_collector_scrape_success{collector="gpu"} 0
`), "inferprobe_gpu_telemetry_up", "inferprobe_gpu_telemetry_backend_info", "inferprobe_collector_scrape_success"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 4 {
		t.Errorf("want only the 4 telemetry series and no DCGM_ ones, got %d (%v)", n, err)
	}
}

// Retrying in the background logs nothing more.
func TestNoGPULibraryLogsOnce(t *testing.T) {
	skipWithGPULibrary(t)
	fields, err := LoadFields("")
	if err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int32
	open := func(fs []Field) (Backend, error) {
		attempts.Add(1)
		return openLocal(fs, "h")
	}
	logger, logs := newLogger()
	c := newCollector(fields, open, logger, "hint", fastTiming)
	c.asked = true
	c.start()
	defer c.Close()
	waitFor(t, "retries", func() bool { return attempts.Load() >= 10 })
	if n := logs.count(); n != 1 {
		t.Errorf("%d log lines after %d attempts, want 1: %q", n, attempts.Load(), logs.lines())
	}
}

func TestUnreachableHostEngine(t *testing.T) {
	skipWithGPULibrary(t)
	logger, logs := newLogger()
	c, err := New(Options{Logger: logger, HostEngine: "127.0.0.1:1"}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitFor(t, "the log line", func() bool { return logs.count() >= 1 })
	line := logs.lines()[0]
	for _, want := range []string{"nv-hostengine at 127.0.0.1:1", "start nv-hostengine there", "--no-collector.gpu"} {
		if !strings.Contains(line, want) {
			t.Errorf("log line lacks %q: %s", want, line)
		}
	}
}

func TestBadFieldsFileIsAnError(t *testing.T) {
	if _, err := New(Options{FieldsFile: "testdata/does-not-exist.csv"}, prometheus.NewRegistry()); err == nil {
		t.Error("want an error for a missing fields file")
	}
}
