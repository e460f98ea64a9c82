package gpu

import (
	"bytes"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// fastTiming makes the background loop quick enough for tests.
var fastTiming = timing{interval: 5 * time.Millisecond, backoffMin: time.Millisecond, backoffMax: 10 * time.Millisecond, keep: time.Second}

// logBuf collects log lines from the collector's goroutine.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSuffix(l.b.String(), "\n"), "\n")
}

func (l *logBuf) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), "\n")
}

func newLogger() (*slog.Logger, *logBuf) {
	buf := &logBuf{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo})), buf
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// gauge returns the value of the one series of name, or NaN when absent.
func gauge(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.Metric) == 1 {
			return mf.Metric[0].GetGauge().GetValue()
		}
	}
	return math.NaN()
}

func h200s() []Device {
	return []Device{
		{GPU: 0, UUID: "GPU-0a", ModelName: "NVIDIA H200", Hostname: "node1"},
		{GPU: 1, UUID: "GPU-1b", ModelName: "NVIDIA H200", Hostname: "node1"},
	}
}

func startFake(t *testing.T, e *fakeEngine, logger *slog.Logger) (*Collector, *prometheus.Registry) {
	t.Helper()
	fields, err := LoadFields("")
	if err != nil {
		t.Fatal(err)
	}
	c := newCollector(fields, e.open, logger, "test hint", fastTiming)
	c.asked = true // a hostengine's, which asks
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	c.start()
	t.Cleanup(c.Close)
	return c, reg
}

