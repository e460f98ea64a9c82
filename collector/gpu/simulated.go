package gpu

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
	"github.com/prometheus/client_golang/prometheus"
)

// SimulatedLabel is the label, with the value "true", on every series of the
// simulated GPUs, so that dashboards can leave them out by default (the
// mixin's simulatedGPULabel; a test checks the two agree) and a demo scraped
// by a shared Prometheus does not add fake GPUs to the real ones' panels.
const SimulatedLabel = "simulated"

// SimulatedBackend is the backend label of simulated GPUs, so that nobody
// mistakes their series for real telemetry.
const SimulatedBackend = "simulated"

// SimulatedOptions configure NewSimulated.
type SimulatedOptions struct {
	// Busy returns the work done so far in sequence-seconds: the time
	// sequences have spent on the GPUs, summed. It only grows; its rate over
	// a read interval is the mean number of sequences being served, which
	// drives utilisation, power, energy and memory. simulator.LoadMeter's
	// RequestSeconds is one.
	Busy func() float64
	// GPUs is the number of simulated GPUs; 0 means 2.
	GPUs int
	// FieldsFile is a field list as for Options; fields the simulation does
	// not model are left out, as an absent field is on a real GPU.
	FieldsFile string
	Logger     *slog.Logger
}

// NewSimulated registers a collector that exports simulated GPUs, under the
// same names and labels as real ones and with
// inferprobe_gpu_telemetry_backend_info{backend="simulated"}. It stands in
// for GPUs where the built-in simulator stands in for the server (the demo),
// so that GPU dashboards and energy-per-token figures have data.
func NewSimulated(opts SimulatedOptions, reg prometheus.Registerer) (*Collector, error) {
	if opts.Busy == nil {
		return nil, fmt.Errorf("simulated GPUs need a Busy function")
	}
	fields, err := LoadFields(opts.FieldsFile)
	if err != nil {
		return nil, err
	}
	n := opts.GPUs
	if n == 0 {
		n = 2
	}
	host := localHostname()
	open := func(fs []Field) (Backend, error) { return newSimulatedBackend(fs, n, host, opts.Busy, time.Now), nil }
	// Opening never fails, so the hint for a missing library is never shown.
	c := newCollector(fields, open, opts.Logger, "", defaultTiming)
	if err := prometheus.WrapRegistererWith(prometheus.Labels{SimulatedLabel: "true"}, reg).Register(c); err != nil {
		return nil, err
	}
	c.start()
	return c, nil
}

// The simulated card: an 80 GB, 700 W datacenter GPU.
const (
	simIdleWatts     = 70.0
	simMaxWatts      = 700.0
	simFBTotalMiB    = 81559.0
	simFBBaseMiB     = 18000.0 // weights and runtime
	simFBKVCacheMiB  = 50000.0 // KV cache when saturated
	simSMClockIdle   = 1410.0
	simSMClockBoost  = 1980.0
	simMemClockMHz   = 2619.0
	simSaturationSeq = 4.0 // sequences at which a GPU is 1-1/e (63 %) busy
)

// simulatedBackend turns the simulator's load into dcgm-exporter's fields.
type simulatedBackend struct {
	fields  []Field
	devices []Device
	busy    func() float64
	now     func() time.Time

	lastBusy float64
	lastTime time.Time
	energy   []float64 // mJ per device, since "boot"
}

func newSimulatedBackend(fields []Field, n int, host string, busy func() float64, now func() time.Time) *simulatedBackend {
	b := &simulatedBackend{fields: fields, busy: busy, now: now, energy: make([]float64, n)}
	for i := range n {
		b.devices = append(b.devices, Device{
			GPU:       uint(i),
			UUID:      fmt.Sprintf("GPU-51a71a7e-0000-4000-8000-%012d", i),
			ModelName: "inferprobe simulated GPU",
			Hostname:  host,
		})
	}
	b.lastBusy, b.lastTime = busy(), now()
	return b
}

func (b *simulatedBackend) Name() string { return SimulatedBackend }
func (b *simulatedBackend) Summary() string {
	return fmt.Sprintf("%d simulated GPUs driven by the simulator's load; not real telemetry", len(b.devices))
}
func (b *simulatedBackend) Devices() []Device { return b.devices }
func (b *simulatedBackend) Close()            {}

// Read derives every device's values from the mean number of sequences in
// flight since the last read. The sequences are spread over the GPUs as
// tensor parallelism would, each GPU a little less busy than the one
// before, so their series can be told apart.
func (b *simulatedBackend) Read() ([][]float64, error) {
	now, busy := b.now(), b.busy()
	seqs := 0.0
	if dt := now.Sub(b.lastTime).Seconds(); dt > 0 {
		seqs = max(busy-b.lastBusy, 0) / dt
		for i := range b.energy {
			b.energy[i] += simPower(simUtil(seqs, i)) * dt * 1000
		}
	}
	b.lastBusy, b.lastTime = busy, now

	rows := nanRows(len(b.devices), len(b.fields))
	for i := range b.devices {
		u := simUtil(seqs, i)
		for j, f := range b.fields {
			rows[i][j] = simField(f.ID, u, b.energy[i])
		}
	}
	return rows, nil
}

// simUtil is the fraction of time GPU i is busy with seqs sequences in
// flight: a GPU decoding even one sequence is busy much of the time, and
// approaches 1 as the batch grows.
func simUtil(seqs float64, i int) float64 {
	return (1 - math.Exp(-seqs/simSaturationSeq)) * (1 - 0.05*float64(i))
}

func simPower(u float64) float64 { return simIdleWatts + (simMaxWatts-simIdleWatts)*u }

// simField is one field's value at utilisation u; NaN for fields the
// simulation does not model.
func simField(id dcgm.Short, u, energyMJ float64) float64 {
	fbUsed := simFBBaseMiB + simFBKVCacheMiB*u
	switch id {
	case dcgm.DCGM_FI_DEV_POWER_USAGE:
		return simPower(u)
	case dcgm.DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
		return math.Round(energyMJ)
	case dcgm.DCGM_FI_DEV_GPU_UTIL:
		return math.Round(100 * u)
	case dcgm.DCGM_FI_DEV_MEM_COPY_UTIL:
		return math.Round(60 * u)
	case dcgm.DCGM_FI_DEV_FB_USED:
		return math.Round(fbUsed)
	case dcgm.DCGM_FI_DEV_FB_FREE:
		return math.Round(simFBTotalMiB - fbUsed)
	case dcgm.DCGM_FI_DEV_SM_CLOCK:
		return math.Round(simSMClockIdle + (simSMClockBoost-simSMClockIdle)*u)
	case dcgm.DCGM_FI_DEV_MEM_CLOCK:
		return simMemClockMHz
	case dcgm.DCGM_FI_DEV_GPU_TEMP:
		return math.Round(32 + 45*u)
	case dcgm.DCGM_FI_DEV_MEMORY_TEMP:
		return math.Round(38 + 40*u)
	case dcgm.DCGM_FI_DEV_XID_ERRORS:
		return 0
	case dcgm.DCGM_FI_PROF_GR_ENGINE_ACTIVE:
		return u
	case dcgm.DCGM_FI_PROF_SM_ACTIVE:
		return 0.9 * u
	case dcgm.DCGM_FI_PROF_PIPE_TENSOR_ACTIVE:
		return 0.55 * u
	case dcgm.DCGM_FI_PROF_DRAM_ACTIVE:
		return 0.7 * u
	}
	return math.NaN()
}
