package arrival

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober/seeded"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Statistical tests run at fixed seeds, so they are deterministic; their
// thresholds are ones a correct generator passes at all but about one seed in
// a thousand, so a failure after a change means the distribution changed.

// offsets draws n send offsets, failing if they ever go backwards.
func offsets(t *testing.T, a scenarios.Arrival, seed uint64, n int) []time.Duration {
	t.Helper()
	p, err := New(a, seeded.New(seed, "probe/test/arrival"))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]time.Duration, n)
	var prev time.Duration
	for i := range out {
		out[i] = p.Next()
		if out[i] < prev {
			t.Fatalf("offset %d went backwards: %v after %v", i, out[i], prev)
		}
		prev = out[i]
	}
	return out
}

// ksStatistic is the Kolmogorov–Smirnov distance between the empirical
// distribution of sorted samples and cdf.
func ksStatistic(sorted []float64, cdf func(float64) float64) float64 {
	n := float64(len(sorted))
	var d float64
	for i, x := range sorted {
		f := cdf(x)
		d = max(d, f-float64(i)/n, float64(i+1)/n-f)
	}
	return d
}

// ksCritical is the KS critical value at significance 0.001.
func ksCritical(n int) float64 { return 1.95 / math.Sqrt(float64(n)) }

// gammaP is the regularized lower incomplete gamma function P(a, x), the CDF
// of the gamma distribution of shape a and scale 1: by its power series below
// x = a+1 and by Legendre's continued fraction for 1 − P above, where each
// converges quickly.
func gammaP(a, x float64) float64 {
	if x <= 0 {
		return 0
	}
	lg, _ := math.Lgamma(a)
	front := math.Exp(a*math.Log(x) - x - lg) // x^a e^-x / Γ(a)
	if x < a+1 {
		// P = x^a e^-x Σ x^n / Γ(a+n+1).
		term := 1 / a
		sum := term
		for n := 1.0; term > sum*1e-17; n++ {
			term *= x / (a + n)
			sum += term
		}
		return front * sum
	}
	// 1 − P = x^a e^-x / Γ(a) · 1/(x+1−a − 1(1−a)/(x+3−a − 2(2−a)/(x+5−a − …))),
	// evaluated by the modified Lentz method.
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1.0; ; i++ {
		an := -i * (i - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		delta := d * c
		h *= delta
		if math.Abs(delta-1) < 1e-16 {
			break
		}
	}
	return 1 - front*h
}

// TestGammaP checks gammaP against the closed forms it has for whole and half
// shapes, on both sides of x = a+1.
func TestGammaP(t *testing.T) {
	for _, tc := range []struct {
		a    float64
		want func(x float64) float64
	}{
		{0.5, func(x float64) float64 { return math.Erf(math.Sqrt(x)) }},
		{1, func(x float64) float64 { return -math.Expm1(-x) }},
		{1.5, func(x float64) float64 { return math.Erf(math.Sqrt(x)) - 2*math.Sqrt(x/math.Pi)*math.Exp(-x) }},
		{4, func(x float64) float64 { return 1 - math.Exp(-x)*(1+x+x*x/2+x*x*x/6) }},
	} {
		for _, x := range []float64{1e-6, 1e-3, 0.1, 0.5, 1, 1.4, 2.6, 3, 4.9, 5.1, 8, 15, 40} {
			if got, want := gammaP(tc.a, x), tc.want(x); math.Abs(got-want) > 1e-12 {
				t.Errorf("P(%v, %v) = %.15f, want %.15f", tc.a, x, got, want)
			}
		}
	}
}

// TestGammaVariate checks the sampler's distribution against the gamma CDF,
// on both of its paths (k < 1 boosted, k >= 1 direct).
func TestGammaVariate(t *testing.T) {
	const n = 50000
	for _, k := range []float64{0.1, 0.5, 1, 2.5, 4, 30} {
		rng := seeded.New(1, "gamma")
		xs := make([]float64, n)
		var sum float64
		for i := range xs {
			xs[i] = gammaVariate(rng, k)
			sum += xs[i]
		}
		if mean := sum / n; math.Abs(mean-k)/k > 0.03 {
			t.Errorf("k=%v: mean %.4f, want %v within 3%%", k, mean, k)
		}
		slices.Sort(xs)
		if d := ksStatistic(xs, func(x float64) float64 { return gammaP(k, x) }); d > ksCritical(n) {
			t.Errorf("k=%v: KS distance %.4f > %.4f: not Gamma(%v, 1)", k, d, ksCritical(n), k)
		}
	}
}

// TestSteadyRate checks the mean rate and the gap distribution of every
// random pattern at a steady rate: exponential gaps for poisson, gamma gaps of
// shape smoothness and mean 1/rate (so CV 1/√k) for gamma.
func TestSteadyRate(t *testing.T) {
	const rate, n = 10.0, 50000
	for _, tc := range []struct {
		name string
		a    scenarios.Arrival
		cdf  func(gap float64) float64
		cv   float64
	}{
		{"poisson", scenarios.Arrival{Pattern: "poisson", Rate: rate},
			func(g float64) float64 { return -math.Expm1(-rate * g) }, 1},
		{"gamma k=0.5", scenarios.Arrival{Pattern: "gamma", Rate: rate, Smoothness: 0.5},
			func(g float64) float64 { return gammaP(0.5, 0.5*rate*g) }, math.Sqrt(2)},
		{"gamma k=1", scenarios.Arrival{Pattern: "gamma", Rate: rate, Smoothness: 1},
			func(g float64) float64 { return gammaP(1, rate*g) }, 1},
		{"gamma k=4", scenarios.Arrival{Pattern: "gamma", Rate: rate, Smoothness: 4},
			func(g float64) float64 { return gammaP(4, 4*rate*g) }, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := offsets(t, tc.a, 42, n)
			if got := n / at[n-1].Seconds(); math.Abs(got-rate)/rate > 0.03 {
				t.Errorf("mean rate %.3f, want %v within 3%%", got, rate)
			}
			gaps := make([]float64, n)
			var sum, sq float64
			for i := range gaps {
				prev := time.Duration(0)
				if i > 0 {
					prev = at[i-1]
				}
				gaps[i] = (at[i] - prev).Seconds()
				sum += gaps[i]
				sq += gaps[i] * gaps[i]
			}
			mean := sum / n
			if cv := math.Sqrt(sq/n-mean*mean) / mean; math.Abs(cv-tc.cv)/tc.cv > 0.05 {
				t.Errorf("coefficient of variation %.3f, want %.3f within 5%%", cv, tc.cv)
			}
			slices.Sort(gaps)
			if d := ksStatistic(gaps, tc.cdf); d > ksCritical(n) {
				t.Errorf("KS distance %.4f > %.4f: gaps do not have the expected distribution", d, ksCritical(n))
			}
		})
	}
}

