package report

import (
	"math"
	"reflect"
	"testing"
)

// TestStatsOf checks every statistic against values worked out by hand
// (numpy's linear interpolation: position p·(n−1) in the sorted samples).
func TestStatsOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []float64
		want    Stats
	}{
		{"empty", nil, Stats{}},
		{"one sample", []float64{7}, Stats{Count: 1, Avg: 7, Min: 7, Max: 7, Sum: 7,
			P1: 7, P5: 7, P10: 7, P25: 7, P50: 7, P75: 7, P90: 7, P95: 7, P99: 7}},
		// mean 2.5; variance ((1.5²+0.5²)·2)/4 = 1.25; p25 at 0.75 → 1.75, p99 at 2.97 → 3.97.
		{"1 2 3 4", []float64{4, 2, 1, 3}, Stats{Count: 4, Avg: 2.5, Min: 1, Max: 4, Std: math.Sqrt(1.25), Sum: 10,
			P1: 1.03, P5: 1.15, P10: 1.3, P25: 1.75, P50: 2.5, P75: 3.25, P90: 3.7, P95: 3.85, P99: 3.97}},
		// two samples: every percentile is p·10.
		{"0 10", []float64{10, 0}, Stats{Count: 2, Avg: 5, Min: 0, Max: 10, Std: 5, Sum: 10,
			P1: 0.1, P5: 0.5, P10: 1, P25: 2.5, P50: 5, P75: 7.5, P90: 9, P95: 9.5, P99: 9.9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StatsOf(tc.samples); !statsClose(got, tc.want) {
				t.Errorf("StatsOf(%v) =\n %+v\nwant\n %+v", tc.samples, got, tc.want)
			}
		})
	}
}

func statsClose(a, b Stats) bool {
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range av.NumField() {
		x, y := av.Field(i), bv.Field(i)
		if x.Kind() == reflect.Float64 {
			if math.Abs(x.Float()-y.Float()) > 1e-9 {
				return false
			}
		} else if x.Int() != y.Int() {
			return false
		}
	}
	return true
}

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
	got, exact := r.stats(), StatsOf(all)
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

	// Under the bound the statistics are exactly StatsOf's.
	small := newReservoir(1000)
	for _, v := range []float64{4, 2, 1, 3} {
		small.add(v)
	}
	if got, want := small.stats(), StatsOf([]float64{1, 2, 3, 4}); !statsClose(got, want) {
		t.Errorf("under the bound: %+v, want %+v", got, want)
	}

	// The report itself uses the bound.
	rep := NewReport()
	if rep.icl.max != maxChunkSamples {
		t.Errorf("report keeps up to %d gaps, want %d", rep.icl.max, maxChunkSamples)
	}
}
