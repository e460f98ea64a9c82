package traffic

import (
	"math"
	"slices"
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// ttfts are the successes' TTFTs of an hour at the daily peak, with regs applied throughout.
func ttfts(s Server, kind Kind, factor float64) []float64 {
	from := epoch.Add(time.Duration(s.PeakHour * float64(time.Hour)))
	var regs []Regression
	if kind != "" {
		regs = []Regression{{Kind: kind, Factor: factor, Start: from, Length: time.Hour}}
	}
	var out []float64
	for p := range s.Probes(from, time.Hour, 20, 3, regs...) {
		if p.OK {
			out = append(out, p.TTFT.Seconds())
		}
	}
	slices.Sort(out)
	return out
}

func quantile(sorted []float64, q float64) float64 { return sorted[int(q*float64(len(sorted)-1))] }

// The regressions do what the power table says they do, on every model: slower scales the
// whole distribution, tail moves the median by a few percent at most (the
// requests that join the tail at peak load) and roughly doubles the p99.
func TestRegressionsChangeWhatTheySay(t *testing.T) {
	for _, s := range Models() {
		base := ttfts(s, "", 0)
		slow := ttfts(s, Slower, 1.3)
		tail := ttfts(s, TailOnly, 2)
		for _, q := range []float64{0.25, 0.5, 0.75} {
			if r := quantile(slow, q) / quantile(base, q); math.Abs(r-1.3) > 0.05 {
				t.Errorf("%s: slower x1.3 moves p%.0f by x%.3f", s.Name, q*100, r)
			}
		}
		if r := quantile(tail, 0.5) / quantile(base, 0.5); math.Abs(r-1) > 0.08 {
			t.Errorf("%s: tail-only moves the median by x%.3f", s.Name, r)
		}
		if r := quantile(tail, 0.99) / quantile(base, 0.99); r < 1.5 || r > 3 {
			t.Errorf("%s: tail-only moves p99 by x%.2f, want about x2", s.Name, r)
		}
	}
}

// The same seed gives the same records, in the order they end.
func TestProbesReproducibleAndOrdered(t *testing.T) {
	s := Models()[0]
	var a, b []time.Time
	for p := range s.Probes(epoch, time.Hour, 5, 9) {
		a = append(a, p.Time)
	}
	for p := range s.Probes(epoch, time.Hour, 5, 9) {
		b = append(b, p.Time)
	}
	if !slices.Equal(a, b) || len(a) < 15000 {
		t.Fatalf("two runs of one seed differ, or too few records (%d)", len(a))
	}
	if !slices.IsSortedFunc(a, func(x, y time.Time) int { return x.Compare(y) }) {
		t.Error("records are not in the order they end")
	}
}

// No model's load steps: into and out of weekends, and from one day's jitter to the next, it
// moves by at most 1 % of full load a minute, as the daily cycle does, over five weeks of three
// seeds. A step at midnight would be paged as a deploy by any rule that pages on a step.
func TestLoadChangesWithoutSteps(t *testing.T) {
	span := 35 * 24 * time.Hour
	for _, s := range append(Models(), HeldOut()...) {
		for seed := uint64(1); seed <= 3; seed++ {
			days := s.dayScales(epoch, span, seed)
			prev := s.load(epoch, days, epoch)
			for at := epoch.Add(time.Minute); at.Before(epoch.Add(span)); at = at.Add(time.Minute) {
				l := s.load(at, days, epoch)
				if d := math.Abs(l - prev); d > 0.01 {
					t.Fatalf("%s, seed %d: load moves by %.3f in the minute to %s", s.Name, seed, d, at.Format("Mon 02 15:04"))
				}
				prev = l
			}
		}
	}
}
