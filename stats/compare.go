package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// MannWhitney is the two-sided p-value of the Mann–Whitney U test that a
// and b come from one distribution, against one of them tending to larger
// values, by the normal approximation with the correction for ties (exact
// enough from about 20 samples a side); 1 when either side is empty.
func MannWhitney(a, b []float64) float64 {
	n1, n2 := float64(len(a)), float64(len(b))
	if n1 == 0 || n2 == 0 {
		return 1
	}
	type sample struct {
		v     float64
		fromA bool
	}
	all := make([]sample, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, sample{v, true})
	}
	for _, v := range b {
		all = append(all, sample{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	var rankSumA, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // mean of ranks i+1 … j
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankSumA += rank
			}
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	n := n1 + n2
	u := rankSumA - n1*(n1+1)/2
	mean := n1 * n2 / 2
	variance := n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return 1 // every value equal
	}
	z := (math.Abs(u-mean) - 0.5) / math.Sqrt(variance) // with continuity correction
	return min(1, 2*(1-NormalCDF(max(z, 0))))
}

// Change is a statistic's change from a baseline sample to a current one:
// the difference of the statistic, its confidence interval and the
// two-sided p-value that it is 0.
type Change struct {
	Baseline, Current float64
	Interval          Interval // of Current − Baseline
	P                 float64
}

// bootstrapRounds is how many resamples BootstrapChanges draws: enough for
// a standard error within about 5 %, which is what its normal interval and
// p-value use.
const bootstrapRounds = 400

// maxBootstrapSamples bounds the samples a side is resampled from: larger
// sides are resampled at this size and the spread scaled by √(m/n), as the
// standard error of a mean or percentile falls with √n; the cost then
// stays under a second per metric whatever the run's length.
const maxBootstrapSamples = 20_000

// BootstrapChanges are the changes of each statistic of stats (each reads
// a sorted sample) from baseline to current, at level: each side is
// resampled with replacement, the spread of the difference of the
// resamples' statistics is its standard error, and the interval and
// p-value are the normal ones with that error. seed makes it
// deterministic. It assumes independent samples within each side.
func BootstrapChanges(baseline, current []float64, stats []func(sorted []float64) float64, level float64, seed uint64) []Change {
	b, c := slices.Sorted(slices.Values(baseline)), slices.Sorted(slices.Values(current))
	out := make([]Change, len(stats))
	for i, st := range stats {
		out[i] = Change{Baseline: st(b), Current: st(c), P: 1, Interval: Interval{math.Inf(-1), math.Inf(1)}}
	}
	if len(b) < 2 || len(c) < 2 {
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	// The sides are resampled independently, so the difference's variance
	// is the sum of theirs.
	ofB, ofC := make([][]float64, len(stats)), make([][]float64, len(stats))
	mb, mc := min(len(b), maxBootstrapSamples), min(len(c), maxBootstrapSamples)
	rb, rc := make([]float64, mb), make([]float64, mc)
	countB, countC := make([]int, len(b)), make([]int, len(c))
	for range bootstrapRounds {
		resample(rng, b, rb, countB)
		resample(rng, c, rc, countC)
		for i, st := range stats {
			ofB[i] = append(ofB[i], st(rb))
			ofC[i] = append(ofC[i], st(rc))
		}
	}
	z := NormalQuantile(1 - (1-level)/2)
	for i := range stats {
		// Each side's variance is scaled from its resample's size to its own.
		sb, sc := Of(ofB[i], 0).Std, Of(ofC[i], 0).Std
		se := math.Sqrt(sb*sb*float64(mb)/float64(len(b)) + sc*sc*float64(mc)/float64(len(c)))
		delta := out[i].Current - out[i].Baseline
		out[i].Interval = Interval{delta - z*se, delta + z*se}
		switch {
		case se > 0:
			out[i].P = 2 * (1 - NormalCDF(math.Abs(delta)/se))
		case delta != 0:
			out[i].P = 0
		}
	}
	return out
}

// resample fills into with draws from sorted, in order: it counts how
// often each index is drawn and lays the values out by index, which is
// linear where sorting the draws is not. counts has len(sorted).
func resample(rng *rand.Rand, sorted, into []float64, counts []int) {
	clear(counts)
	for range into {
		counts[rng.IntN(len(sorted))]++
	}
	k := 0
	for i, c := range counts {
		for range c {
			into[k] = sorted[i]
			k++
		}
	}
}

// Holm are p-values adjusted for testing them together by Holm's
// step-down method: rejecting where an adjusted value is below α keeps the
// chance of any false rejection among them below α, whatever their
// dependence.
func Holm(p []float64) []float64 {
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return p[order[i]] < p[order[j]] })
	out := make([]float64, len(p))
	running := 0.0
	for rank, i := range order {
		running = max(running, min(1, float64(len(p)-rank)*p[i]))
		out[i] = running
	}
	return out
}

// Welch is the change of the mean from baseline to current by Welch's t
// test (unequal variances): its interval at level and two-sided p-value.
// It assumes independent samples on each side; with fewer than two a side
// it is unbounded, p 1.
func Welch(baseline, current []float64, level float64) Change {
	b, c := Of(baseline, 0), Of(current, 0)
	out := Change{Baseline: b.Avg, Current: c.Avg, P: 1, Interval: Interval{math.Inf(-1), math.Inf(1)}}
	if b.Count < 2 || c.Count < 2 {
		return out
	}
	// Sample variances over n, from the population spread Of keeps.
	vb := b.Std * b.Std / float64(b.Count-1)
	vc := c.Std * c.Std / float64(c.Count-1)
	delta := c.Avg - b.Avg
	se := math.Sqrt(vb + vc)
	if se == 0 {
		if delta != 0 {
			out.P, out.Interval = 0, Interval{delta, delta}
		}
		return out
	}
	df := (vb + vc) * (vb + vc) / (vb*vb/float64(b.Count-1) + vc*vc/float64(c.Count-1))
	h := StudentQuantile(1-(1-level)/2, df) * se
	out.Interval = Interval{delta - h, delta + h}
	out.P = 2 * (1 - StudentCDF(math.Abs(delta)/se, df))
	return out
}
