// Package stats summarises samples as AIPerf does (mean, population
// standard deviation, numpy's linearly interpolated percentiles) and says
// how far to trust them: confidence intervals for percentiles, means and
// rates, and the tests that tell a change between two runs from noise. It
// imports nothing of inferprobe, so that every package that measures can
// use it.
package stats

import (
	"math"
	"slices"
)

// Stats summarises one metric's samples. Std is the population standard
// deviation and percentiles interpolate linearly between closest ranks, as
// numpy's defaults (and so AIPerf) do.
type Stats struct {
	Count int     `json:"count"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Std   float64 `json:"std"`
	Sum   float64 `json:"sum"`
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	// Intervals are Avg's and the percentiles' confidence intervals; nil
	// unless asked for.
	Intervals *Intervals `json:"intervals,omitempty"`
}

// Of is the exact Stats of samples, with their confidence intervals at
// level (such as 0.95) when level is above 0.
func Of(samples []float64, level float64) Stats {
	if len(samples) == 0 {
		return Stats{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum float64
	for _, v := range s {
		sum += v
	}
	avg := sum / float64(len(s))
	var sq float64
	for _, v := range s {
		sq += (v - avg) * (v - avg)
	}
	q := func(p float64) float64 { return Percentile(s, p) }
	st := Stats{
		Count: len(s), Avg: avg, Min: s[0], Max: s[len(s)-1], Std: math.Sqrt(sq / float64(len(s))), Sum: sum,
		P1: q(.01), P5: q(.05), P10: q(.10), P25: q(.25), P50: q(.50), P75: q(.75), P90: q(.90), P95: q(.95), P99: q(.99),
	}
	if level > 0 {
		st.Intervals = intervalsOf(s, st.Avg, st.Std, level)
	}
	return st
}

// Percentile is the p (0 to 1) percentile of sorted, interpolated linearly
// between closest ranks as numpy's default is.
func Percentile(sorted []float64, p float64) float64 {
	pos := p * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}
