package report

import (
	"math"
	"reflect"
	"testing"

	"github.com/inferprobe/inferprobe/stats"
)

// TestInterChunkBounded: inter-chunk gaps, one per chunk, are kept in bounded
// memory; count, mean, spread and extremes stay exact, and percentiles come
// from a uniform sample once there are too many to keep.
func TestInterChunkBounded(t *testing.T) {
	r := newReservoir(1000)
	var all []float64
	for i := range 100_000 {
		v := float64(i%1000) / 1000 // uniform over [0, 0.999]
		r.add(v)
		all = append(all, v)
	}
	if len(r.kept) != 1000 {
		t.Fatalf("kept %d samples, want the bound of 1000", len(r.kept))
	}
	got, exact := r.stats(0), stats.Of(all, 0)
	for _, c := range []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"count", float64(got.Count), float64(exact.Count), 0},
		{"avg", got.Avg, exact.Avg, 1e-9}, {"std", got.Std, exact.Std, 1e-9},
		{"min", got.Min, exact.Min, 0}, {"max", got.Max, exact.Max, 0},
		{"p50", got.P50, exact.P50, 0.06}, {"p90", got.P90, exact.P90, 0.06},
	} {
		if math.Abs(c.got-c.want) > c.tol {
			t.Errorf("%s = %v, want %v (±%v)", c.name, c.got, c.want, c.tol)
		}
	}

	// Under the bound the statistics are exactly stats.Of's.
	small := newReservoir(1000)
	for _, v := range []float64{4, 2, 1, 3} {
		small.add(v)
	}
	if got, want := small.stats(0), stats.Of([]float64{1, 2, 3, 4}, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("under the bound: %+v, want %+v", got, want)
	}

	// The report itself uses the bound.
	rep := NewReport()
	if rep.icl.max != maxChunkSamples {
		t.Errorf("report keeps up to %d gaps, want %d", rep.icl.max, maxChunkSamples)
	}
}
