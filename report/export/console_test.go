package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/collector/gpu"
)

func TestPrintGPU(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	var out bytes.Buffer
	ConsoleGPU(&out, gpu.WindowStats{
		OutputTokens: 10000,
		GPUs: []gpu.GPUStats{{
			GPU: "0", ModelName: "NVIDIA H200", AvgPowerWatts: f(412.5), PeakPowerWatts: f(655),
			EnergyJoules: f(4125), EnergySource: "counter", EnergyPerOutputTokenJoules: f(0.4125),
			AvgGPUUtilPercent: f(87.5), PeakFBUsedMiB: f(120000),
		}},
		Total: gpu.GPUStats{EnergySource: "counter"},
	})
	for _, want := range []string{"J/output tok", "0 NVIDIA H200", "412.5", "655.0", "4125.0", "0.4125", "87.5", "120000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("GPU section lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	ConsoleGPU(&out, gpu.WindowStats{})
	if !strings.Contains(out.String(), "no telemetry over the run") {
		t.Errorf("without telemetry the report says %q", out.String())
	}
}
