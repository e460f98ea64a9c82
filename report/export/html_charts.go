package export

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/inferprobe/inferprobe/record"
)

// The page plots bounded data whatever the run's size: histograms of at
// most histBins bars, CDFs of at most about 2*cdfGrid vertices, and series over
// time in at most maxTimeBins bins.
const (
	histBins    = 40
	cdfGrid     = 200
	maxTimeBins = 120
)

// section is a group of charts under one heading.
type section struct {
	title   string
	figures []figure
}

// samples are a run's per-request values as the charts use them, sorted:
// timings in ms, lengths in tokens. They follow the summary's rules: TTFT
// counts for every request that got a first token, the rest for successes.
type samples struct {
	ttft, ttfot, latency, itl, isl, osl []float64
	// reasoning is set when some request's first output token came after its
	// first token, so that TTFOT says something TTFT does not.
	reasoning bool
}

func collect(r Run) samples {
	var s samples
	for _, q := range r.Requests {
		if q.Sent.IsZero() {
			continue
		}
		if q.HasTTFT {
			s.ttft = append(s.ttft, q.TTFT.Seconds()*ms)
		}
		if q.HasTTFOT {
			s.ttfot = append(s.ttfot, q.TTFOT.Seconds()*ms)
			s.reasoning = s.reasoning || !q.HasTTFT || q.TTFOT != q.TTFT
		}
		if q.Outcome != record.OutcomeOK {
			continue
		}
		s.latency = append(s.latency, q.Duration.Seconds()*ms)
		if q.ITL > 0 {
			s.itl = append(s.itl, q.ITL.Seconds()*ms)
		}
		s.isl = append(s.isl, float64(q.InputTokens))
		s.osl = append(s.osl, float64(q.OutputTokens))
	}
	for _, v := range [][]float64{s.ttft, s.ttfot, s.latency, s.itl, s.isl, s.osl} {
		slices.Sort(v)
	}
	return s
}

// sections are the report's charts: each latency's CDF and histogram on
// its own log axis, the sequence lengths, and the run over time. With a
// baseline, its percentiles are marked on the CDFs.
func sections(r Run) []section {
	s := collect(r)
	var base Metrics
	if r.Baseline != nil {
		base = r.Baseline.Metrics
	}
	ttft := []series{{label: "TTFT " + p50p99(s.ttft, "ms"), points: cdf(s.ttft)}}
	if s.reasoning {
		ttft = append(ttft, series{label: "TTFOT " + p50p99(s.ttfot, "ms"), points: cdf(s.ttfot)})
	}
	latencyCDF := func(id, title, tag string, ss []series) figure {
		if b := baselinePercentiles(base, tag); b != nil {
			ss = append(ss, series{label: "baseline p1…p99", points: b, dots: true, color: color.Black})
		}
		return figure{id: id, title: title, xLabel: "ms (log scale)", yLabel: "% of requests", logX: true, percent: true, series: ss}
	}
	hist := func(id, title string, v []float64) figure {
		return figure{id: id, title: title, xLabel: "ms (log scale)", yLabel: "requests", logX: true, bins: logBins(v)}
	}
	out := []section{
		{"Time to first token", []figure{
			latencyCDF("ttft-cdf", "Time to first token, CDF", "time_to_first_token", ttft),
			hist("ttft-hist", "Time to first token, histogram", s.ttft)}},
		{"Request latency", []figure{
			latencyCDF("latency-cdf", "Request latency, CDF", "request_latency", []series{{label: "latency " + p50p99(s.latency, "ms"), points: cdf(s.latency)}}),
			hist("latency-hist", "Request latency, histogram", s.latency)}},
		{"Inter-token latency", []figure{
			latencyCDF("itl-cdf", "Inter-token latency, CDF", "inter_token_latency", []series{{label: "ITL " + p50p99(s.itl, "ms"), points: cdf(s.itl)}}),
			hist("itl-hist", "Inter-token latency, histogram", s.itl)}},
		{"Sequence lengths", []figure{
			{id: "isl-hist", title: "Input sequence length (ISL)", xLabel: "tokens", yLabel: "requests", bins: linearBins(s.isl)},
			{id: "osl-hist", title: "Output sequence length (OSL)", xLabel: "tokens", yLabel: "requests", bins: linearBins(s.osl)}}},
	}
	return append(out, section{"Over time", overTimeFigures(r)})
}

