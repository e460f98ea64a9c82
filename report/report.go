// Package report derives what each finished request contributes to the
// measurements (Contribute, the one home of the counting rules, which the
// Prometheus series in collector share) and keeps the exact results of a
// finite run, a bench or a burst: raw samples, exact percentiles, goodput
// against an SLO.
package report

import (
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/stats"
)

// Report keeps the raw samples of a finite run (a bench or a burst) so that
// its summary has exact percentiles rather than histogram estimates, and one
// compact line per request for exports and charts over time. It implements
// prober.Recorder.
type Report struct {
	slo SLO

	mu                                            sync.Mutex
	ttft, ttfot, ttst, itl, latency, lag, capWait []float64
	// icl has one sample per gap between chunks, not per request, so it is
	// the one kept in bounded memory.
	icl                 reservoir
	perUser             []float64
	inTokens, outTokens []float64
	// AIPerf's further per-request metrics (aiperf.go).
	decode, e2eOut, prefillPerUser, outCount, reasoning []float64
	usagePrompt, usageCompletion, usageTotal            []float64
	promptDiff, completionDiff, oslDiff, creditToStart  []float64
	images, imageThroughput, imageLatency               []float64
	audioDuration, rtfx                                 []float64
	// effectiveLatency is AIPerf's: from the scheduled send to the end
	// (credit-to-start plus the request's latency), failures included.
	effectiveLatency                  []float64
	http                              httpSamples
	usageDiscrepancies, oslMismatches int
	// kept is what the requests' gaps and bodies hold, against
	// MaxKeptBytes; dropped counts the requests whose details did not fit.
	kept                                    int
	dropped                                 int
	reasoningTokens                         float64
	ok, failed, cancelled, good, mismatches int
	clientPaused                            int // requests left out: the client did not run while they were due or in flight
	lost                                    int // requests the client lost (record.Reason.ClientLoss)
	errors                                  map[record.Reason]int
	firstSent, lastEnd                      time.Time
	chunkCounted                            bool // some token counts are chunk counts, not usage
	tokenizerCounted                        bool // some came from the target's tokenizer
	requests                                []RequestRecord
	connRetries, keepAliveWithheld          int
	compressed                              map[record.Encoding]int
}

// ReportOption configures a Report.
type ReportOption func(*Report)

// WithSLO counts the successful requests that met every set threshold of slo
// as good, for goodput.
func WithSLO(slo SLO) ReportOption { return func(r *Report) { r.slo = slo } }

// NewReport returns an empty report.
func NewReport(opts ...ReportOption) *Report {
	r := &Report{errors: map[record.Reason]int{}, icl: newReservoir(maxChunkSamples)}
	for _, o := range opts {
		o(r)
	}
	return r
}

// maxChunkSamples bounds the inter-chunk gaps a report keeps: 8 MiB. A run of
// a million requests of a thousand tokens has a billion gaps.
const maxChunkSamples = 1 << 20

// MaxKeptBytes bounds the per-request details a report keeps for the
// artifacts (each request's chunk gaps and body): 256 MiB. Past it, later
// requests are exported without them, and the export says how many.
const MaxKeptBytes = 256 << 20

// RequestRecord is what a report keeps of one request: what it contributed,
// without its chunk offsets (Gaps yields none), and what places and
// explains it.
type RequestRecord struct {
	Seq       uint64
	ID        record.RequestID
	Run       record.RunID
	Scheduled time.Time // when the scheduler wanted it sent
	Sent      time.Time // the time origin; zero when it was never sent
	Status    int       // HTTP status; 0 without a response
	Err       string    // the failure, for exports; empty on success
	Session   string    // the multi-turn session; empty for single requests
	URL       int       // which of the target's several URLs it went to (record.Record.URL)
	// Body is the request body sent and Gaps the inter-chunk latencies in
	// ms, for the artifacts; both nil when the report's budget for them
	// (MaxKeptBytes) was spent, and Body nil for a request never built.
	Body []byte
	Gaps []float32
	Contribution
}

// Started is part of prober.Recorder; a report only counts finished requests.
func (r *Report) Started() {}