func TestConstantIsExact(t *testing.T) {
	for i, at := range offsets(t, scenarios.Arrival{Pattern: "constant", Rate: 4}, 1, 100) {
		if want := time.Duration(i+1) * 250 * time.Millisecond; at != want {
			t.Fatalf("send %d at %v, want %v", i+1, at, want)
		}
	}
	// 1/3 s has no exact float: each offset is still the nearest nanosecond,
	// with no error building up.
	for i, at := range offsets(t, scenarios.Arrival{Pattern: "constant", Rate: 3}, 1, 3000) {
		n := int64(i + 1)
		if want := time.Duration((n*int64(time.Second) + 1) / 3); at != want {
			t.Fatalf("send %d at %v, want %v", n, at, want)
		}
	}
}

// TestConstantRamp checks send times against the inverse of the cumulative
// rate: from 0 to 10/s over 10s, Λ(t) = t²/2 (50 sends), then 10/s.
func TestConstantRamp(t *testing.T) {
	a := scenarios.Arrival{Pattern: "constant", Rate: 0, RampTo: 10, RampOver: scenarios.Duration(10 * time.Second)}
	for i, at := range offsets(t, a, 1, 200) {
		n := float64(i + 1)
		want := math.Sqrt(2 * n)
		if n > 50 {
			want = 10 + (n-50)/10
		}
		if d := at.Seconds() - want; math.Abs(d) > 2e-9 {
			t.Fatalf("send %v at %v, want %.9fs", n, at, want)
		}
	}
}

// count returns how many offsets fall in (from, to].
func count(at []time.Duration, from, to time.Duration) int {
	lo, _ := slices.BinarySearch(at, from+1)
	hi, _ := slices.BinarySearch(at, to+1)
	return hi - lo
}