func p50p99(sorted []float64, unit string) string {
	if len(sorted) == 0 {
		return ""
	}
	return fmt.Sprintf("(p50 %s, p99 %s %s)", num(quantile(sorted, .5)), num(quantile(sorted, .99)), unit)
}

// baselinePercentiles are the baseline's percentiles of tag as CDF points;
// nil without a baseline or that metric in it.
func baselinePercentiles(base Metrics, tag string) []point {
	var out []point
	for _, p := range []float64{1, 5, 10, 25, 50, 75, 90, 95, 99} {
		if v, ok := base[tag][fmt.Sprintf("p%g", p)]; ok && v > 0 {
			out = append(out, point{v, p})
		}
	}
	return out
}

// quantile interpolates linearly between closest ranks, as the summary's
// percentiles do.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}

// cdf is the empirical distribution of the positive values of sorted, in
// percent: every sample while there are few, else the distribution read at
// a fixed grid of fractions, finer in the tail, so that a run of a million
// requests draws as many vertices as one of a thousand.
func cdf(sorted []float64) []point {
	sorted = positive(sorted)
	n := len(sorted)
	var out []point
	if n <= 2*cdfGrid {
		for i, x := range sorted {
			out = append(out, point{x, float64(i+1) / float64(n) * 100})
		}
		return out
	}
	var fractions []float64
	for i := 1; i < cdfGrid; i++ {
		fractions = append(fractions, float64(i)/cdfGrid)
	}
	fractions = append(fractions, .996, .997, .998, .999, .9995, .9999, 1)
	for _, f := range fractions {
		// The smallest sample with at least a fraction f of them at or below it.
		i := max(int(math.Ceil(f*float64(n)))-1, 0)
		out = append(out, point{sorted[i], f * 100})
	}
	return out
}

// positive drops the values a log axis cannot place (sorted's leading
// zeros).
func positive(sorted []float64) []float64 {
	i, _ := slices.BinarySearchFunc(sorted, 0.0, func(v, t float64) int {
		if v <= t {
			return -1
		}
		return 1
	})
	return sorted[i:]
}

// barsFor is how many bars a histogram of n values gets: Rice's rule,
// 2·∛n, so that a short run is not drawn as a barcode, at least 8 and at
// most histBins.
func barsFor(n int) int {
	return min(max(int(math.Ceil(2*math.Cbrt(float64(n)))), 8), histBins)
}

// logBins are bars of equal width on a log axis, from the smallest
// positive value of sorted to the largest.
func logBins(sorted []float64) []plotter.HistogramBin {
	v := positive(sorted)
	if len(v) == 0 {
		return nil
	}
	lo, hi := v[0], v[len(v)-1]
	if lo == hi {
		return []plotter.HistogramBin{{Min: lo / 1.1, Max: hi * 1.1, Weight: float64(len(v))}}
	}
	k := barsFor(len(v))
	bins := make([]plotter.HistogramBin, k)
	ratio := math.Log(hi / lo)
	for i := range bins {
		bins[i].Min = lo * math.Exp(ratio*float64(i)/float64(k))
		bins[i].Max = lo * math.Exp(ratio*float64(i+1)/float64(k))
	}
	for _, x := range v {
		bins[min(int(math.Log(x/lo)/ratio*float64(k)), k-1)].Weight++
	}
	return bins
}

// linearBins are the bars of a histogram of token counts: one per count
// while that makes few enough bars, else bars of equal width.
func linearBins(sorted []float64) []plotter.HistogramBin {
	if len(sorted) == 0 {
		return nil
	}
	lo, hi := sorted[0], sorted[len(sorted)-1]
	width := max(1, math.Ceil((hi-lo+1)/float64(barsFor(len(sorted)))))
	n := int(math.Floor((hi-lo)/width)) + 1
	bins := make([]plotter.HistogramBin, n)
	for i := range bins {
		bins[i].Min = lo - 0.5 + float64(i)*width
		bins[i].Max = bins[i].Min + width
	}
	for _, x := range sorted {
		bins[min(int((x-lo)/width), n-1)].Weight++
	}
	return bins
}

