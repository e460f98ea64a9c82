package simulator

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// The samplers keep the mean and spread they are given. Seeded, so exact
// and repeatable, not a statistical gamble.
func TestSamplerMoments(t *testing.T) {
	const mean, n = 10 * time.Millisecond, 200_000
	for _, tc := range []struct {
		dist   string
		jitter float64
		wantCV float64
	}{
		{Constant, 0.5, 0},
		{Normal, 0.2, 0.2},
		{LogNormal, 0.2, 0.2},
		{LogNormal, 1, 1},
	} {
		s := newSampler(tc.dist, mean, tc.jitter)
		r := rand.New(rand.NewPCG(1, 2))
		var sum, sumSq float64
		for range n {
			v := float64(s.draw(r))
			if v < 0 {
				t.Fatalf("%s: negative draw %v", tc.dist, v)
			}
			sum += v
			sumSq += v * v
		}
		m := sum / n
		cv := math.Sqrt(sumSq/n-m*m) / m
		if math.Abs(m-float64(mean))/float64(mean) > 0.01 {
			t.Errorf("%s jitter %v: mean %v, want %v", tc.dist, tc.jitter, time.Duration(m), mean)
		}
		if math.Abs(cv-tc.wantCV) > 0.02+0.05*tc.wantCV {
			t.Errorf("%s jitter %v: stddev/mean %.3f, want %.3f", tc.dist, tc.jitter, cv, tc.wantCV)
		}
	}
}

func TestNaturalLengthMean(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, natural := range []int{1, 8, 128} {
		const n = 100_000
		var sum int
		for range n {
			l, finish := outputLength(r, natural, 0, math.MaxInt32, false)
			if l < 1 || finish != "stop" {
				t.Fatalf("natural %d: length %d, finish %q", natural, l, finish)
			}
			sum += l
		}
		if m := float64(sum) / n; math.Abs(m-float64(natural))/float64(natural) > 0.02 {
			t.Errorf("natural %d: mean length %.2f", natural, m)
		}
	}
}
