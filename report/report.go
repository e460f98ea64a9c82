package report

import (
	"slices"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/prober"
)

// Report keeps the raw samples of a finite run (a bench or a burst) so that
// its summary has exact percentiles rather than histogram estimates, and one
// compact line per request for exports and charts over time. It implements
// prober.Recorder.
type Report struct {
	slo SLO

	mu                            sync.Mutex
	ttft, ttst, itl, latency, lag []float64
	// icl has one sample per gap between chunks, not per request, so it is
	// the one kept in bounded memory.
	icl                         reservoir
	perUser                     []float64
	inTokens, outTokens         []float64
	ok, failed, cancelled, good int
	errors                      map[prober.Reason]int
	firstSent, lastEnd          time.Time
	chunkCounted                bool // some token counts are chunk counts, not usage
	tokenizerCounted            bool // some came from the target's tokenizer
	requests                    []RequestRecord
}

// ReportOption configures a Report.
type ReportOption func(*Report)

// WithSLO counts the successful requests that met every set threshold of slo
// as good, for goodput.
func WithSLO(slo SLO) ReportOption { return func(r *Report) { r.slo = slo } }

// NewReport returns an empty report.
func NewReport(opts ...ReportOption) *Report {
	r := &Report{errors: map[prober.Reason]int{}, icl: newReservoir(maxChunkSamples)}
	for _, o := range opts {
		o(r)
	}
	return r
}

// maxChunkSamples bounds the inter-chunk gaps a report keeps: 8 MiB. A run of
// a million requests of a thousand tokens has a billion gaps.
const maxChunkSamples = 1 << 20

// RequestRecord is what a report keeps of one request: its timings, lengths
// and outcome, without its chunk offsets. Durations are zero when the request
// did not get that far (no first token, no second chunk, failed).
type RequestRecord struct {
	Seq       uint64
	Scheduled time.Time // when the scheduler wanted it sent
	Sent      time.Time // the time origin; zero when it was never sent
	// Lag is the client's own delay: Sent − Scheduled less any wait for the
	// concurrency cap.
	Lag time.Duration
	// TTFT and TTST are set when the request got one and two content chunks;
	// ITL and Latency only for successful requests (ITL with ≥ 2 chunks).
	TTFT, TTST, ITL, Latency time.Duration
	// Duration runs from Sent to the end of the response or the failure, for
	// every request that was sent: it places failures in time.
	Duration                  time.Duration
	Chunks                    int // content chunks received
	InputTokens, OutputTokens int
	Outcome                   prober.Outcome
	Reason                    prober.Reason
	Status                    int    // HTTP status; 0 without a response
	Err                       string // the failure, for exports; empty on success
	Good                      bool   // succeeded and met every SLO
}

// Started is part of prober.Recorder; a report only counts finished requests.
func (r *Report) Started() {}

// Observe adds a finished request, with the same rules as Series.Observe:
// timings of failed requests count, lengths and latency only for successes.
// It only appends, so that it stays cheap at high request rates.
func (r *Report) Observe(rec *prober.Record) {
	req := RequestRecord{
		Seq: rec.Seq, Scheduled: rec.Scheduled, Sent: rec.Sent, Lag: rec.Lag(), Chunks: len(rec.Chunks), Duration: rec.Duration,
		Outcome: rec.Outcome, Reason: rec.Reason, Status: rec.Status,
	}
	if rec.Outcome != prober.OutcomeOK {
		req.Err = rec.Err
	}
	req.TTFT, _ = rec.TTFT()
	req.TTST, _ = rec.TTST()
	if rec.Outcome == prober.OutcomeOK {
		req.ITL, _ = rec.ITL()
		req.Latency = rec.Duration
		req.InputTokens, req.OutputTokens = rec.InputTokens, rec.OutputTokens
		req.Good = r.slo.Met(rec)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req)
	if !rec.Sent.IsZero() { // a request cancelled before its send has no lag
		r.lag = append(r.lag, req.Lag.Seconds())
	}
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
	if len(rec.Chunks) > 0 {
		r.ttft = append(r.ttft, req.TTFT.Seconds())
	}
	if len(rec.Chunks) > 1 {
		r.ttst = append(r.ttst, req.TTST.Seconds())
	}
	for i := 1; i < len(rec.Chunks); i++ {
		r.icl.add((rec.Chunks[i] - rec.Chunks[i-1]).Seconds())
	}
	if rec.Outcome != prober.OutcomeOK {
		return
	}
	if req.ITL > 0 {
		r.itl = append(r.itl, req.ITL.Seconds())
		r.perUser = append(r.perUser, 1/req.ITL.Seconds())
	}
	if req.Good {
		r.good++
	}
	r.latency = append(r.latency, rec.Duration.Seconds())
	r.inTokens = append(r.inTokens, float64(rec.InputTokens))
	r.outTokens = append(r.outTokens, float64(rec.OutputTokens))
	r.chunkCounted = r.chunkCounted || rec.TokenSource == prober.TokensFromChunks
	r.tokenizerCounted = r.tokenizerCounted || rec.TokenSource == prober.TokensFromTokenizer
}

