package gpu

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// TestRealGPU reads this host's GPUs through the real libraries: each
// backend that opens, then the collector. It runs only with
// INFERPROBE_GPU_TEST=1, on a GPU machine (see testdata/device-check.sh);
// INFERPROBE_GPU_HOSTENGINE=host:port adds standalone DCGM.
func TestRealGPU(t *testing.T) {
	if os.Getenv("INFERPROBE_GPU_TEST") == "" {
		t.Skip("set INFERPROBE_GPU_TEST=1 on a machine with an NVIDIA GPU")
	}
	fields, err := LoadFields("")
	if err != nil {
		t.Fatal(err)
	}
	hostEngine := os.Getenv("INFERPROBE_GPU_HOSTENGINE")
	backends := map[string]func() (Backend, error){
		"dcgm embedded": func() (Backend, error) { return openDCGM(fields, "", localHostname()) },
		"nvml":          func() (Backend, error) { return openNVML(fields, localHostname(), nil) },
	}
	if hostEngine != "" {
		backends["dcgm standalone"] = func() (Backend, error) { return openRemote(fields, hostEngine, hostnameFor(hostEngine)) }
	}
	opened := 0
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			b, err := open()
			if err != nil {
				t.Skipf("does not open here: %v", err)
			}
			defer b.Close()
			opened++
			t.Logf("%s: %s", b.Name(), b.Summary())
			checkRealReads(t, b, fields)
		})
	}
	if opened == 0 {
		t.Fatal("no backend opened on a GPU machine")
	}

	// The collector as the daemon runs it.
	reg := prometheus.NewPedanticRegistry()
	c, err := New(Options{HostEngine: hostEngine}, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	waitFor(t, "telemetry up", func() bool { return gauge(t, reg, "inferprobe_gpu_telemetry_up") == 1 })
	time.Sleep(3 * time.Second)
	st := c.Window().Stats(start, time.Now(), 1000)
	js, _ := json.MarshalIndent(st, "", "  ")
	t.Logf("window stats over %v, as if 1000 output tokens:\n%s", time.Since(start).Round(time.Millisecond), js)
	if st.Total.AvgPowerWatts == nil || *st.Total.AvgPowerWatts <= 0 || st.Total.EnergyJoules == nil || *st.Total.EnergyJoules <= 0 {
		t.Errorf("want power and energy in the window stats, got %s", js)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, mf := range mfs {
		_, _ = expfmt.MetricFamilyToText(&sb, mf)
	}
	t.Logf("/metrics of the collector:\n%s", sb.String())
}

func checkRealReads(t *testing.T, b Backend, fields []Field) {
	devs := b.Devices()
	if len(devs) == 0 {
		t.Fatal("no devices")
	}
	col := map[string]int{}
	for i, f := range fields {
		col[f.Name] = i
	}
	var first [][]float64
	for i := range 3 {
		if i > 0 {
			time.Sleep(time.Second)
		}
		rows, err := b.Read()
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if first == nil {
			first = rows
		}
		for d, dev := range devs {
			var vals []string
			for j, f := range fields {
				if !math.IsNaN(rows[d][j]) {
					vals = append(vals, f.Name+"="+formatFloat(rows[d][j]))
				}
			}
			t.Logf("read %d gpu %d %s %q: %s", i, dev.GPU, dev.UUID, dev.ModelName, strings.Join(vals, " "))
		}
		if i < 2 {
			continue
		}
		for d, dev := range devs {
			if !strings.HasPrefix(dev.UUID, "GPU-") || dev.ModelName == "" || dev.Hostname == "" {
				t.Errorf("gpu %d: identity %+v", dev.GPU, dev)
			}
			if p := rows[d][col["DCGM_FI_DEV_POWER_USAGE"]]; !(p > 10 && p < 2000) {
				t.Errorf("gpu %d: power %v W, want a plausible draw", dev.GPU, p)
			}
			if used, free := rows[d][col["DCGM_FI_DEV_FB_USED"]], rows[d][col["DCGM_FI_DEV_FB_FREE"]]; !(used+free > 1000) {
				t.Errorf("gpu %d: FB used %v + free %v MiB, want the card's memory", dev.GPU, used, free)
			}
			e0, e1 := first[d][col["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]], rows[d][col["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]]
			if !(e1 > e0) {
				t.Errorf("gpu %d: energy counter %v -> %v mJ over 2 s, want it rising", dev.GPU, e0, e1)
			}
		}
	}
}

func formatFloat(v float64) string {
	s, _ := json.Marshal(v)
	return string(s)
}
