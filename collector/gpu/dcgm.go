package gpu

import (
	"fmt"
	"math"
	"os"
	"sync/atomic"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
)

// dcgmBackend reads fields through DCGM: embedded in this process, or from
// nv-hostengine. go-dcgm keeps one connection per process, so the collector
// never has two open at once.
type dcgmBackend struct {
	addr        string // "" for embedded
	devices     []Device
	nfields     int
	watched     []dcgm.Short       // what Read asks for
	col         map[dcgm.Short]int // field ID -> position in a row
	group       dcgm.GroupHandle
	groupMade   bool
	fieldGroups []dcgm.FieldHandle
	profErr     error // why the profiling fields are not watched
}

const (
	// DCGM samples the fields once a second, as often as the collector reads.
	watchEveryMicros = 1_000_000
	// Seconds of samples the hostengine keeps; only the latest is read, and
	// dcgm-exporter's age-based retention is the setting known to work for
	// profiling fields.
	watchKeepSeconds = 30
)

// groupSeq makes group names unique: a shared nv-hostengine has other clients.
var groupSeq atomic.Uint64

// openDCGM connects to DCGM, embedded when addr is empty, and watches fields
// on every GPU. Profiling fields are watched separately, so a GPU or a
// hostengine without the profiling module still gets the others.
func openDCGM(fields []Field, addr, hostname string) (_ Backend, err error) {
	if addr == "" {
		_, err = dcgm.Init(dcgm.Embedded)
	} else {
		// "0": addr is host:port (or a DCGM connection string), not a socket path.
		_, err = dcgm.Init(dcgm.Standalone, addr, "0")
	}
	if err != nil {
		return nil, err
	}
	b := &dcgmBackend{addr: addr, nfields: len(fields), col: make(map[dcgm.Short]int, len(fields))}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	ids, err := dcgm.GetEntityGroupEntities(dcgm.FE_GPU)
	if err != nil {
		return nil, fmt.Errorf("listing GPUs: %w", err)
	}
	if len(ids) == 0 {
		return nil, errNoGPUs
	}
	name := fmt.Sprintf("inferprobe-%d-%d", os.Getpid(), groupSeq.Add(1))
	if b.group, err = dcgm.CreateGroup(name); err != nil {
		return nil, err
	}
	b.groupMade = true
	for _, id := range ids {
		info, err := dcgm.GetDeviceInfo(id)
		if err != nil {
			return nil, fmt.Errorf("GPU %d: %w", id, err)
		}
		if err := dcgm.AddEntityToGroup(b.group, dcgm.FE_GPU, id); err != nil {
			return nil, fmt.Errorf("GPU %d: %w", id, err)
		}
		b.devices = append(b.devices, Device{GPU: id, UUID: info.UUID, ModelName: info.Identifiers.Model, Hostname: hostname})
	}
	var dev, prof []dcgm.Short
	for i, f := range fields {
		b.col[f.ID] = i
		if f.isProfiling() {
			prof = append(prof, f.ID)
		} else {
			dev = append(dev, f.ID)
		}
	}
	if len(dev) > 0 {
		if err := b.watch(name+"-dev", dev); err != nil {
			return nil, fmt.Errorf("watching fields: %w", err)
		}
	}
	if len(prof) > 0 {
		b.profErr = b.watch(name+"-prof", prof)
	}
	return b, nil
}

func (b *dcgmBackend) watch(name string, ids []dcgm.Short) error {
	fg, err := dcgm.FieldGroupCreate(name, ids)
	if err != nil {
		return err
	}
	if err := dcgm.WatchFieldsWithGroupEx(fg, b.group, watchEveryMicros, watchKeepSeconds, 0); err != nil {
		_ = dcgm.FieldGroupDestroy(fg)
		return err
	}
	b.fieldGroups = append(b.fieldGroups, fg)
	b.watched = append(b.watched, ids...)
	return nil
}

func (b *dcgmBackend) Name() string      { return "dcgm" }
func (b *dcgmBackend) Devices() []Device { return b.devices }

func (b *dcgmBackend) Summary() string {
	s := "DCGM embedded"
	if b.addr != "" {
		s = "DCGM via nv-hostengine at " + b.addr
	}
	s = fmt.Sprintf("%s, %d GPUs", s, len(b.devices))
	if b.profErr != nil {
		s += fmt.Sprintf("; profiling (DCGM_FI_PROF_*) fields off: %v", b.profErr)
	}
	return s
}

// Read asks per GPU, as dcgm-exporter does, for the latest watched values.
func (b *dcgmBackend) Read() ([][]float64, error) {
	rows := nanRows(len(b.devices), b.nfields)
	if len(b.watched) == 0 {
		return rows, nil
	}
	for i, d := range b.devices {
		vals, err := dcgm.EntityGetLatestValues(dcgm.FE_GPU, d.GPU, b.watched)
		if err != nil {
			return nil, fmt.Errorf("GPU %d: %w", d.GPU, err)
		}
		for _, v := range vals {
			if c, ok := b.col[v.FieldID]; ok {
				rows[i][c] = dcgmValue(v)
			}
		}
	}
	return rows, nil
}

// Close releases what this client made; disconnecting makes the hostengine
// drop the rest, and errors are moot when the connection is already gone.
func (b *dcgmBackend) Close() {
	for _, fg := range b.fieldGroups {
		_ = dcgm.FieldGroupDestroy(fg)
	}
	if b.groupMade {
		_ = dcgm.DestroyGroup(b.group)
	}
	_ = dcgm.Shutdown()
}

// dcgmValue converts a DCGM value, NaN for an error status, a non-numeric
// type, or one of DCGM's blank sentinels (blank, not found, not supported,
// not permissioned).
func dcgmValue(v dcgm.FieldValue_v1) float64 {
	if v.Status != dcgm.DCGM_ST_OK {
		return math.NaN()
	}
	switch v.FieldType {
	case dcgm.DCGM_FT_INT64:
		x := v.Int64()
		// 32-bit fields arrive as int64 but keep their 32-bit sentinels. Only
		// those four values are blank: go-dcgm's IsInt32Blank(x) would also
		// drop every int64 above 2^31-16, such as an energy counter in mJ.
		if (x >= dcgm.DCGM_FT_INT32_BLANK && x <= dcgm.DCGM_FT_INT32_NOT_PERMISSIONED) || dcgm.IsInt64Blank(x) {
			return math.NaN()
		}
		return float64(x)
	case dcgm.DCGM_FT_DOUBLE:
		x := v.Float64()
		if x >= dcgm.DCGM_FT_FP64_BLANK { // also the not found/supported/permissioned sentinels above it
			return math.NaN()
		}
		return x // NaN stays NaN
	}
	return math.NaN()
}

// nanRows returns n rows of m NaNs.
func nanRows(n, m int) [][]float64 {
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, m)
		for j := range rows[i] {
			rows[i][j] = math.NaN()
		}
	}
	return rows
}
