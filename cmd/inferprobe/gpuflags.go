package main

import (
	"log/slog"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/collector/gpu"
)

// gpuFlags configure the GPU telemetry collector of serve and demo.
type gpuFlags struct {
	enabled    bool
	hostEngine string
	fieldsFile string
	// asked is set when a GPU flag was given: the collector then warns
	// when it finds no GPU.
	asked bool
	// simulatedBusy, when set (by the demo), drives simulated GPUs in place
	// of DCGM and NVML: see simulateWith.
	simulatedBusy func() float64
}

func addGPUFlags(cmd *kingpin.CmdClause) *gpuFlags {
	f := &gpuFlags{}
	cmd.Flag("collector.gpu", "Export GPU telemetry from DCGM (NVML when DCGM is absent) with dcgm-exporter's metric names. Without either library it exports inferprobe_gpu_telemetry_up 0 and logs one line: a warning when a GPU flag was given, else at debug level.").
		Default("true").IsSetByUser(&f.asked).BoolVar(&f.enabled)
	cmd.Flag("collector.gpu.hostengine", "nv-hostengine to read from (host:port), for when inferprobe runs beside the GPU server; empty runs DCGM embedded.").
		StringVar(&f.hostEngine)
	cmd.Flag("collector.gpu.fields-file", "GPU field list in dcgm-exporter's counters CSV format; empty uses the built-in default (power, energy, utilisation, memory, clocks, temperatures, profiling, XID).").
		IsSetByUser(&f.asked).StringVar(&f.fieldsFile)
	return f
}

// start registers the collector with reg; nil when disabled. A missing GPU
// library is not an error: only a bad fields file is.
func (f *gpuFlags) start(logger *slog.Logger, reg prometheus.Registerer) (*gpu.Collector, error) {
	if !f.enabled {
		return nil, nil
	}
	if f.simulatedBusy != nil && f.hostEngine == "" {
		return gpu.NewSimulated(gpu.SimulatedOptions{Busy: f.simulatedBusy, FieldsFile: f.fieldsFile, Logger: logger}, reg)
	}
	return gpu.New(gpu.Options{HostEngine: f.hostEngine, FieldsFile: f.fieldsFile, Asked: f.asked, Logger: logger}, reg)
}

// simulateWith makes start export simulated GPUs driven by busy (see
// gpu.SimulatedOptions) instead of reading DCGM or NVML, unless
// --collector.gpu.hostengine asks for a real nv-hostengine. The demo uses
// it: its server is simulated, so real GPUs on the host would not be the
// ones serving its requests.
func (f *gpuFlags) simulateWith(busy func() float64) { f.simulatedBusy = busy }
