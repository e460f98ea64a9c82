package gpu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
	"github.com/prometheus/client_golang/prometheus"
)

func TestDefaultFields(t *testing.T) {
	fields, err := LoadFields("")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]prometheus.ValueType{
		"DCGM_FI_DEV_SM_CLOCK": prometheus.GaugeValue, "DCGM_FI_DEV_MEM_CLOCK": prometheus.GaugeValue,
		"DCGM_FI_DEV_MEMORY_TEMP": prometheus.GaugeValue, "DCGM_FI_DEV_GPU_TEMP": prometheus.GaugeValue,
		"DCGM_FI_DEV_POWER_USAGE": prometheus.GaugeValue, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": prometheus.CounterValue,
		"DCGM_FI_DEV_GPU_UTIL": prometheus.GaugeValue, "DCGM_FI_DEV_MEM_COPY_UTIL": prometheus.GaugeValue,
		"DCGM_FI_DEV_FB_FREE": prometheus.GaugeValue, "DCGM_FI_DEV_FB_USED": prometheus.GaugeValue,
		"DCGM_FI_DEV_XID_ERRORS":        prometheus.GaugeValue,
		"DCGM_FI_PROF_GR_ENGINE_ACTIVE": prometheus.GaugeValue, "DCGM_FI_PROF_SM_ACTIVE": prometheus.GaugeValue,
		"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": prometheus.GaugeValue, "DCGM_FI_PROF_DRAM_ACTIVE": prometheus.GaugeValue,
	}
	if len(fields) != len(want) {
		t.Errorf("%d default fields, want %d", len(fields), len(want))
	}
	prof := 0
	for _, f := range fields {
		if typ, ok := want[f.Name]; !ok || typ != f.Type {
			t.Errorf("field %s type %v unexpected", f.Name, f.Type)
		}
		if id, _ := dcgm.GetFieldID(f.Name); id != f.ID {
			t.Errorf("%s: ID %d, want %d", f.Name, f.ID, id)
		}
		if f.isProfiling() {
			prof++
		}
	}
	if prof != 4 {
		t.Errorf("%d profiling fields, want the 4 DCGM_FI_PROF_*", prof)
	}
	// Every field NVML serves is in the default list.
	for id := range nvmlFields {
		found := false
		for _, f := range fields {
			found = found || f.ID == id
		}
		if !found {
			t.Errorf("NVML field %d is not in the default list", id)
		}
	}
}