// TestRampCounts checks that the instantaneous rate follows a ramp from 20/s
// to 100/s over 100s and then holds: each 10s window gets the integral of the
// rate, within 4 standard deviations of a count of that pattern.
func TestRampCounts(t *testing.T) {
	ramp := scenarios.Arrival{Rate: 20, RampTo: 100, RampOver: scenarios.Duration(100 * time.Second)}
	rate := func(s float64) float64 { return 20 + 80*min(s, 100)/100 }
	for _, tc := range []struct {
		pattern    string
		smoothness float64
		variance   float64 // of a count, per expected send: the squared CV of a gap
	}{
		{"poisson", 0, 1},
		{"gamma", 0.5, 2},
		{"gamma", 4, 0.25},
		{"constant", 0, 0},
	} {
		a := ramp
		a.Pattern, a.Smoothness = tc.pattern, tc.smoothness
		at := offsets(t, a, 7, 20000)
		for w := 0.0; w < 150; w += 10 {
			want := (rate(w) + rate(w+10)) / 2 * 10
			got := count(at, time.Duration(w*1e9), time.Duration((w+10)*1e9))
			if tol := 4*math.Sqrt(want*tc.variance) + 1; math.Abs(float64(got)-want) > tol {
				t.Errorf("%s k=%v: %d sends in (%vs, %vs], want %.0f ± %.0f", tc.pattern, tc.smoothness, got, w, w+10, want, tol)
			}
		}
	}
}

// TestSeriesCounts checks each step of a series, a pause included, and the
// last step's rate holding after it.
func TestSeriesCounts(t *testing.T) {
	steps := []scenarios.Step{
		{Rate: 5, Duration: scenarios.Duration(20 * time.Second)},
		{Rate: 0, Duration: scenarios.Duration(10 * time.Second)},
		{Rate: 20, Duration: scenarios.Duration(10 * time.Second)},
		{Rate: 2},
	}
	windows := []struct {
		from, to time.Duration
		want     float64
	}{
		{0, 20 * time.Second, 100},
		{20 * time.Second, 30 * time.Second, 0},
		{30 * time.Second, 40 * time.Second, 200},
		{40 * time.Second, 140 * time.Second, 200},
	}
	for _, tc := range []struct {
		pattern    string
		smoothness float64
		variance   float64
	}{
		{"constant", 0, 0},
		{"poisson", 0, 1},
		{"gamma", 2, 0.5},
	} {
		at := offsets(t, scenarios.Arrival{Pattern: tc.pattern, Smoothness: tc.smoothness, Series: steps}, 3, 800)
		for _, w := range windows {
			got := count(at, w.from, w.to)
			tol := 4 * math.Sqrt(w.want*tc.variance)
			if w.want > 0 && tc.variance > 0 {
				tol++ // a renewal process may start or end a step one send off
			}
			if math.Abs(float64(got)-w.want) > tol {
				t.Errorf("%s: %d sends in (%v, %v], want %v ± %.0f", tc.pattern, got, w.from, w.to, w.want, tol)
			}
		}
	}
}

// TestFarFuture checks that an offset beyond what a Duration holds stays far
// in the future instead of wrapping round to the past.
func TestFarFuture(t *testing.T) {
	for _, at := range offsets(t, scenarios.Arrival{Pattern: "constant", Rate: 1e-12}, 1, 3) {
		if at != math.MaxInt64 {
			t.Fatalf("offset %v, want the longest Duration", at)
		}
	}
}

func TestSeedReproducible(t *testing.T) {
	for _, a := range []scenarios.Arrival{
		{Pattern: "poisson", Rate: 3},
		{Pattern: "gamma", Rate: 3, Smoothness: 0.5},
		{Pattern: "gamma", Rate: 3, Smoothness: 2, RampTo: 9, RampOver: scenarios.Duration(time.Minute)},
	} {
		if !slices.Equal(offsets(t, a, 7, 1000), offsets(t, a, 7, 1000)) {
			t.Errorf("%+v: the same seed gave different offsets", a)
		}
		if slices.Equal(offsets(t, a, 7, 1000), offsets(t, a, 8, 1000)) {
			t.Errorf("%+v: different seeds gave the same offsets", a)
		}
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		a    scenarios.Arrival
		want string
	}{
		{scenarios.Arrival{Pattern: "poisson"}, "arrival rate must be > 0, got 0"},
		{scenarios.Arrival{Pattern: "constant", Rate: math.NaN()}, "arrival rate must be > 0, got NaN"},
		{scenarios.Arrival{Pattern: "gamma", Rate: 1}, "gamma smoothness must be > 0, got 0"},
		{scenarios.Arrival{Pattern: "concurrency", Concurrency: 4}, "pattern concurrency is closed-loop: its send times follow the responses, not offsets"},
		{scenarios.Arrival{Pattern: "burst", Rate: 1}, `unknown arrival pattern "burst"`},
	} {
		if _, err := New(tc.a, seeded.New(1, "x")); err == nil || err.Error() != tc.want {
			t.Errorf("New(%+v) error = %v, want %q", tc.a, err, tc.want)
		}
	}
}
