package stats

import "math"

// RateBatches is how many equal slices of a run RateInterval cuts its span
// into: enough for the t interval of their rates to be usable (9 degrees of
// freedom), few enough that each slice holds many completions and the
// slices' rates are close to independent.
const RateBatches = 10

// RateInterval is the confidence interval at level for a rate measured as
// the total weight of events over span seconds (requests or tokens per
// second), by batch means: the span is cut into RateBatches equal slices,
// each slice's rate (the weight of the events at offsets within it, over
// its length) is one sample, and the interval is MeanInterval of those
// samples, whose mean is the rate itself. Unlike a Poisson interval on the
// count, it holds for completions that are not independent (a closed loop
// of N users completes almost regularly), as long as slices are long
// against one request; it is unbounded with fewer than two events per
// slice.
func RateInterval(offsets, weights []float64, span, level float64) Interval {
	if span <= 0 || len(offsets) < 2*RateBatches {
		return Interval{math.Inf(-1), math.Inf(1)}
	}
	return MeanIntervalOf(BatchRates(offsets, weights, span), level)
}

// BatchRates are the rates of RateInterval's slices.
func BatchRates(offsets, weights []float64, span float64) []float64 {
	width := span / RateBatches
	rates := make([]float64, RateBatches)
	for i, at := range offsets {
		b := min(max(int(at/width), 0), RateBatches-1)
		rates[b] += weights[i] / width
	}
	return rates
}
