package gpu

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
)

func TestDCGMValueSkipsSentinels(t *testing.T) {
	i64 := func(x int64) dcgm.FieldValue_v1 {
		v := dcgm.FieldValue_v1{FieldType: dcgm.DCGM_FT_INT64, Status: dcgm.DCGM_ST_OK}
		binary.LittleEndian.PutUint64(v.Value[:], uint64(x))
		return v
	}
	f64 := func(x float64) dcgm.FieldValue_v1 {
		v := dcgm.FieldValue_v1{FieldType: dcgm.DCGM_FT_DOUBLE, Status: dcgm.DCGM_ST_OK}
		binary.LittleEndian.PutUint64(v.Value[:], math.Float64bits(x))
		return v
	}
	notSupported := i64(61)
	notSupported.Status = dcgm.DCGM_ST_NOT_SUPPORTED
	str := dcgm.FieldValue_v1{FieldType: dcgm.DCGM_FT_STRING, Status: dcgm.DCGM_ST_OK}
	copy(str.Value[:], "560.35.03")

	nan := math.NaN()
	for _, tc := range []struct {
		name string
		in   dcgm.FieldValue_v1
		want float64
	}{
		{"int64", i64(61), 61},
		{"int64 zero", i64(0), 0},
		{"int32 blank", i64(dcgm.DCGM_FT_INT32_BLANK), nan},
		{"int32 not found", i64(dcgm.DCGM_FT_INT32_NOT_FOUND), nan},
		{"int32 not supported", i64(dcgm.DCGM_FT_INT32_NOT_SUPPORTED), nan},
		{"int32 not permissioned", i64(dcgm.DCGM_FT_INT32_NOT_PERMISSIONED), nan},
		// An energy counter in mJ passes 2^31 after about an hour at 600 W:
		// only the four 32-bit sentinels themselves are blank.
		{"int64 above the 32-bit sentinels", i64(dcgm.DCGM_FT_INT32_NOT_PERMISSIONED + 1), float64(dcgm.DCGM_FT_INT32_NOT_PERMISSIONED + 1)},
		{"int64 energy", i64(3_600_000_000), 3_600_000_000},
		{"int64 blank", i64(dcgm.DCGM_FT_INT64_BLANK), nan},
		{"int64 not found", i64(dcgm.DCGM_FT_INT64_NOT_FOUND), nan},
		{"int64 not supported", i64(dcgm.DCGM_FT_INT64_NOT_SUPPORTED), nan},
		{"int64 not permissioned", i64(dcgm.DCGM_FT_INT64_NOT_PERMISSIONED), nan},
		{"double", f64(312.25), 312.25},
		{"double ratio", f64(0.85), 0.85},
		{"fp64 blank", f64(dcgm.DCGM_FT_FP64_BLANK), nan},
		{"fp64 not found", f64(dcgm.DCGM_FT_FP64_NOT_FOUND), nan},
		{"fp64 not supported", f64(dcgm.DCGM_FT_FP64_NOT_SUPPORTED), nan},
		{"fp64 not permissioned", f64(dcgm.DCGM_FT_FP64_NOT_PERMISSIONED), nan},
		{"NaN", f64(nan), nan},
		{"status not supported", notSupported, nan},
		{"string", str, nan},
	} {
		got := dcgmValue(tc.in)
		if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