// Counts returns the requests finished so far, for progress lines.
func (r *Report) Counts() (ok, failed, cancelled int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ok, r.failed, r.cancelled
}

// Requests returns one record per finished request, in sequence order.
func (r *Report) Requests() []RequestRecord {
	r.mu.Lock()
	out := slices.Clone(r.requests)
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b RequestRecord) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	})
	return out
}

// Summary is a report's result, with AIPerf's definitions: timings in
// seconds, throughputs per second of Duration, which runs from the first
// send to the end of the last response.
type Summary struct {
	TTFT         Stats `json:"time_to_first_token_seconds"`
	TTST         Stats `json:"time_to_second_token_seconds"`
	ITL          Stats `json:"inter_token_latency_seconds"`
	InterChunk   Stats `json:"inter_chunk_latency_seconds"`
	Latency      Stats `json:"request_latency_seconds"`
	ScheduleLag  Stats `json:"schedule_lag_seconds"`
	InputTokens  Stats `json:"input_sequence_length"`
	OutputTokens Stats `json:"output_sequence_length"`
	// OutputTokenThroughputPerUser is, per successful request, 1 / ITL:
	// the decode speed one user saw (tokens/s).
	OutputTokenThroughputPerUser Stats `json:"output_token_throughput_per_user"`

	OK        int                   `json:"ok"`
	Failed    int                   `json:"failed"`
	Cancelled int                   `json:"cancelled"`
	Errors    map[prober.Reason]int `json:"errors_by_reason"`
	// Good counts the successful requests that met every SLO; with no SLO
	// set every successful request is good.
	Good int `json:"good"`

	Start    time.Time     `json:"start,omitzero"`
	End      time.Time     `json:"end,omitzero"`
	Duration time.Duration `json:"-"`
	// DurationSeconds is Duration, for JSON readers.
	DurationSeconds float64 `json:"duration_seconds"`

	// RequestThroughput is successful requests per second.
	RequestThroughput float64 `json:"request_throughput"`
	// OutputTokenThroughput is output tokens of successful requests per
	// second; TotalTokenThroughput counts their input tokens too.
	OutputTokenThroughput float64 `json:"output_token_throughput"`
	TotalTokenThroughput  float64 `json:"total_token_throughput"`
	// Goodput is good requests per second.
	Goodput float64 `json:"goodput"`
	// InputTokensTotal and OutputTokensTotal sum the successful requests'
	// lengths.
	InputTokensTotal  float64 `json:"input_tokens_total"`
	OutputTokensTotal float64 `json:"output_tokens_total"`
	// TokensFromChunks says some output lengths were counted as one token per
	// chunk because the server sent no usage.
	TokensFromChunks bool `json:"tokens_from_chunks"`
	// TokensFromTokenizer says some were counted with the target's
	// tokenizer on the received text, because the server sent no usage.
	TokensFromTokenizer bool `json:"tokens_from_tokenizer"`
}

// Summary computes the summary of what was observed so far.
func (r *Report) Summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{
		TTFT: statsOf(r.ttft), TTST: statsOf(r.ttst), ITL: statsOf(r.itl), InterChunk: r.icl.stats(),
		Latency: statsOf(r.latency), ScheduleLag: statsOf(r.lag),
		InputTokens: statsOf(r.inTokens), OutputTokens: statsOf(r.outTokens),
		OutputTokenThroughputPerUser: statsOf(r.perUser),
		OK:                           r.ok, Failed: r.failed, Cancelled: r.cancelled, Good: r.good,
		Errors:           make(map[prober.Reason]int, len(r.errors)),
		TokensFromChunks: r.chunkCounted, TokensFromTokenizer: r.tokenizerCounted,
	}
	for k, v := range r.errors {
		s.Errors[k] = v
	}
	for _, v := range r.inTokens {
		s.InputTokensTotal += v
	}
	for _, v := range r.outTokens {
		s.OutputTokensTotal += v
	}
	if r.lastEnd.After(r.firstSent) {
		s.Start, s.End = r.firstSent, r.lastEnd
		s.Duration = r.lastEnd.Sub(r.firstSent)
		secs := s.Duration.Seconds()
		s.DurationSeconds = secs
		s.RequestThroughput = float64(r.ok) / secs
		s.OutputTokenThroughput = s.OutputTokensTotal / secs
		s.TotalTokenThroughput = (s.InputTokensTotal + s.OutputTokensTotal) / secs
		s.Goodput = float64(r.good) / secs
	}
	return s
}