func TestParseFieldsFormat(t *testing.T) {
	fields, err := ParseFields(strings.NewReader(`# comment
   # indented comment

DCGM_FI_DEV_DEC_UTIL ,     gauge, Decoder utilization (in %).
DCGM_FI_DEV_POWER_USAGE, gauge, Power draw, averaged (in W).
DCGM_FI_DEV_GPU_TEMP, gauge, "GPU temperature, ""core"" (in C)."
`), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{
		{Name: "DCGM_FI_DEV_DEC_UTIL", ID: dcgm.DCGM_FI_DEV_DEC_UTIL, Type: prometheus.GaugeValue, Help: "Decoder utilization (in %)."},
		{Name: "DCGM_FI_DEV_POWER_USAGE", ID: dcgm.DCGM_FI_DEV_POWER_USAGE, Type: prometheus.GaugeValue, Help: "Power draw, averaged (in W)."},
		{Name: "DCGM_FI_DEV_GPU_TEMP", ID: dcgm.DCGM_FI_DEV_GPU_TEMP, Type: prometheus.GaugeValue, Help: `GPU temperature, "core" (in C).`},
	}
	if len(fields) != len(want) {
		t.Fatalf("got %+v", fields)
	}
	for i := range want {
		if fields[i] != want[i] {
			t.Errorf("field %d: got %+v, want %+v", i, fields[i], want[i])
		}
	}
}

func TestParseFieldsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"typo", "DCGM_FI_DEV_POWER_USAGES, gauge, Power.",
			[]string{`x.csv:1: unknown DCGM field "DCGM_FI_DEV_POWER_USAGES"; did you mean "DCGM_FI_DEV_POWER_USAGE"?`}},
		{"lower case", "dcgm_fi_dev_gpu_util, gauge, Util.",
			[]string{`x.csv:1: unknown DCGM field "dcgm_fi_dev_gpu_util"; did you mean "DCGM_FI_DEV_GPU_UTIL"?`}},
		{"no prefix", "DEV_GPU_TEMP, gauge, Temp.",
			[]string{`x.csv:1: unknown DCGM field "DEV_GPU_TEMP"; did you mean "DCGM_FI_DEV_GPU_TEMP"?`}},
		{"nothing close", "NOT_A_GPU_THING_AT_ALL, gauge, x.",
			[]string{`x.csv:1: unknown DCGM field "NOT_A_GPU_THING_AT_ALL"; expected a DCGM_FI_* name from DCGM's dcgm_fields.h`}},
		{"bad type", "DCGM_FI_DEV_GPU_UTIL, histogram, Util.",
			[]string{`x.csv:1: type "histogram" of DCGM_FI_DEV_GPU_UTIL: expected gauge or counter`}},
		{"label type", "DCGM_FI_DRIVER_VERSION, label, Driver Version",
			[]string{`x.csv:1: type "label" of DCGM_FI_DRIVER_VERSION: dcgm-exporter's label fields are not supported; expected gauge or counter`}},
		{"too few columns", "DCGM_FI_DEV_GPU_UTIL gauge Util.",
			[]string{"x.csv:1: expected `DCGM_FI_NAME, gauge|counter, help text`"}},
		{"no help", "DCGM_FI_DEV_GPU_UTIL, gauge,",
			[]string{"x.csv:1: DCGM_FI_DEV_GPU_UTIL has no help text"}},
		{"duplicate", "DCGM_FI_DEV_GPU_UTIL, gauge, a.\nDCGM_FI_DEV_GPU_UTIL, gauge, b.",
			[]string{"x.csv:2: DCGM_FI_DEV_GPU_UTIL is the same DCGM field (ID 203) as line 1"}},
		{"alias", "DCGM_FI_PROF_GR_ENGINE_ACTIVE, gauge, a.\nDCGM_FI_PROF_GR_ENGINE_UTIL_RATIO, gauge, b.",
			[]string{"x.csv:2: DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO is the same DCGM field (ID 1001) as line 1"}},
		{"empty", "# only comments\n\n", []string{"x.csv: no fields"}},
		{"every problem, with its line", "# c\nDCGM_FI_DEV_GPU_UTIL, gaug, a.\n\nDCGM_FI_NOPE, gauge, b.\nDCGM_FI_DEV_GPU_TEMP, gauge, ok.",
			[]string{`x.csv:2: type "gaug" of DCGM_FI_DEV_GPU_UTIL`, `x.csv:4: unknown DCGM field "DCGM_FI_NOPE"`}},
	} {
		_, err := ParseFields(strings.NewReader(tc.in), "x.csv")
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tc.name, err, w)
			}
		}
		if lines := strings.Count(err.Error(), "\n") + 1; lines != len(tc.want) {
			t.Errorf("%s: %d problems reported, want %d: %q", tc.name, lines, len(tc.want), err)
		}
	}
}

func TestLoadFieldsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counters.csv")
	if err := os.WriteFile(path, []byte("DCGM_FI_DEV_POWER_USAGE, gauge, Power draw (in W).\nDCGM_FI_DEV_GPU_UTIL, gaugee, x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFields(path); err == nil || !strings.Contains(err.Error(), path+":2: ") {
		t.Errorf("error %v, want one naming %s:2", err, path)
	}
	if _, err := LoadFields(filepath.Join(t.TempDir(), "missing.csv")); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("error %v, want one naming the missing file", err)
	}
}
