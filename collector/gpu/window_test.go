package gpu

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

var (
	t0    = time.Unix(1_700_000_000, 0)
	gpuA  = Device{GPU: 0, UUID: "GPU-a", ModelName: "NVIDIA H200", Hostname: "n1"}
	gpuB  = Device{GPU: 1, UUID: "GPU-b", ModelName: "NVIDIA H200", Hostname: "n1"}
	nan   = math.NaN()
	never = (*float64)(nil)
)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// syntheticWindow holds samples at t = 0..10 s of two GPUs:
// A draws 100+10t W, its energy counter agrees (100t+5t² J on top of 5 kJ),
// at 50 % utilisation, with 1000+100t MiB used;
// B draws a constant 300 W, has no energy counter and one blank power
// sample (t = 5), at 10t % utilisation, with 2000 MiB used.
func syntheticWindow(capacity int) *Window {
	w := NewWindow(capacity)
	for i := 0; i <= 10; i++ {
		t := float64(i)
		powerB := 300.0
		if i == 5 {
			powerB = nan
		}
		w.Add(Sample{Time: at(t), GPUs: []GPUSample{
			{Device: gpuA, PowerWatts: 100 + 10*t, EnergyMillijoules: (5000 + 100*t + 5*t*t) * 1000, GPUUtilPercent: 50, FBUsedMiB: 1000 + 100*t},
			{Device: gpuB, PowerWatts: powerB, EnergyMillijoules: nan, GPUUtilPercent: 10 * t, FBUsedMiB: 2000},
		}})
	}
	return w
}

func checkStat(t *testing.T, what string, got *float64, want *float64) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil:
		t.Errorf("%s: got %v, want %v", what, deref(got), deref(want))
	case math.Abs(*got-*want) > 1e-9*math.Max(1, math.Abs(*want)):
		t.Errorf("%s: got %v, want %v", what, *got, *want)
	}
}

func deref(p *float64) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func checkGPU(t *testing.T, name string, got, want GPUStats) {
	t.Helper()
	if got.Samples != want.Samples || got.EnergySource != want.EnergySource || math.Abs(got.CoveredSeconds-want.CoveredSeconds) > 1e-9 {
		t.Errorf("%s: samples %d source %q covered %v, want %d %q %v", name,
			got.Samples, got.EnergySource, got.CoveredSeconds, want.Samples, want.EnergySource, want.CoveredSeconds)
	}
	checkStat(t, name+" avg power", got.AvgPowerWatts, want.AvgPowerWatts)
	checkStat(t, name+" peak power", got.PeakPowerWatts, want.PeakPowerWatts)
	checkStat(t, name+" energy", got.EnergyJoules, want.EnergyJoules)
	checkStat(t, name+" energy per token", got.EnergyPerOutputTokenJoules, want.EnergyPerOutputTokenJoules)
	checkStat(t, name+" avg util", got.AvgGPUUtilPercent, want.AvgGPUUtilPercent)
	checkStat(t, name+" peak FB", got.PeakFBUsedMiB, want.PeakFBUsedMiB)
}

func TestWindowStatsWholeRun(t *testing.T) {
	st := syntheticWindow(100).Stats(at(0), at(10), 1000)
	if len(st.GPUs) != 2 || st.GPUs[0].UUID != "GPU-a" || st.GPUs[1].GPU != "1" || st.GPUs[1].ModelName != "NVIDIA H200" {
		t.Fatalf("GPUs %+v", st.GPUs)
	}
	checkGPU(t, "A", st.GPUs[0], GPUStats{Samples: 11, CoveredSeconds: 10,
		AvgPowerWatts: ptr(150), PeakPowerWatts: ptr(200),
		EnergyJoules: ptr(1500), EnergySource: EnergyFromCounter, EnergyPerOutputTokenJoules: ptr(1.5),
		AvgGPUUtilPercent: ptr(50), PeakFBUsedMiB: ptr(2000)})
	checkGPU(t, "B", st.GPUs[1], GPUStats{Samples: 11, CoveredSeconds: 10,
		AvgPowerWatts: ptr(300), PeakPowerWatts: ptr(300),
		EnergyJoules: ptr(3000), EnergySource: EnergyFromPower, EnergyPerOutputTokenJoules: ptr(3),
		AvgGPUUtilPercent: ptr(50), PeakFBUsedMiB: ptr(2000)})
	// Peaks of the sums: at t = 10, 200 + 300 W and 2000 + 2000 MiB.
	checkGPU(t, "total", st.Total, GPUStats{Samples: 11, CoveredSeconds: 10,
		AvgPowerWatts: ptr(450), PeakPowerWatts: ptr(500),
		EnergyJoules: ptr(4500), EnergySource: EnergyMixed, EnergyPerOutputTokenJoules: ptr(4.5),
		AvgGPUUtilPercent: ptr(50), PeakFBUsedMiB: ptr(4000)})
	if _, err := json.Marshal(st); err != nil {
		t.Errorf("stats do not encode as JSON: %v", err)
	}
}

