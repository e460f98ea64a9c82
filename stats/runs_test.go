package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestAcross checks the across-run summary against values worked out by
// hand: 10, 12, 14 have mean 12, sample standard deviation 2, standard
// error 2/√3, and t(0.975, 2) = 4.3027 (scipy.stats.t.ppf).
func TestAcross(t *testing.T) {
	s := Across([]float64{10, 14, 12}, .95)
	se := 2 / math.Sqrt(3)
	if s.N != 3 || s.Mean != 12 || !near(s.Std, 2, 1e-12) || s.Min != 10 || s.Max != 14 ||
		!near(s.CV, 2.0/12, 1e-12) || !near(s.SE, se, 1e-12) || !near(s.T, 4.302653, 1e-5) ||
		!near(s.Interval.Low, 12-4.302653*se, 1e-5) || !near(s.Interval.High, 12+4.302653*se, 1e-5) {
		t.Errorf("Across(10, 14, 12) = %+v", s)
	}
	// One run: AIPerf's degenerate aggregate, no spread and no t.
	one := Across([]float64{7}, .95)
	if one.Mean != 7 || one.Std != 0 || one.CV != 0 || one.Interval != (Interval{7, 7}) || !math.IsNaN(one.T) {
		t.Errorf("Across(7) = %+v, want the value with no spread", one)
	}
	if z := Across([]float64{-1, 1}, .95); !math.IsInf(z.CV, 1) {
		t.Errorf("a zero mean has CV %v, want +Inf", z.CV)
	}
}

// TestKruskalWallis checks H and p against scipy.stats.kruskal, with and
// without ties, and the degenerate cases.
func TestKruskalWallis(t *testing.T) {
	for _, tc := range []struct {
		groups [][]float64
		h, p   float64
	}{
		{[][]float64{{2.9, 3.0, 2.5, 2.6, 3.2}, {3.8, 2.7, 4.0, 2.4}, {2.8, 3.4, 3.7, 2.2, 2.0}}, 0.771429, 0.679965},
		{[][]float64{{1, 1, 2, 2, 3}, {2, 3, 3, 4, 4}}, 4.192258, 0.040609},
		{[][]float64{{1, 2}, nil}, 0, 1},       // one group left
		{[][]float64{{5, 5}, {5, 5, 5}}, 0, 1}, // every value equal
	} {
		h, p := KruskalWallis(tc.groups)
		if !near(h, tc.h, 1e-5) || !near(p, tc.p, 1e-5) {
			t.Errorf("KruskalWallis(%v) = %g, %g; want %g, %g", tc.groups, h, p, tc.h, tc.p)
		}
	}
}

// TestKolmogorovSmirnov checks the statistic and p-value against scipy's
// kstwobign.sf at Stephens' corrected argument, and that samples of one
// distribution pass while a shifted one fails.
func TestKolmogorovSmirnov(t *testing.T) {
	a := []float64{0.61, 0.29, 0.06, 0.59, -1.73, -0.74, 0.51, -0.56, 0.39, 1.64, 0.05, -0.06, 0.64, -0.82, 0.37, 1.77, 1.09, -1.28, 2.36, 1.31, 1.05, -0.32, -0.4, 1.06, -2.47}
	b := []float64{2.2, 1.66, 1.38, 0.2, 0.36, 0, 0.96, 1.56, 0.44, 1.5, -0.3, 0.66, 2.31, 3.29, -0.27, -0.37, 0.38, 0.7, 0.52, -0.71}
	// D = 0.23 (scipy.stats.ks_2samp); kstwobign.sf((√nₑ+0.12+0.11/√nₑ)·0.23) = 0.541125.
	if p := KolmogorovSmirnov(a, b); !near(p, 0.541125, 1e-5) {
		t.Errorf("KolmogorovSmirnov = %g, want 0.541125", p)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	same, other, shifted := make([]float64, 500), make([]float64, 500), make([]float64, 500)
	for i := range same {
		same[i], other[i], shifted[i] = rng.ExpFloat64(), rng.ExpFloat64(), 1.5*rng.ExpFloat64()
	}
	if p := KolmogorovSmirnov(same, other); p < .05 {
		t.Errorf("two samples of one distribution: p = %g, want above 0.05", p)
	}
	if p := KolmogorovSmirnov(same, shifted); p > .001 {
		t.Errorf("a sample 50 %% slower: p = %g, want below 0.001", p)
	}
	if p := KolmogorovSmirnov([]float64{1}, b); p != 1 {
		t.Errorf("one value a side: p = %g, want 1", p)
	}
}

// TestChiSquareSF checks both branches of the incomplete gamma function
// against scipy.stats.chi2.sf.
func TestChiSquareSF(t *testing.T) {
	for _, tc := range []struct{ x, df, want float64 }{
		{3.5, 2, 0.173774}, {10, 5, 0.075235}, {0.5, 7, 0.999446}, {0, 3, 1},
	} {
		if got := ChiSquareSF(tc.x, tc.df); !near(got, tc.want, 1e-6) {
			t.Errorf("ChiSquareSF(%g, %g) = %g, want %g", tc.x, tc.df, got, tc.want)
		}
	}
}