// timeline cuts a run into bins of at least a second and at most
// maxTimeBins of them, from its first send.
type timeline struct {
	start time.Time
	bin   time.Duration
	n     int
}

func newTimeline(r Run) (timeline, bool) {
	d := r.Summary.Duration
	if d <= 0 {
		return timeline{}, false
	}
	bin := max(time.Second, d/maxTimeBins)
	return timeline{start: r.Summary.Start, bin: bin, n: int(math.Ceil(float64(d)/float64(bin))) + 1}, true
}

func (t timeline) index(at time.Time) int {
	return min(max(int(at.Sub(t.start)/t.bin), 0), t.n-1)
}

// spread adds amount to the bins over [from, to], in proportion to the
// time each bin shares with it (the first and last bins take what lies
// outside the timeline, so nothing is lost); all to to's bin when the span
// is empty.
func (t timeline) spread(bins []float64, from, to time.Time, amount float64) {
	span := to.Sub(from)
	if span <= 0 {
		bins[t.index(to)] += amount
		return
	}
	first, last := t.index(from), t.index(to)
	for i := first; i <= last; i++ {
		lo, hi := from, to
		if i > first {
			lo = t.start.Add(time.Duration(i) * t.bin)
		}
		if i < last {
			hi = t.start.Add(time.Duration(i+1) * t.bin)
		}
		bins[i] += amount * float64(hi.Sub(lo)) / float64(span)
	}
}

// x is the middle of bin i, in seconds since the start.
func (t timeline) x(i int) float64 { return (float64(i) + 0.5) * t.bin.Seconds() }

// quantiles reads, in each bin that holds values, the fractions qs of its
// values: one series per fraction.
func (t timeline) quantiles(values [][]float64, qs []float64) [][]point {
	out := make([][]point, len(qs))
	for i, v := range values {
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		for j, q := range qs {
			out[j] = append(out[j], point{t.x(i), quantile(v, q)})
		}
	}
	return out
}

// overTimeFigures chart the run over time: TTFT and ITL percentiles by send
// time, requests in flight, schedule lag by scheduled time, throughput and
// errors by end time.
func overTimeFigures(r Run) []figure {
	t, ok := newTimeline(r)
	figs := []figure{
		{id: "ttft-time", title: "Time to first token over time", xLabel: "seconds since start (send time)", yLabel: "ms"},
		{id: "itl-time", title: "Inter-token latency over time", xLabel: "seconds since start (send time)", yLabel: "ms"},
		{id: "concurrency-time", title: "Requests in flight over time", xLabel: "seconds since start", yLabel: "requests", floor: float64(r.Config.Concurrency)},
		{id: "lag-time", title: "Schedule lag over time", xLabel: "seconds since start (scheduled time)", yLabel: "ms"},
		{id: "throughput-time", title: "Output token throughput over time", xLabel: "seconds since start (as generated)", yLabel: "tokens/s"},
		{id: "requests-time", title: "Requests and errors over time", xLabel: "seconds since start (end time)", yLabel: "per second"},
	}
	if !ok {
		return figs
	}
	ttft, itl, lag := make([][]float64, t.n), make([][]float64, t.n), make([][]float64, t.n)
	for _, q := range r.Requests {
		if q.Sent.IsZero() {
			continue
		}
		if q.HasLag {
			at := q.Scheduled
			if at.IsZero() {
				at = q.Sent
			}
			lag[t.index(at)] = append(lag[t.index(at)], q.Lag.Seconds()*ms)
		}
		i := t.index(q.Sent)
		if q.HasTTFT {
			ttft[i] = append(ttft[i], q.TTFT.Seconds()*ms)
		}
		if q.ITL > 0 && q.Outcome == record.OutcomeOK {
			itl[i] = append(itl[i], q.ITL.Seconds()*ms)
		}
	}
	pct := []float64{.5, .99}
	names := []string{"p50", "p99", "max"}
	for i, v := range [][][]float64{ttft, itl} {
		for j, pts := range t.quantiles(v, pct) {
			figs[i].series = append(figs[i].series, series{label: names[j], points: pts})
		}
	}
	for j, pts := range t.quantiles(lag, []float64{.5, .99, 1}) {
		figs[3].series = append(figs[3].series, series{label: names[j], points: pts})
	}
	mean, peak := t.inFlight(r)
	figs[2].series = []series{{label: "mean", points: mean}, {label: "max", points: peak}}
	tokens, reqs, errs := overTime(r)
	figs[4].series = []series{{label: "output tokens/s", points: tokens}}
	figs[5].series = []series{{label: "completed/s", points: reqs}, {label: "errors/s", points: errs, color: colorError}}
	return figs
}