// A window between samples interpolates at its edges.
func TestWindowStatsPartial(t *testing.T) {
	st := syntheticWindow(100).Stats(at(2.5), at(7.5), 0)
	// A: ∫ 100+10t over [2.5, 7.5] = 750 J; the counter, interpolated
	// linearly between its samples, agrees.
	checkGPU(t, "A", st.GPUs[0], GPUStats{Samples: 5, CoveredSeconds: 5,
		AvgPowerWatts: ptr(150), PeakPowerWatts: ptr(170),
		EnergyJoules: ptr(750), EnergySource: EnergyFromCounter, EnergyPerOutputTokenJoules: never,
		AvgGPUUtilPercent: ptr(50), PeakFBUsedMiB: ptr(1700)})
	checkGPU(t, "B", st.GPUs[1], GPUStats{Samples: 5, CoveredSeconds: 5,
		AvgPowerWatts: ptr(300), PeakPowerWatts: ptr(300),
		EnergyJoules: ptr(1500), EnergySource: EnergyFromPower, EnergyPerOutputTokenJoules: never,
		AvgGPUUtilPercent: ptr(50), PeakFBUsedMiB: ptr(2000)})
	checkStat(t, "total energy", st.Total.EnergyJoules, ptr(2250))
	checkStat(t, "total energy per token", st.Total.EnergyPerOutputTokenJoules, never)
}

func TestWindowStatsCounterResetFallsBackToPower(t *testing.T) {
	w := NewWindow(10)
	for i, e := range []float64{9e6, 9.5e6, 1e3, 5e5} { // driver reloaded after t = 1
		w.Add(Sample{Time: at(float64(i)), GPUs: []GPUSample{{Device: gpuA, PowerWatts: 500, EnergyMillijoules: e, GPUUtilPercent: nan, FBUsedMiB: nan}}})
	}
	g := w.Stats(at(0), at(3), 10).GPUs[0]
	checkGPU(t, "A", g, GPUStats{Samples: 4, CoveredSeconds: 3,
		AvgPowerWatts: ptr(500), PeakPowerWatts: ptr(500),
		EnergyJoules: ptr(1500), EnergySource: EnergyFromPower, EnergyPerOutputTokenJoules: ptr(150)})
}

func TestWindowIsBounded(t *testing.T) {
	w := syntheticWindow(5) // keeps t = 6..10
	if len(w.samples) != 5 {
		t.Fatalf("window holds %d samples, want 5", len(w.samples))
	}
	st := w.Stats(at(0), at(10), 0)
	checkGPU(t, "A", st.GPUs[0], GPUStats{Samples: 5, CoveredSeconds: 4,
		AvgPowerWatts: ptr(180), PeakPowerWatts: ptr(200),
		EnergyJoules: ptr(720), EnergySource: EnergyFromCounter,
		AvgGPUUtilPercent: ptr(50), PeakFBUsedMiB: ptr(2000)})
}

func TestWindowStatsOutsideSamples(t *testing.T) {
	w := syntheticWindow(100)
	for name, st := range map[string]WindowStats{
		"empty window":  NewWindow(10).Stats(at(0), at(10), 5),
		"before":        w.Stats(at(-20), at(-10), 5),
		"after":         w.Stats(at(20), at(30), 5),
		"end not after": w.Stats(at(5), at(5), 5),
	} {
		if st.Total.EnergyJoules != nil || st.Total.AvgPowerWatts != nil || st.Total.PeakPowerWatts != nil || st.Total.Samples != 0 {
			t.Errorf("%s: want no statistics, got %+v", name, st.Total)
		}
	}
}
