package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestStatsOf checks every statistic against values worked out by hand
// (numpy's linear interpolation: position p·(n−1) in the sorted samples).
func TestOf(t *testing.T) {
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
			if got := Of(tc.samples, 0); !statsClose(got, tc.want) {
				t.Errorf("Of(%v) =\n %+v\nwant\n %+v", tc.samples, got, tc.want)
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
		} else if x.Kind() == reflect.Int && x.Int() != y.Int() {
			return false
		}
	}
	return true
}

// TestPercentileInterval checks the order-statistic ranks against the
// binomial worked out by hand and that an extreme percentile of too few
// samples is left unbounded rather than given a number.
func TestPercentileInterval(t *testing.T) {
	sorted := make([]float64, 100)
	for i := range sorted {
		sorted[i] = float64(i + 1) // X(k) = k
	}
	// Median of 100 at 95 %: ranks 40 and 61 (the textbook interval).
	if got := PercentileInterval(sorted, .5, .95); got != (Interval{40, 61}) {
		t.Errorf("p50 of 100 = %v, want [40, 61]", got)
	}
	// p99 of 100: P(all 100 below ξ) = 0.99¹⁰⁰ = 0.37 > 0.025, no upper bound.
	if got := PercentileInterval(sorted, .99, .95); !math.IsInf(got.High, 1) || math.IsInf(got.Low, 0) {
		t.Errorf("p99 of 100 = %v, want a lower bound and no upper one", got)
	}
	if got := MinSamples(.99, .95); got != 368 {
		t.Errorf("MinSamples(p99, 95%%) = %d, want 368", got)
	}
	big := make([]float64, 368)
	for i := range big {
		big[i] = float64(i)
	}
	if got := PercentileInterval(big, .99, .95); !got.Bounded() {
		t.Errorf("p99 of 368 = %v, want bounded", got)
	}
}

// TestIntervalCoverage: over many seeded samples of a skewed distribution,
// the intervals hold the true value at least as often as their level says
// (the percentile interval is conservative), and not much more often for
// the mean's.
func TestIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const trials, n = 2000, 200
	trueP90 := -math.Log(0.1) // exponential(1)
	var p90In, meanIn int
	for range trials {
		s := make([]float64, n)
		for i := range s {
			s[i] = rng.ExpFloat64()
		}
		st := Of(s, .9)
		if iv := st.Intervals.P90; iv.Low <= trueP90 && trueP90 <= iv.High {
			p90In++
		}
		if iv := st.Intervals.Avg; iv.Low <= 1 && 1 <= iv.High {
			meanIn++
		}
	}
	if f := float64(p90In) / trials; f < .89 || f > .96 {
		t.Errorf("p90 interval at 90 %% held the truth in %.3f of trials", f)
	}
	if f := float64(meanIn) / trials; f < .87 || f > .93 {
		t.Errorf("mean interval at 90 %% held the truth in %.3f of trials", f)
	}
}

func TestStudentQuantile(t *testing.T) {
	for _, c := range []struct{ q, df, want float64 }{{.975, 9, 2.262157}, {.975, 1, 12.7062}, {.95, 30, 1.697261}, {.975, 1e6, 1.959966}} {
		if got := StudentQuantile(c.q, c.df); math.Abs(got-c.want) > 1e-4 {
			t.Errorf("t(%v, %v) = %v, want %v", c.q, c.df, got, c.want)
		}
	}
}

// TestMannWhitney against scipy.stats.mannwhitneyu(a, b,
// alternative="two-sided", method="asymptotic") with its continuity
// correction.
func TestMannWhitney(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	b := []float64{6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	// U = 12.5, five ties of two: σ = √(100/12·(21 − 30/380)) = 13.20,
	// z = (37.5 − 0.5)/σ = 2.802, p = 0.00508.
	if got := MannWhitney(a, b); math.Abs(got-0.00508) > 1e-5 {
		t.Errorf("p = %v, want 0.00508", got)
	}
	if got := MannWhitney(a, a); got != 1 {
		t.Errorf("same samples: p = %v, want 1", got)
	}
}

func TestHolm(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, 0.03, 0.5})
	want := []float64{0.04, 0.09, 0.09, 0.5}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
}

// TestBootstrapChanges: a shift of a tenth is found, no shift is not, and
// the same seed gives the same answer.
func TestBootstrapChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	draw := func(scale float64) []float64 {
		s := make([]float64, 500)
		for i := range s {
			s[i] = scale * (1 + rng.ExpFloat64()/2)
		}
		return s
	}
	p50 := func(s []float64) float64 { return Percentile(s, .5) }
	base, other, shifted := draw(1), draw(1), draw(1.1)
	same, slower := BootstrapChanges(base, other, []func([]float64) float64{p50}, .95, 3), BootstrapChanges(base, shifted, []func([]float64) float64{p50}, .95, 3)
	if same[0].P < .05 || slower[0].P > .001 {
		t.Errorf("p of no change %v, of a 10 %% change %v", same[0].P, slower[0].P)
	}
	if iv := slower[0].Interval; iv.Low <= 0 || iv.High < slower[0].Current-slower[0].Baseline {
		t.Errorf("interval of the change %v", iv)
	}
	if again := BootstrapChanges(base, shifted, []func([]float64) float64{p50}, .95, 3); again[0] != slower[0] {
		t.Errorf("same seed, another answer: %+v, then %+v", slower[0], again[0])
	}
}
