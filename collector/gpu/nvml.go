package gpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlBackend reads the subset of fields NVML offers, for hosts with the
// driver but without DCGM. Values are converted to DCGM's units so the
// metrics mean the same whichever backend serves them.
type nvmlBackend struct {
	handles   []nvml.Device
	devices   []Device
	nfields   int
	reads     []nvmlRead
	unserved  []string // configured fields NVML does not offer
	memInfoV2 bool
	dcgmErr   error // why DCGM is not used
}

type nvmlRead struct {
	col int
	get nvmlGetter
}

type nvmlGetter func(b *nvmlBackend, d nvml.Device) (float64, nvml.Return)

// nvmlFields are the DCGM fields NVML can serve, each read the way DCGM
// reads it from NVML.
var nvmlFields = map[dcgm.Short]nvmlGetter{
	dcgm.DCGM_FI_DEV_POWER_USAGE: func(_ *nvmlBackend, d nvml.Device) (float64, nvml.Return) {
		mw, r := d.GetPowerUsage()
		return float64(mw) / 1000, r // mW -> W
	},
	dcgm.DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION: func(_ *nvmlBackend, d nvml.Device) (float64, nvml.Return) {
		mj, r := d.GetTotalEnergyConsumption()
		return float64(mj), r // mJ, as DCGM
	},
	dcgm.DCGM_FI_DEV_GPU_UTIL: func(_ *nvmlBackend, d nvml.Device) (float64, nvml.Return) {
		u, r := d.GetUtilizationRates()
		return float64(u.Gpu), r
	},
	dcgm.DCGM_FI_DEV_MEM_COPY_UTIL: func(_ *nvmlBackend, d nvml.Device) (float64, nvml.Return) {
		u, r := d.GetUtilizationRates()
		return float64(u.Memory), r
	},
	dcgm.DCGM_FI_DEV_FB_USED: func(b *nvmlBackend, d nvml.Device) (float64, nvml.Return) {
		used, _, r := b.memInfo(d)
		return used, r
	},
	dcgm.DCGM_FI_DEV_FB_FREE: func(b *nvmlBackend, d nvml.Device) (float64, nvml.Return) {
		_, free, r := b.memInfo(d)
		return free, r
	},
	dcgm.DCGM_FI_DEV_SM_CLOCK: func(_ *nvmlBackend, d nvml.Device) (float64, nvml.Return) {
		mhz, r := d.GetClockInfo(nvml.CLOCK_SM)
		return float64(mhz), r
	},
	dcgm.DCGM_FI_DEV_MEM_CLOCK: func(_ *nvmlBackend, d nvml.Device) (float64, nvml.Return) {
		mhz, r := d.GetClockInfo(nvml.CLOCK_MEM)
		return float64(mhz), r
	},
	dcgm.DCGM_FI_DEV_GPU_TEMP: func(_ *nvmlBackend, d nvml.Device) (float64, nvml.Return) {
		// GetTemperatureV needs a newer driver than many hosts run, and a
		// symbol missing from the driver's NVML aborts the process.
		c, r := d.GetTemperature(nvml.TEMPERATURE_GPU)
		return float64(c), r
	},
	dcgm.DCGM_FI_DEV_MEMORY_TEMP: func(_ *nvmlBackend, d nvml.Device) (float64, nvml.Return) {
		v := []nvml.FieldValue{{FieldId: nvml.FI_DEV_MEMORY_TEMP}}
		if r := d.GetFieldValues(v); r != nvml.SUCCESS {
			return 0, r
		}
		return nvmlFieldValue(v[0])
	},
}

// memInfo returns framebuffer used and free in MiB. The v2 call, where the
// driver has it, leaves reserved memory out of used, as DCGM does.
func (b *nvmlBackend) memInfo(d nvml.Device) (used, free float64, r nvml.Return) {
	const mib = 1 << 20
	if b.memInfoV2 {
		m, r := d.GetMemoryInfo_v2()
		return float64(m.Used) / mib, float64(m.Free) / mib, r
	}
	m, r := d.GetMemoryInfo()
	return float64(m.Used) / mib, float64(m.Free) / mib, r
}

