package collector

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/prober"
)

// Report keeps the raw samples of a finite run (a bench) so that its summary
// has exact percentiles rather than histogram estimates. It implements
// prober.Recorder.
type Report struct {
	mu                                 sync.Mutex
	ttft, ttst, itl, icl, latency, lag []float64
	inTokens, outTokens                []float64
	ok, failed, cancelled              int
	errors                             map[prober.Reason]int
	firstSent, lastEnd                 time.Time
	chunkCounted                       bool // some token counts are chunk counts, not usage
}

// NewReport returns an empty report.
func NewReport() *Report { return &Report{errors: map[prober.Reason]int{}} }

// Started is part of prober.Recorder; a report only counts finished requests.
func (r *Report) Started() {}

// Observe adds a finished request, with the same rules as Series.Observe:
// timings of failed requests count, lengths and latency only for successes.
func (r *Report) Observe(rec *prober.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lag = append(r.lag, rec.Lag().Seconds())
	switch rec.Outcome {
	case prober.OutcomeOK:
		r.ok++
	case prober.OutcomeCancelled:
		r.cancelled++
		return
	default:
		r.failed++
		r.errors[rec.Reason]++
	}
	if !rec.Sent.IsZero() && (r.firstSent.IsZero() || rec.Sent.Before(r.firstSent)) {
		r.firstSent = rec.Sent
	}
	if end := rec.Sent.Add(rec.Duration); end.After(r.lastEnd) {
		r.lastEnd = end
	}
	if d, ok := rec.TTFT(); ok {
		r.ttft = append(r.ttft, d.Seconds())
	}
	if d, ok := rec.TTST(); ok {
		r.ttst = append(r.ttst, d.Seconds())
	}
	for i := 1; i < len(rec.Chunks); i++ {
		r.icl = append(r.icl, (rec.Chunks[i] - rec.Chunks[i-1]).Seconds())
	}
	if rec.Outcome != prober.OutcomeOK {
		return
	}
	if d, ok := rec.ITL(); ok {
		r.itl = append(r.itl, d.Seconds())
	}
	r.latency = append(r.latency, rec.Duration.Seconds())
	r.inTokens = append(r.inTokens, float64(rec.InputTokens))
	r.outTokens = append(r.outTokens, float64(rec.OutputTokens))
	r.chunkCounted = r.chunkCounted || rec.TokenSource == prober.TokensFromChunks
}

// Counts returns the requests finished so far, for progress lines.
func (r *Report) Counts() (ok, failed, cancelled int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ok, r.failed, r.cancelled
}

// Stats summarises one metric's samples. Percentiles interpolate linearly
// between closest ranks, as numpy's default (and AIPerf) does.
type Stats struct {
	Count                                     int
	Avg, Min, Max, Std                        float64
	P1, P5, P10, P25, P50, P75, P90, P95, P99 float64
}

func statsOf(samples []float64) Stats {
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
	q := func(p float64) float64 {
		pos := p * float64(len(s)-1)
		lo := int(math.Floor(pos))
		hi := min(lo+1, len(s)-1)
		return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
	}
	return Stats{
		Count: len(s), Avg: avg, Min: s[0], Max: s[len(s)-1], Std: math.Sqrt(sq / float64(len(s))),
		P1: q(.01), P5: q(.05), P10: q(.10), P25: q(.25), P50: q(.50), P75: q(.75), P90: q(.90), P95: q(.95), P99: q(.99),
	}
}

// Summary is a report's result.
type Summary struct {
	TTFT, TTST, ITL, InterChunk, Latency, ScheduleLag Stats
	InputTokens, OutputTokens                         Stats
	OK, Failed, Cancelled                             int
	Errors                                            map[prober.Reason]int
	// Start and End are the first send and the end of the last response;
	// Duration runs between them.
	Start, End time.Time
	Duration   time.Duration
	// RequestThroughput and OutputTokenThroughput are per second of Duration.
	RequestThroughput, OutputTokenThroughput float64
	// OutputTokensTotal is the sum of the successful requests' output tokens.
	OutputTokensTotal float64
	// TokensFromChunks says some output lengths were counted as one token per
	// chunk because the server sent no usage.
	TokensFromChunks bool
}

// Summary computes the summary of what was observed so far.
func (r *Report) Summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{
		TTFT: statsOf(r.ttft), TTST: statsOf(r.ttst), ITL: statsOf(r.itl), InterChunk: statsOf(r.icl),
		Latency: statsOf(r.latency), ScheduleLag: statsOf(r.lag),
		InputTokens: statsOf(r.inTokens), OutputTokens: statsOf(r.outTokens),
		OK: r.ok, Failed: r.failed, Cancelled: r.cancelled,
		Errors:           make(map[prober.Reason]int, len(r.errors)),
		TokensFromChunks: r.chunkCounted,
	}
	for k, v := range r.errors {
		s.Errors[k] = v
	}
	if r.lastEnd.After(r.firstSent) {
		s.Start, s.End = r.firstSent, r.lastEnd
		s.Duration = r.lastEnd.Sub(r.firstSent)
		secs := s.Duration.Seconds()
		s.RequestThroughput = float64(r.ok) / secs
		var out float64
		for _, v := range r.outTokens {
			out += v
		}
		s.OutputTokensTotal = out
		s.OutputTokenThroughput = out / secs
	}
	return s
}