// inFlight is the number of requests in flight in each bin of the run,
// sent to end of response or failure: its mean over the bin and its
// maximum.
func (t timeline) inFlight(r Run) (mean, peak []point) {
	type event struct {
		at    time.Duration
		delta int
	}
	var events []event
	for _, q := range r.Requests {
		if q.Sent.IsZero() {
			continue
		}
		from := q.Sent.Sub(t.start)
		events = append(events, event{from, 1}, event{from + q.Duration, -1})
	}
	// At one instant ends go first: a request that ends as another starts
	// did not overlap it.
	slices.SortFunc(events, func(a, b event) int { return cmp.Or(cmp.Compare(a.at, b.at), a.delta-b.delta) })
	area, high := make([]float64, t.n), make([]float64, t.n)
	var now time.Duration
	cur := 0
	// advance integrates the current count up to the instant to.
	advance := func(to time.Duration) {
		for now < to {
			i := min(int(now/t.bin), t.n-1)
			end := to
			if i < t.n-1 {
				end = min(to, time.Duration(i+1)*t.bin)
			}
			area[i] += float64(cur) * (end - now).Seconds()
			high[i] = max(high[i], float64(cur))
			now = end
		}
	}
	for _, e := range events {
		advance(max(e.at, 0))
		cur += e.delta
		i := min(max(int(e.at/t.bin), 0), t.n-1)
		high[i] = max(high[i], float64(cur))
	}
	end := r.Summary.Duration
	for i := range t.n {
		from := time.Duration(i) * t.bin
		if from >= end {
			break
		}
		width := min(t.bin, end-from).Seconds()
		mean = append(mean, point{t.x(i), area[i] / width})
		peak = append(peak, point{t.x(i), high[i]})
	}
	return mean, peak
}

// overTime bins the run: output tokens per second as they were generated,
// completed requests and errors per second by end time.
func overTime(r Run) (tokens, reqs, errs []point) {
	t, ok := newTimeline(r)
	if !ok {
		return nil, nil, nil
	}
	tok, done, bad := make([]float64, t.n), make([]float64, t.n), make([]float64, t.n)
	for _, q := range r.Requests {
		if q.Sent.IsZero() || q.Outcome == record.OutcomeCancelled {
			continue
		}
		// By end time, failures too (their Latency is zero).
		end := q.Sent.Add(q.Duration)
		i := t.index(end)
		if q.Outcome == record.OutcomeOK {
			// Spread over the stream from its first token to its end: all at
			// the end, a steady run's bins would each get one or two whole
			// requests' tokens, and the chart would jump between the two.
			from := end
			if q.HasTTFT {
				from = q.Sent.Add(q.TTFT)
			}
			t.spread(tok, from, end, float64(q.OutputTokens))
			done[i]++
		} else {
			bad[i]++
		}
	}
	secs := t.bin.Seconds()
	for i := range t.n {
		tokens = append(tokens, point{t.x(i), tok[i] / secs})
		reqs = append(reqs, point{t.x(i), done[i] / secs})
		errs = append(errs, point{t.x(i), bad[i] / secs})
	}
	return tokens, reqs, errs
}