func TestFakeBackendExportsDCGMExporterFamilies(t *testing.T) {
	nan := math.NaN()
	e := &fakeEngine{devices: h200s(), values: map[string][]float64{
		"DCGM_FI_DEV_SM_CLOCK":                 {1980, 345},
		"DCGM_FI_DEV_MEM_CLOCK":                {2619, 2619},
		"DCGM_FI_DEV_MEMORY_TEMP":              {58, 29},
		"DCGM_FI_DEV_GPU_TEMP":                 {61, 30},
		"DCGM_FI_DEV_POWER_USAGE":              {312.5, 98.25},
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": {1.5e9, 2.25e9},
		"DCGM_FI_DEV_GPU_UTIL":                 {87, 0},
		"DCGM_FI_DEV_MEM_COPY_UTIL":            {45, 0},
		"DCGM_FI_DEV_FB_FREE":                  {23000, 142000},
		"DCGM_FI_DEV_FB_USED":                  {120000, 512},
		"DCGM_FI_DEV_XID_ERRORS":               {0, 79},
		// GPU 1 has no profiling module: the backend returns no value.
		"DCGM_FI_PROF_GR_ENGINE_ACTIVE":   {0.91, nan},
		"DCGM_FI_PROF_SM_ACTIVE":          {0.85, nan},
		"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": {0.42, nan},
		"DCGM_FI_PROF_DRAM_ACTIVE":        {0.66, nan},
	}}
	_, reg := startFake(t, e, nil)
	waitFor(t, "telemetry up", func() bool { return gauge(t, reg, "inferprobe_gpu_telemetry_up") == 1 })

	const want = `
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{Hostname="node1",UUID="GPU-0a",gpu="0",modelName="NVIDIA H200"} 312.5
DCGM_FI_DEV_POWER_USAGE{Hostname="node1",UUID="GPU-1b",gpu="1",modelName="NVIDIA H200"} 98.25
# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{Hostname="node1",UUID="GPU-0a",gpu="0",modelName="NVIDIA H200"} 1.5e+09
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{Hostname="node1",UUID="GPU-1b",gpu="1",modelName="NVIDIA H200"} 2.25e+09
# HELP DCGM_FI_PROF_SM_ACTIVE The ratio of cycles an SM has at least 1 warp assigned.
# TYPE DCGM_FI_PROF_SM_ACTIVE gauge
DCGM_FI_PROF_SM_ACTIVE{Hostname="node1",UUID="GPU-0a",gpu="0",modelName="NVIDIA H200"} 0.85
# HELP inferprobe_gpu_telemetry_up Whether GPU telemetry is being read (1) or not (0): no GPU library or GPU, or the hostengine is unreachable.
# TYPE inferprobe_gpu_telemetry_up gauge
inferprobe_gpu_telemetry_up 1
# HELP inferprobe_gpu_telemetry_backend_info The library GPU telemetry is read from: dcgm, nvml, simulated (the demo's fake GPUs), or none.
# TYPE inferprobe_gpu_telemetry_backend_info gauge
inferprobe_gpu_telemetry_backend_info{backend="dcgm"} 1
# HELP inferprobe_collector_scrape_success inferprobe: Whether a collector's latest read of its source succeeded.
# TYPE inferprobe_collector_scrape_success gauge
inferprobe_collector_scrape_success{collector="gpu"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_PROF_SM_ACTIVE",
		"inferprobe_gpu_telemetry_up", "inferprobe_gpu_telemetry_backend_info", "inferprobe_collector_scrape_success"); err != nil {
		t.Error(err)
	}

	// Every family of the default list, with dcgm-exporter's type and labels.
	wantTypes := map[string]dto.MetricType{
		"DCGM_FI_DEV_SM_CLOCK": dto.MetricType_GAUGE, "DCGM_FI_DEV_MEM_CLOCK": dto.MetricType_GAUGE,
		"DCGM_FI_DEV_MEMORY_TEMP": dto.MetricType_GAUGE, "DCGM_FI_DEV_GPU_TEMP": dto.MetricType_GAUGE,
		"DCGM_FI_DEV_POWER_USAGE": dto.MetricType_GAUGE, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": dto.MetricType_COUNTER,
		"DCGM_FI_DEV_GPU_UTIL": dto.MetricType_GAUGE, "DCGM_FI_DEV_MEM_COPY_UTIL": dto.MetricType_GAUGE,
		"DCGM_FI_DEV_FB_FREE": dto.MetricType_GAUGE, "DCGM_FI_DEV_FB_USED": dto.MetricType_GAUGE,
		"DCGM_FI_DEV_XID_ERRORS":        dto.MetricType_GAUGE,
		"DCGM_FI_PROF_GR_ENGINE_ACTIVE": dto.MetricType_GAUGE, "DCGM_FI_PROF_SM_ACTIVE": dto.MetricType_GAUGE,
		"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": dto.MetricType_GAUGE, "DCGM_FI_PROF_DRAM_ACTIVE": dto.MetricType_GAUGE,
		"inferprobe_gpu_telemetry_up": dto.MetricType_GAUGE, "inferprobe_gpu_telemetry_backend_info": dto.MetricType_GAUGE,
		"inferprobe_collector_scrape_duration_seconds": dto.MetricType_GAUGE, "inferprobe_collector_scrape_success": dto.MetricType_GAUGE,
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
		typ, ok := wantTypes[mf.GetName()]
		if !ok {
			t.Errorf("unexpected family %s", mf.GetName())
			continue
		}
		if mf.GetType() != typ {
			t.Errorf("%s: type %v, want %v", mf.GetName(), mf.GetType(), typ)
		}
		if !strings.HasPrefix(mf.GetName(), "DCGM_") {
			continue
		}
		for _, m := range mf.Metric {
			var names []string
			for _, lp := range m.Label {
				names = append(names, lp.GetName())
			}
			if strings.Join(names, ",") != "Hostname,UUID,gpu,modelName" {
				t.Errorf("%s: labels %v, want dcgm-exporter's gpu, UUID, modelName, Hostname", mf.GetName(), names)
			}
		}
	}
	for name := range wantTypes {
		if !got[name] {
			t.Errorf("family %s missing", name)
		}
	}
}

func TestReconnectsWithBackoffAndLogsOnlyStateChanges(t *testing.T) {
	e := &fakeEngine{devices: h200s(), down: true, values: map[string][]float64{"DCGM_FI_DEV_POWER_USAGE": {300, 100}}}
	logger, logs := newLogger()
	_, reg := startFake(t, e, logger)
	up := func() float64 { return gauge(t, reg, "inferprobe_gpu_telemetry_up") }

	waitFor(t, "first failure logged", func() bool { return logs.count() == 1 })
	waitFor(t, "several attempts", func() bool { return e.openCount() >= 5 })
	if got := logs.count(); got != 1 || !strings.Contains(logs.lines()[0], "GPU telemetry unavailable; test hint") {
		t.Fatalf("want one line saying telemetry is unavailable, got %q", logs.lines())
	}
	if up() != 0 || gauge(t, reg, "DCGM_FI_DEV_POWER_USAGE") == gauge(t, reg, "DCGM_FI_DEV_POWER_USAGE") {
		t.Fatal("want telemetry_up 0 and no GPU series while the hostengine is down")
	}

	e.setDown(false)
	waitFor(t, "telemetry up", func() bool { return up() == 1 })
	e.setDown(true)
	waitFor(t, "telemetry lost", func() bool { return up() == 0 })
	opens := e.openCount()
	waitFor(t, "reconnect attempts", func() bool { return e.openCount() >= opens+5 })
	e.setDown(false)
	waitFor(t, "telemetry back", func() bool { return up() == 1 })

	lines := logs.lines()
	want := []string{"GPU telemetry unavailable", "GPU telemetry on", "GPU telemetry lost; reconnecting", "GPU telemetry on"}
	if len(lines) != len(want) {
		t.Fatalf("want one line per state change %q, got %q", want, lines)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: want %q in %q", i, w, lines[i])
		}
	}
	if gauge(t, reg, "inferprobe_gpu_telemetry_backend_info") != 1 {
		t.Error("want backend_info 1")
	}
}

func TestScrapeDoesNotWaitForConnection(t *testing.T) {
	block := make(chan struct{})
	e := &fakeEngine{devices: h200s(), block: block}
	_, reg := startFake(t, e, nil)
	defer close(block) // before Cleanup's Close, which waits for the attempt
	waitFor(t, "a connection attempt", func() bool { return e.openCount() == 1 })
	// The attempt hangs; gathering must not.
	if up := gauge(t, reg, "inferprobe_gpu_telemetry_up"); up != 0 {
		t.Errorf("telemetry_up %v while connecting, want 0", up)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP inferprobe_gpu_telemetry_backend_info The library GPU telemetry is read from: dcgm, nvml, simulated (the demo's fake GPUs), or none.
# TYPE inferprobe_gpu_telemetry_backend_info gauge
inferprobe_gpu_telemetry_backend_info{backend="none"} 1
`), "inferprobe_gpu_telemetry_backend_info"); err != nil {
		t.Error(err)
	}
}