func openNVML(fields []Field, hostname string, dcgmErr error) (_ Backend, err error) {
	if r := nvml.Init(); r != nvml.SUCCESS {
		if r == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, errors.New("libnvidia-ml.so.1 not found (no NVIDIA driver)")
		}
		return nil, fmt.Errorf("init: %v", nvml.ErrorString(r))
	}
	defer func() {
		if err != nil {
			nvml.Shutdown()
		}
	}()
	n, r := nvml.DeviceGetCount()
	if r != nvml.SUCCESS {
		return nil, fmt.Errorf("counting GPUs: %v", nvml.ErrorString(r))
	}
	if n == 0 {
		return nil, errNoGPUs
	}
	b := &nvmlBackend{
		nfields:   len(fields),
		dcgmErr:   dcgmErr,
		memInfoV2: nvml.Extensions().LookupSymbol("nvmlDeviceGetMemoryInfo_v2") == nil,
	}
	for i := range n {
		d, r := nvml.DeviceGetHandleByIndex(i)
		if r != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU %d: %v", i, nvml.ErrorString(r))
		}
		uuid, r := d.GetUUID()
		if r != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU %d UUID: %v", i, nvml.ErrorString(r))
		}
		model, r := d.GetName()
		if r != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU %d name: %v", i, nvml.ErrorString(r))
		}
		b.handles = append(b.handles, d)
		b.devices = append(b.devices, Device{GPU: uint(i), UUID: uuid, ModelName: model, Hostname: hostname})
	}
	for i, f := range fields {
		if get, ok := nvmlFields[f.ID]; ok {
			b.reads = append(b.reads, nvmlRead{col: i, get: get})
		} else {
			b.unserved = append(b.unserved, f.Name)
		}
	}
	return b, nil
}

func (b *nvmlBackend) Name() string      { return "nvml" }
func (b *nvmlBackend) Devices() []Device { return b.devices }

func (b *nvmlBackend) Summary() string {
	s := fmt.Sprintf("NVML, %d GPUs", len(b.devices))
	if b.dcgmErr != nil {
		s += fmt.Sprintf(" (DCGM unavailable: %v)", b.dcgmErr)
	}
	if len(b.unserved) > 0 {
		s += "; fields that need DCGM: " + strings.Join(b.unserved, ", ")
	}
	return s
}

func (b *nvmlBackend) Read() ([][]float64, error) {
	rows := nanRows(len(b.devices), b.nfields)
	for i, d := range b.handles {
		for _, rd := range b.reads {
			v, r := rd.get(b, d)
			switch r {
			case nvml.SUCCESS:
				rows[i][rd.col] = v
			case nvml.ERROR_GPU_IS_LOST, nvml.ERROR_UNINITIALIZED, nvml.ERROR_DRIVER_NOT_LOADED, nvml.ERROR_LIB_RM_VERSION_MISMATCH:
				return nil, fmt.Errorf("GPU %d: %v", b.devices[i].GPU, nvml.ErrorString(r))
			}
			// Anything else (not supported, no permission, ...) leaves the value out.
		}
	}
	return rows, nil
}

func (b *nvmlBackend) Close() { nvml.Shutdown() }

// nvmlFieldValue decodes a value of NVML's field-value API.
func nvmlFieldValue(v nvml.FieldValue) (float64, nvml.Return) {
	if r := nvml.Return(v.NvmlReturn); r != nvml.SUCCESS {
		return 0, r
	}
	b := v.Value[:]
	switch nvml.ValueType(v.ValueType) {
	case nvml.VALUE_TYPE_DOUBLE:
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nvml.SUCCESS
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return float64(binary.LittleEndian.Uint32(b)), nvml.SUCCESS
	case nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		return float64(binary.LittleEndian.Uint64(b)), nvml.SUCCESS
	case nvml.VALUE_TYPE_SIGNED_LONG_LONG:
		return float64(int64(binary.LittleEndian.Uint64(b))), nvml.SUCCESS
	case nvml.VALUE_TYPE_SIGNED_INT:
		return float64(int32(binary.LittleEndian.Uint32(b))), nvml.SUCCESS
	case nvml.VALUE_TYPE_UNSIGNED_SHORT:
		return float64(binary.LittleEndian.Uint16(b)), nvml.SUCCESS
	}
	return 0, nvml.ERROR_NOT_SUPPORTED
}
