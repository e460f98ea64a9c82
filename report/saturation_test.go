package report

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestShortRunLagReason: a run too short for the p99 rule is client-bound
// when its median lag is extreme, and not for one unlucky request.
func TestShortRunLagReason(t *testing.T) {
	ms := func(v ...float64) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x * float64(time.Millisecond))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		lags  []time.Duration
		bound bool
	}{
		{"healthy", ms(0.2, 0.3, 0.1, 0.4, 0.2, 0.3, 0.2, 0.1, 0.3, 0.2), false},
		{"one unlucky request", ms(0.2, 0.3, 0.1, 40, 0.2, 0.3, 0.2, 0.1, 0.3, 0.2), false},
		{"extreme lag", ms(120, 250, 90, 300, 180, 40, 220, 160, 310, 270), true},
		{"too few to judge", ms(200, 300), false},
		{"most late", ms(0.2, 15, 0.3, 12, 20, 30), true},
	} {
		sorted := slices.Sorted(slices.Values(tc.lags))
		// Interpolated, as bench's report computes its p50.
		mid := len(sorted) / 2
		median := sorted[mid]
		if len(sorted)%2 == 0 {
			median = (sorted[mid-1] + sorted[mid]) / 2
		}
		why := ShortRunLagReason(median, len(sorted))
		if (why != "") != tc.bound {
			t.Errorf("%s: %q, want client-bound %v", tc.name, why, tc.bound)
		}
		if tc.bound && !strings.Contains(why, "short run") {
			t.Errorf("%s: %q does not say it judged a short run", tc.name, why)
		}
	}
	// From 50 requests on, SaturationReason's p99 rule judges.
	if why := ShortRunLagReason(time.Second, 50); why != "" {
		t.Errorf("50 requests judged by the short-run rule: %q", why)
	}
}