// Observe adds a finished request. It only appends, so that it stays cheap
// at high request rates.
func (r *Report) Observe(rec *record.Record) {
	c := Contribute(rec, r.slo)
	req := RequestRecord{Seq: rec.Seq, ID: rec.ID, Run: rec.Run, Scheduled: rec.Scheduled, Sent: rec.Sent, Status: rec.Status, Session: rec.Session, URL: rec.URL, Contribution: c}
	req.chunks = nil
	if rec.Outcome != record.OutcomeOK {
		req.Err = rec.Err
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if size := len(rec.Body) + 4*max(len(c.chunks)-1, 0); r.kept+size <= MaxKeptBytes {
		r.kept += size
		req.Body = rec.Body
		for gap := range c.Gaps() {
			req.Gaps = append(req.Gaps, float32(gap.Seconds()*1e3))
		}
	} else {
		r.dropped++
	}
	r.requests = append(r.requests, req)
	r.add(&c, rec.Sent, rec.Scheduled, c.Gaps())
}

// add counts a finished request, sent at sent for scheduled, whose
// inter-chunk gaps are gaps; r.mu is held.
func (r *Report) add(c *Contribution, sent, scheduled time.Time, gaps iter.Seq[time.Duration]) {
	if c.ClientPaused > 0 {
		// Its timings are the client's pause: exported, never measured.
		r.clientPaused++
		return
	}
	if c.HasLag {
		r.lag = append(r.lag, c.Lag.Seconds())
		r.creditToStart = append(r.creditToStart, sent.Sub(scheduled).Seconds())
		r.effectiveLatency = append(r.effectiveLatency, (sent.Sub(scheduled) + c.Duration).Seconds())
	}
	r.capWait = append(r.capWait, c.CapWait.Seconds())
	if c.ConnRetried {
		r.connRetries++
	}
	if c.KeepAliveWithheld {
		r.keepAliveWithheld++
	}
	if c.Encoding != record.EncodingIdentity {
		if r.compressed == nil {
			r.compressed = map[record.Encoding]int{}
		}
		r.compressed[c.Encoding]++
	}
	switch c.Outcome {
	case record.OutcomeOK:
		r.ok++
	case record.OutcomeCancelled:
		// Its lag counted, but it does not stretch the run's span.
		r.cancelled++
		return
	default:
		if c.Reason.ClientLoss() {
			// The client's loss, not the target's failure.
			r.lost++
			return
		}
		r.failed++
		r.errors[c.Reason]++
	}
	if c.HasLag && (r.firstSent.IsZero() || sent.Before(r.firstSent)) {
		r.firstSent = sent
	}
	if end := sent.Add(c.Duration); end.After(r.lastEnd) {
		r.lastEnd = end
	}
	if c.HasTTFT {
		r.ttft = append(r.ttft, c.TTFT.Seconds())
	}
	if c.HasTTFOT {
		r.ttfot = append(r.ttfot, c.TTFOT.Seconds())
	}
	if c.HasTTST {
		r.ttst = append(r.ttst, c.TTST.Seconds())
	}
	for gap := range gaps {
		r.icl.add(gap.Seconds())
	}
	if c.Outcome != record.OutcomeOK {
		return
	}
	if c.ITL > 0 {
		r.itl = append(r.itl, c.ITL.Seconds())
		r.perUser = append(r.perUser, 1/c.ITL.Seconds())
	}
	if c.Good {
		r.good++
	}
	if c.Mismatch {
		r.mismatches++
	}
	r.latency = append(r.latency, c.Duration.Seconds())
	r.inTokens = append(r.inTokens, float64(c.ClientInputTokens()))
	r.outTokens = append(r.outTokens, float64(c.OutputTokens))
	r.observeAIPerf(c)
	r.reasoningTokens += float64(c.ReasoningTokens)
	r.chunkCounted = r.chunkCounted || c.TokenSource == record.TokensFromChunks
	r.tokenizerCounted = r.tokenizerCounted || c.TokenSource == record.TokensFromTokenizer
}

// observeAIPerf adds a success's share of AIPerf's further metrics.
func (r *Report) observeAIPerf(c *Contribution) {
	keep := func(to *[]float64) func(float64, bool) {
		return func(v float64, ok bool) {
			if ok {
				*to = append(*to, v)
			}
		}
	}
	d, ok := c.DecodeDuration()
	keep(&r.decode)(d.Seconds(), ok)
	keep(&r.e2eOut)(c.E2EOutputThroughput())
	keep(&r.prefillPerUser)(c.PrefillThroughputPerUser())
	r.outCount = append(r.outCount, float64(c.OutputTokenCount()))
	keep(&r.reasoning)(float64(c.ReasoningTokens), c.ReasoningTokens > 0)
	keep(&r.usagePrompt)(float64(c.UsagePromptTokens), c.UsagePromptTokens > 0)
	n, ok := c.UsageCompletionTokens()
	keep(&r.usageCompletion)(float64(n), ok)
	n, ok = c.UsageTotalTokens()
	keep(&r.usageTotal)(float64(n), ok)
	keep(&r.promptDiff)(c.UsagePromptDiffPct())
	keep(&r.completionDiff)(c.UsageCompletionDiffPct())
	keep(&r.oslDiff)(c.OSLMismatchDiffPct())
	keep(&r.images)(float64(c.Images), c.Images > 0)
	keep(&r.imageThroughput)(c.ImageThroughput())
	keep(&r.imageLatency)(c.ImageLatency())
	keep(&r.audioDuration)(c.AudioSeconds, c.AudioSeconds > 0)
	keep(&r.rtfx)(c.RTFx())
	if h, ok := c.HTTPTrace(); ok {
		r.http.add(h)
	}
	if c.UsageDiscrepancy() {
		r.usageDiscrepancies++
	}
	if c.OSLMismatch() {
		r.oslMismatches++
	}
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
	TTFT stats.Stats `json:"time_to_first_token_seconds"`
	// TTFOT is the time to the first chunk with non-reasoning content.
	TTFOT       stats.Stats `json:"time_to_first_output_token_seconds"`
	TTST        stats.Stats `json:"time_to_second_token_seconds"`
	ITL         stats.Stats `json:"inter_token_latency_seconds"`
	InterChunk  stats.Stats `json:"inter_chunk_latency_seconds"`
	Latency     stats.Stats `json:"request_latency_seconds"`
	ScheduleLag stats.Stats `json:"schedule_lag_seconds"`
	// CapWait is how long max_concurrency held each request past its
	// scheduled send (0 when a slot was free or there is no cap).
	CapWait      stats.Stats `json:"concurrency_wait_seconds"`
	InputTokens  stats.Stats `json:"input_sequence_length"`
	OutputTokens stats.Stats `json:"output_sequence_length"`
	// OutputTokenThroughputPerUser is, per successful request, 1 / ITL:
	// the decode speed one user saw (tokens/s).
	OutputTokenThroughputPerUser stats.Stats `json:"output_token_throughput_per_user"`

	OK        int                   `json:"ok"`
	Failed    int                   `json:"failed"`
	Cancelled int                   `json:"cancelled"`
	Errors    map[record.Reason]int `json:"errors_by_reason"`
	// Lost counts the requests the client lost (its worker died while it
	// held them: record.Reason.ClientLoss), which are neither failed nor
	// in Errors: they say nothing of the target.
	Lost int `json:"client_lost"`
	// ClientPaused counts the requests left out of every other figure
	// (outcomes included) because a process of the client did not run for
	// longer than a threshold while they were due or in flight
	// (record.Record.ClientPaused): their timings are the client's.
	ClientPaused int `json:"client_paused"`
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
	// ReasoningTokensTotal is the part of OutputTokensTotal the server's
	// usage counts as reasoning.
	ReasoningTokensTotal float64 `json:"reasoning_tokens_total"`
	// OutputLengthMismatches counts the successful requests whose output
	// length differed from the length they pinned (min_tokens, ignore_eos).
	OutputLengthMismatches int `json:"output_length_mismatches"`
	// TokensFromChunks says some output lengths were counted as one token per
	// chunk because the server sent no usage.
	TokensFromChunks bool `json:"tokens_from_chunks"`
	// TokensFromTokenizer says some were counted with the target's
	// tokenizer on the received text, because the server sent no usage.
	TokensFromTokenizer bool `json:"tokens_from_tokenizer"`

	// AIPerf's further metrics (aiperf.go): InputTokens above is the
	// client's count of the prompt, UsagePromptTokens the server's.
	DecodeDuration           stats.Stats `json:"decode_duration_seconds"`
	E2EOutputThroughput      stats.Stats `json:"e2e_output_token_throughput"`
	PrefillThroughputPerUser stats.Stats `json:"prefill_throughput_per_user"`
	OutputTokenCount         stats.Stats `json:"output_token_count"`
	ReasoningTokens          stats.Stats `json:"reasoning_token_count"`
	UsagePromptTokens        stats.Stats `json:"usage_prompt_tokens"`
	UsageCompletionTokens    stats.Stats `json:"usage_completion_tokens"`
	UsageTotalTokens         stats.Stats `json:"usage_total_tokens"`
	UsagePromptDiffPct       stats.Stats `json:"usage_prompt_tokens_diff_pct"`
	UsageCompletionDiffPct   stats.Stats `json:"usage_completion_tokens_diff_pct"`
	OSLMismatchDiffPct       stats.Stats `json:"osl_mismatch_diff_pct"`
	// The image and audio metrics, over the requests that carried them.
	NumImages            stats.Stats `json:"num_images"`
	ImageThroughput      stats.Stats `json:"image_throughput"`
	ImageLatency         stats.Stats `json:"image_latency_seconds"`
	AudioDuration        stats.Stats `json:"audio_duration_seconds"`
	RTFx                 stats.Stats `json:"rtfx"`
	CreditToStart        stats.Stats `json:"credit_to_start_latency_seconds"`
	EffectiveLatency     stats.Stats `json:"effective_latency_seconds"`
	HTTP                 HTTPStats   `json:"http_trace"`
	UsageDiscrepancies   int         `json:"usage_discrepancy_count"`
	OSLMismatches        int         `json:"osl_mismatch_count"`
	InputTokenThroughput float64     `json:"input_token_throughput"`
	// RequestErrorRate is the failed share of the requests that ended,
	// in percent.
	RequestErrorRate float64 `json:"request_error_rate"`
	// DetailsDropped counts the requests exported without their chunk
	// gaps and body: the report's budget for them was spent.
	DetailsDropped int `json:"details_dropped"`
	// ConnectionRetries counts the requests sent again on a fresh connection
	// because their first attempt, on a reused connection the server had
	// closed, provably never reached it (inferprobe_connection_retries_total).
	ConnectionRetries int `json:"connection_retries"`
	// KeepAliveWithheld counts the requests that went out on a connection
	// of their own although keep-alive was on, as the server closes
	// connections right after its responses (inferprobe_keep_alive_withheld_total).
	KeepAliveWithheld int `json:"keep_alive_withheld"`
	// Throughputs are the throughputs' confidence intervals; nil unless
	// asked for (SummaryAt) or without a span.
	Throughputs *ThroughputIntervals `json:"throughput_intervals,omitempty"`
	// CompressedResponses counts the replies that came compressed, by
	// Content-Encoding (inferprobe_compressed_responses_total).
	CompressedResponses map[string]int `json:"compressed_responses,omitempty"`
}

// Summary computes the summary of what was observed so far.
func (r *Report) Summary() Summary { return r.SummaryAt(0) }

// SummaryAt is Summary with confidence intervals at level (such as 0.95)
// for every mean, percentile and throughput; without them for level 0.
func (r *Report) SummaryAt(level float64) Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{
		TTFT: stats.Of(r.ttft, level), TTFOT: stats.Of(r.ttfot, level), TTST: stats.Of(r.ttst, level), ITL: stats.Of(r.itl, level), InterChunk: r.icl.stats(level),
		Latency: stats.Of(r.latency, level), ScheduleLag: stats.Of(r.lag, level), CapWait: stats.Of(r.capWait, level),
		InputTokens: stats.Of(r.inTokens, level), OutputTokens: stats.Of(r.outTokens, level),
		OutputTokenThroughputPerUser: stats.Of(r.perUser, level),
		OK:                           r.ok, Failed: r.failed, Cancelled: r.cancelled, Good: r.good, Lost: r.lost, ClientPaused: r.clientPaused,
		ReasoningTokensTotal: r.reasoningTokens, OutputLengthMismatches: r.mismatches,
		Errors:           make(map[record.Reason]int, len(r.errors)),
		TokensFromChunks: r.chunkCounted, TokensFromTokenizer: r.tokenizerCounted,
	}
	for k, v := range r.errors {
		s.Errors[k] = v
	}
	s.DecodeDuration, s.E2EOutputThroughput, s.PrefillThroughputPerUser = stats.Of(r.decode, level), stats.Of(r.e2eOut, level), stats.Of(r.prefillPerUser, level)
	s.OutputTokenCount, s.ReasoningTokens = stats.Of(r.outCount, level), stats.Of(r.reasoning, level)
	s.UsagePromptTokens, s.UsageCompletionTokens, s.UsageTotalTokens = stats.Of(r.usagePrompt, level), stats.Of(r.usageCompletion, level), stats.Of(r.usageTotal, level)
	s.UsagePromptDiffPct, s.OSLMismatchDiffPct, s.CreditToStart = stats.Of(r.promptDiff, level), stats.Of(r.oslDiff, level), stats.Of(r.creditToStart, level)
	s.UsageCompletionDiffPct, s.EffectiveLatency, s.HTTP = stats.Of(r.completionDiff, level), stats.Of(r.effectiveLatency, level), r.http.stats(level)
	s.UsageDiscrepancies, s.OSLMismatches, s.DetailsDropped = r.usageDiscrepancies, r.oslMismatches, r.dropped
	s.NumImages, s.ImageThroughput, s.ImageLatency = stats.Of(r.images, level), stats.Of(r.imageThroughput, level), stats.Of(r.imageLatency, level)
	s.AudioDuration, s.RTFx = stats.Of(r.audioDuration, level), stats.Of(r.rtfx, level)
	if ended := r.ok + r.failed; ended > 0 {
		s.RequestErrorRate = 100 * float64(r.failed) / float64(ended)
	}
	s.ConnectionRetries, s.KeepAliveWithheld = r.connRetries, r.keepAliveWithheld
	s.CompressedResponses = make(map[string]int, len(r.compressed))
	for enc, n := range r.compressed {
		s.CompressedResponses[enc.String()] = n
	}
	for _, v := range r.inTokens {
		s.InputTokensTotal += v
	}
	for _, v := range r.outTokens {
		s.OutputTokensTotal += v
	}
	if r.lastEnd.After(r.firstSent) {
		s.span(r.firstSent, r.lastEnd)
		if level > 0 {
			s.Throughputs = r.throughputIntervals(level)
		}
	}
	return s
}

