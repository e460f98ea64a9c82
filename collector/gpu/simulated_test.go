package gpu

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
	"github.com/inferprobe/inferprobe/mixin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The simulated GPUs follow the load: idle at idle power, busier and
// hotter with more sequences in flight, and the energy counter integrates
// the power drawn between reads.
func TestSimulatedBackendFollowsLoad(t *testing.T) {
	fields, err := LoadFields("")
	if err != nil {
		t.Fatal(err)
	}
	// A field the simulation does not model, as a fields file may add.
	fields = append(fields, Field{Name: "DCGM_FI_DEV_ENC_UTIL", ID: dcgm.DCGM_FI_DEV_ENC_UTIL, Type: prometheus.GaugeValue, Help: "x"})
	col := func(id dcgm.Short) int {
		for j, f := range fields {
			if f.ID == id {
				return j
			}
		}
		t.Fatalf("field %d not in the list", id)
		return -1
	}
	power, energy, util := col(dcgm.DCGM_FI_DEV_POWER_USAGE), col(dcgm.DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION), col(dcgm.DCGM_FI_DEV_GPU_UTIL)
	fbUsed, fbFree := col(dcgm.DCGM_FI_DEV_FB_USED), col(dcgm.DCGM_FI_DEV_FB_FREE)

	clock, busy := time.Unix(1000, 0), 0.0
	b := newSimulatedBackend(fields, 2, "node1", func() float64 { return busy }, func() time.Time { return clock })
	if b.Name() != "simulated" || len(b.Devices()) != 2 {
		t.Fatalf("backend %q with %d devices, want simulated with 2", b.Name(), len(b.Devices()))
	}
	for i, d := range b.Devices() {
		if d.GPU != uint(i) || d.Hostname != "node1" || !strings.Contains(d.ModelName, "simulated") {
			t.Errorf("device %d = %+v, want gpu %d on node1 named as simulated", i, d, i)
		}
	}
	read := func() [][]float64 {
		t.Helper()
		rows, err := b.Read()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}

	clock = clock.Add(2 * time.Second) // idle for 2 s
	idle := read()
	if got := idle[0][power]; got != simIdleWatts {
		t.Errorf("idle power = %v W, want %v", got, simIdleWatts)
	}
	if got := idle[0][util]; got != 0 {
		t.Errorf("idle utilisation = %v %%, want 0", got)
	}
	if got, want := idle[0][energy], 2*simIdleWatts*1000; got != want {
		t.Errorf("energy after 2 s idle = %v mJ, want %v", got, want)
	}
	if !math.IsNaN(idle[0][len(fields)-1]) {
		t.Errorf("unmodelled field = %v, want NaN (not exported)", idle[0][len(fields)-1])
	}

	// 4 sequences in flight on average over the next second.
	clock, busy = clock.Add(time.Second), 4
	loaded := read()
	u := 1 - math.Exp(-1)
	if got, want := loaded[0][util], math.Round(100*u); got != want {
		t.Errorf("utilisation with 4 sequences = %v %%, want %v", got, want)
	}
	wantPower := simIdleWatts + (simMaxWatts-simIdleWatts)*u
	if got := loaded[0][power]; math.Abs(got-wantPower) > 1e-9 {
		t.Errorf("power with 4 sequences = %v W, want %v", got, wantPower)
	}
	if got, want := loaded[0][energy]-idle[0][energy], math.Round(wantPower*1000); math.Abs(got-want) > 1 {
		t.Errorf("energy over the loaded second = %v mJ, want %v", got, want)
	}
	if loaded[1][power] >= loaded[0][power] || loaded[1][power] <= simIdleWatts {
		t.Errorf("GPU 1 power %v W: want busy but a little below GPU 0's %v W", loaded[1][power], loaded[0][power])
	}
	if loaded[0][fbUsed] <= idle[0][fbUsed] || loaded[0][fbUsed]+loaded[0][fbFree] != simFBTotalMiB {
		t.Errorf("memory used %v (idle %v), free %v: want more used under load, used+free = %v",
			loaded[0][fbUsed], idle[0][fbUsed], loaded[0][fbFree], simFBTotalMiB)
	}

	// Load that falls back does not make the counter run backwards.
	clock = clock.Add(time.Second)
	after := read()
	if after[0][energy] < loaded[0][energy] || after[0][util] != 0 {
		t.Errorf("after the load: energy %v mJ (was %v), utilisation %v %%: want growing energy and 0 %%",
			after[0][energy], loaded[0][energy], after[0][util])
	}
}

// NewSimulated exports the simulated GPUs under dcgm-exporter's names and
// says they are simulated.
func TestNewSimulatedExportsSimulatedBackend(t *testing.T) {
	if _, err := NewSimulated(SimulatedOptions{}, prometheus.NewRegistry()); err == nil {
		t.Fatal("NewSimulated without Busy: no error")
	}
	reg := prometheus.NewPedanticRegistry()
	c, err := NewSimulated(SimulatedOptions{Busy: func() float64 { return 0 }}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	waitFor(t, "telemetry up", func() bool { return gauge(t, reg, "inferprobe_gpu_telemetry_up") == 1 })
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP inferprobe_gpu_telemetry_backend_info The library GPU telemetry is read from: dcgm, nvml, simulated (the demo's fake GPUs), or none.
# TYPE inferprobe_gpu_telemetry_backend_info gauge
inferprobe_gpu_telemetry_backend_info{backend="simulated",simulated="true"} 1
`), "inferprobe_gpu_telemetry_backend_info"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg, "DCGM_FI_DEV_POWER_USAGE"); err != nil || n != 2 {
		t.Errorf("DCGM_FI_DEV_POWER_USAGE: %d series (%v), want 2", n, err)
	}
	// Every GPU series says it is simulated, under the label the dashboards
	// exclude by default.
	cfg, err := mixin.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SimulatedGPULabel != SimulatedLabel {
		t.Errorf("the mixin's simulatedGPULabel is %q, the collector's label %q: make them agree", cfg.SimulatedGPULabel, SimulatedLabel)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			found := false
			for _, l := range m.GetLabel() {
				found = found || (l.GetName() == SimulatedLabel && l.GetValue() == "true")
			}
			if !found {
				t.Errorf("%s %v: no %s=\"true\"", mf.GetName(), m.GetLabel(), SimulatedLabel)
			}
		}
	}
}
