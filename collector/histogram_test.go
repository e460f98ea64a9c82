package collector

import (
	"math"
	"testing"
)

// A classic quantile is interpolated inside the bucket that holds the exact one, so it can be off
// by a bucket's width: the latency buckets must be narrow enough for a classic p99 to stay within
// 10 % of the native one (the old TTFT bounds 0.1, 0.15, 0.2 gave a classic p99 of 0.1495 s
// against a native 0.1097 s), over the range endpoints answer in.
func TestClassicLatencyBucketsAreNarrow(t *testing.T) {
	for _, h := range []struct {
		name     string
		bounds   []float64
		min, max float64 // the range the narrow buckets must cover
	}{
		{"ttft", ttftBuckets, 0.01, 60},
		{"itl", itlBuckets, 0.0005, 1},
		{"duration", durationBuckets, 0.02, 300},
	} {
		b := h.bounds
		if b[0] > h.min || b[len(b)-1] < h.max {
			t.Errorf("%s: bounds %g … %g, want them to cover %g … %g", h.name, b[0], b[len(b)-1], h.min, h.max)
		}
		for i := 1; i < len(b); i++ {
			if r := b[i] / b[i-1]; r > 1.0906 {
				t.Errorf("%s: bucket (%g, %g] is %.1f %% wide, want at most 2^(1/8) (9.05 %%)", h.name, b[i-1], b[i], (r-1)*100)
			}
		}
		// Schema-3 bounds exactly, so a classic bucket never straddles a native one.
		for _, v := range b {
			k := math.Log2(v) * 8
			if math.Abs(k-math.Round(k)) > 1e-9 {
				t.Errorf("%s: bound %g is not 2^(k/8)", h.name, v)
			}
		}
	}
}