// span sets s's span to start..end and its throughputs over it.
func (s *Summary) span(start, end time.Time) {
	s.Start, s.End = start, end
	s.Duration = end.Sub(start)
	secs := s.Duration.Seconds()
	s.DurationSeconds = secs
	s.RequestThroughput = float64(s.OK) / secs
	s.OutputTokenThroughput = s.OutputTokensTotal / secs
	s.TotalTokenThroughput = (s.InputTokensTotal + s.OutputTokensTotal) / secs
	s.InputTokenThroughput = s.InputTokensTotal / secs
	s.Goodput = float64(s.Good) / secs
}

// throughputIntervals are the throughputs' intervals by batch means
// (stats.RateInterval): each successful request counts, with its tokens,
// in the slice of the run its response ended in.
func (r *Report) throughputIntervals(level float64) *ThroughputIntervals {
	var ends, ones, good, in, out, total []float64
	for _, q := range r.requests {
		if q.Outcome != record.OutcomeOK {
			continue
		}
		ends = append(ends, q.Sent.Add(q.Duration).Sub(r.firstSent).Seconds())
		ones = append(ones, 1)
		good = append(good, boolWeight(q.Good))
		i, o := float64(q.ClientInputTokens()), float64(q.OutputTokens)
		in, out, total = append(in, i), append(out, o), append(total, i+o)
	}
	span := r.lastEnd.Sub(r.firstSent).Seconds()
	rate := func(w []float64) stats.Interval { return stats.RateInterval(ends, w, span, level) }
	return &ThroughputIntervals{Level: level, Request: rate(ones), OutputToken: rate(out), TotalToken: rate(total), InputToken: rate(in), Goodput: rate(good)}
}

func boolWeight(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ThroughputIntervals are the confidence intervals of a Summary's
// throughputs, at Level.
type ThroughputIntervals struct {
	Level       float64        `json:"level"`
	Request     stats.Interval `json:"request_throughput"`
	OutputToken stats.Interval `json:"output_token_throughput"`
	TotalToken  stats.Interval `json:"total_token_throughput"`
	InputToken  stats.Interval `json:"input_token_throughput"`
	Goodput     stats.Interval `json:"goodput"`
}

// Samples are a report's raw samples of the metrics a run is judged on
// against earlier runs, in seconds, as its summary's statistics count them.
type Samples struct {
	TTFT, ITL, Latency []float64
}

// Samples returns copies of the report's samples.
func (r *Report) Samples() Samples {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Samples{TTFT: slices.Clone(r.ttft), ITL: slices.Clone(r.itl), Latency: slices.Clone(r.latency)}
}
