package arrival

import (
	"math"
	"sort"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober/seeded"
)

func TestPoissonStatistics(t *testing.T) {
	const rate, n = 10.0, 20000
	p, err := New("poisson", rate, seeded.New(42, "test"))
	if err != nil {
		t.Fatal(err)
	}
	gaps := make([]float64, n)
	var prev time.Duration
	for i := range gaps {
		at := p.Next()
		if at < prev {
			t.Fatalf("offset went backwards: %v after %v", at, prev)
		}
		gaps[i] = (at - prev).Seconds()
		prev = at
	}
	if got := n / prev.Seconds(); math.Abs(got-rate)/rate > 0.03 {
		t.Errorf("mean rate %.3f, want %.1f within 3%%", got, rate)
	}
	// Kolmogorov–Smirnov against Exp(rate); critical value at alpha 0.001.
	sort.Float64s(gaps)
	var d float64
	for i, g := range gaps {
		cdf := 1 - math.Exp(-rate*g)
		d = math.Max(d, math.Max(cdf-float64(i)/n, float64(i+1)/n-cdf))
	}
	if crit := 1.95 / math.Sqrt(n); d > crit {
		t.Errorf("KS statistic %.4f > %.4f: gaps are not exponential", d, crit)
	}
}

func TestConstant(t *testing.T) {
	p, err := New("constant", 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 8; i++ {
		if got, want := p.Next(), time.Duration(i)*250*time.Millisecond; got != want {
			t.Fatalf("send %d at %v, want %v", i, got, want)
		}
	}
}

func TestSeedReproducible(t *testing.T) {
	a, _ := New("poisson", 3, seeded.New(7, "x"))
	b, _ := New("poisson", 3, seeded.New(7, "x"))
	for range 100 {
		if a.Next() != b.Next() {
			t.Fatal("same seed gave different offsets")
		}
	}
}

func TestInvalid(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		rate    float64
		want    string
	}{
		{"poisson", 0, "arrival rate must be > 0, got 0"},
		{"poisson", math.NaN(), "arrival rate must be > 0, got NaN"},
		{"burst", 1, `unknown arrival pattern "burst" (want poisson or constant)`},
	} {
		if _, err := New(tc.pattern, tc.rate, seeded.New(1, "x")); err == nil || err.Error() != tc.want {
			t.Errorf("New(%q, %v) error = %v, want %q", tc.pattern, tc.rate, err, tc.want)
		}
	}
}
