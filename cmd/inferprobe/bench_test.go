package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/collector/gpu"
)

func TestPrintGPU(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	var out bytes.Buffer
	printGPU(&out, gpu.WindowStats{
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
	printGPU(&out, gpu.WindowStats{})
	if !strings.Contains(out.String(), "no telemetry over the run") {
		t.Errorf("without telemetry the report says %q", out.String())
	}
}

func TestFlagFor(t *testing.T) {
	for field, want := range map[string]string{
		"probes.bench.arrival.rate":                          "--request-rate",
		"probes.bench.arrival.max_concurrency":               "--concurrency",
		"probes.bench.dataset.synthetic.input_tokens.stddev": "--synthetic-input-tokens-stddev",
		"probes.bench.params.stream":                         "--extra-inputs.stream",
		"targets.bench.url":                                  "--url",
	} {
		if got := flagFor(field); got != want {
			t.Errorf("flagFor(%q) = %q, want %q", field, got, want)
		}
	}
}