func TestCollectorFeedsWindow(t *testing.T) {
	e := &fakeEngine{devices: h200s(), values: map[string][]float64{
		"DCGM_FI_DEV_POWER_USAGE": {300, 100}, "DCGM_FI_DEV_FB_USED": {1000, 10},
	}}
	start := time.Now()
	c, reg := startFake(t, e, nil)
	waitFor(t, "telemetry up", func() bool { return gauge(t, reg, "inferprobe_gpu_telemetry_up") == 1 })
	var st WindowStats
	waitFor(t, "two samples", func() bool {
		st = c.Window().Stats(start, time.Now(), 100)
		return st.Total.Samples >= 2
	})
	if len(st.GPUs) != 2 || *st.GPUs[0].AvgPowerWatts != 300 || *st.Total.AvgPowerWatts != 400 || *st.Total.PeakFBUsedMiB != 1010 {
		t.Errorf("unexpected stats %+v", st)
	}
	if st.Total.EnergySource != EnergyFromPower {
		t.Errorf("energy source %q without the counter, want %q", st.Total.EnergySource, EnergyFromPower)
	}
}

// Fields the window needs are read even when the field list leaves them
// out, but only the listed ones are exported.
func TestWindowFieldsReadButNotExported(t *testing.T) {
	fields, err := ParseFields(strings.NewReader("DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).\n"), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	e := &fakeEngine{devices: h200s()[:1], values: map[string][]float64{"DCGM_FI_DEV_GPU_TEMP": {60}, "DCGM_FI_DEV_POWER_USAGE": {250}}}
	c := newCollector(fields, e.open, nil, "", fastTiming)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	start := time.Now()
	c.start()
	defer c.Close()
	waitFor(t, "a sample with power", func() bool {
		p := c.Window().Stats(start, time.Now(), 0).Total.PeakPowerWatts
		return p != nil && *p == 250
	})
	if n, err := testutil.GatherAndCount(reg, "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP"); err != nil || n != 1 {
		t.Errorf("want only DCGM_FI_DEV_GPU_TEMP exported, got %d series (%v)", n, err)
	}
}

func TestBackoff(t *testing.T) {
	b := backoff{min: time.Second, max: 10 * time.Second}
	var got []time.Duration
	for range 6 {
		got = append(got, b.delay())
	}
	b.reset()
	got = append(got, b.delay())
	want := []time.Duration{1, 2, 4, 8, 10, 10, 1}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("delays %v, want %v seconds", got, want)
		}
	}
}

func TestHostnameFor(t *testing.T) {
	local := localHostname()
	for in, want := range map[string]string{
		"":                      local,
		"localhost:5555":        local,
		"127.0.0.1:5555":        local,
		"[::1]:5555":            local,
		"unix:///run/dcgm.sock": local,
		"gpu-node-3:5555":       "gpu-node-3",
		"10.0.0.5:5555":         "10.0.0.5",
		"gpu-node-3":            "gpu-node-3",
		"tcp://gpu7:5555":       "gpu7",
	} {
		if got := hostnameFor(in); got != want {
			t.Errorf("hostnameFor(%q) = %q, want %q", in, got, want)
		}
	}
}
