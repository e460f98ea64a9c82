package report

import (
	"math"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/stats"
)

// AIPerf's per-request metrics that follow from what a request contributed,
// by AIPerf 0.13's definitions; the report's summary and the per-request
// export both take them from here.

// UsageDiffThresholdPct is AIPerf's AIPERF_METRICS_USAGE_PCT_DIFF_THRESHOLD:
// a request whose usage differs from the client's count by more counts as a
// usage discrepancy.
const UsageDiffThresholdPct = 10

// AIPerf's OSL mismatch threshold: the smaller of 5 % of the requested
// length and 50 tokens.
const (
	oslMismatchPct       = 5
	oslMismatchMaxTokens = 50
)

// ClientInputTokens is the client's count of the prompt: AIPerf's
// input_sequence_length. Records that never carried it (built outside the
// prober's sender) fall back to the input length the measurements use.
func (c *Contribution) ClientInputTokens() int {
	if c.PromptTokens > 0 {
		return c.PromptTokens
	}
	return c.InputTokens
}

// UsageCompletionTokens is the server's count of the output, when its usage
// gave one.
func (c *Contribution) UsageCompletionTokens() (int, bool) {
	return c.OutputTokens, c.Outcome == record.OutcomeOK && c.TokenSource == record.TokensFromUsage && c.OutputTokens > 0
}

// UsageTotalTokens is usage's prompt plus completion count, when it gave both.
func (c *Contribution) UsageTotalTokens() (int, bool) {
	out, ok := c.UsageCompletionTokens()
	return c.UsagePromptTokens + out, ok && c.UsagePromptTokens > 0
}

// UsagePromptDiffPct is how far the server's prompt count is from the
// client's, in percent of the client's (the chat template shows up here).
func (c *Contribution) UsagePromptDiffPct() (float64, bool) {
	client := c.ClientInputTokens()
	if c.Outcome != record.OutcomeOK || c.UsagePromptTokens == 0 || client == 0 {
		return 0, false
	}
	return math.Abs(float64(c.UsagePromptTokens-client)) / float64(client) * 100, true
}

// UsageCompletionDiffPct is how far the server's output count is from the
// tokenizer's, in percent of the tokenizer's; only with a tokenizer, which
// makes the client's count.
func (c *Contribution) UsageCompletionDiffPct() (float64, bool) {
	usage, ok := c.UsageCompletionTokens()
	if !ok || c.ClientOutputTokens == 0 {
		return 0, false
	}
	return math.Abs(float64(usage-c.ClientOutputTokens)) / float64(c.ClientOutputTokens) * 100, true
}

// UsageDiscrepancy says the usage differs from the client's count, of the
// prompt or of the output, by more than AIPerf's threshold.
func (c *Contribution) UsageDiscrepancy() bool {
	p, okP := c.UsagePromptDiffPct()
	o, okO := c.UsageCompletionDiffPct()
	return okP && p > UsageDiffThresholdPct || okO && o > UsageDiffThresholdPct
}

// OSLMismatchDiffPct is the output length against the pinned length, in
// percent of the pinned length (negative when shorter).
func (c *Contribution) OSLMismatchDiffPct() (float64, bool) {
	if c.Outcome != record.OutcomeOK || c.PinnedOutputTokens == 0 || c.TokenSource == record.TokensFromChunks {
		return 0, false
	}
	return float64(c.OutputTokens-c.PinnedOutputTokens) / float64(c.PinnedOutputTokens) * 100, true
}

// OSLMismatch applies AIPerf's threshold to OSLMismatchDiffPct.
func (c *Contribution) OSLMismatch() bool {
	if _, ok := c.OSLMismatchDiffPct(); !ok {
		return false
	}
	diff := math.Abs(float64(c.OutputTokens - c.PinnedOutputTokens))
	return diff > min(float64(c.PinnedOutputTokens)*oslMismatchPct/100, oslMismatchMaxTokens)
}

// DecodeDuration is the request latency less the TTFT.
func (c *Contribution) DecodeDuration() (time.Duration, bool) {
	return c.Duration - c.TTFT, c.Outcome == record.OutcomeOK && c.HasTTFT
}

// E2EOutputThroughput is the output length over the request latency: the
// tokens per second one user saw, prefill included.
func (c *Contribution) E2EOutputThroughput() (float64, bool) {
	if c.Outcome != record.OutcomeOK || c.Duration <= 0 || c.OutputTokens == 0 {
		return 0, false
	}
	return float64(c.OutputTokens) / c.Duration.Seconds(), true
}

// PrefillThroughputPerUser is the client's prompt count over the TTFT.
func (c *Contribution) PrefillThroughputPerUser() (float64, bool) {
	if c.Outcome != record.OutcomeOK || !c.HasTTFT || c.TTFT <= 0 {
		return 0, false
	}
	return float64(c.ClientInputTokens()) / c.TTFT.Seconds(), true
}

// OutputTokenCount is the output less its reasoning: AIPerf's
// output_token_count (its output_sequence_length counts both).
func (c *Contribution) OutputTokenCount() int { return c.OutputTokens - c.ReasoningTokens }

// HTTPTrace is a request's AIPerf HTTP trace metrics (k6's names), from
// its timing breakdown (record.Phases): connecting includes the TLS
// handshake, blocked is the rest of the wait for a connection.
type HTTPTrace struct {
	Blocked, DNSLookup, Connecting, ConnectionOverhead time.Duration
	Reused                                             bool
	// Sending is set once the request was written whole (HasSending).
	Sending    time.Duration
	HasSending bool
	// Waiting (the first byte), Receiving (the rest), Duration (sent → end)
	// and Total (Duration with the connection's setup) once the response
	// began (HasResponse).
	Waiting, Receiving, Duration, Total time.Duration
	HasResponse                         bool
}

// HTTPTrace is the request's HTTP trace metrics; false when it never had a
// connection.
func (c *Contribution) HTTPTrace() (HTTPTrace, bool) {
	ph := &c.Phases
	if ph.Conn == record.ConnNone {
		return HTTPTrace{}, false
	}
	h := HTTPTrace{
		Blocked: max(0, ph.Setup-ph.Network()), DNSLookup: ph.DNS, Connecting: ph.Connect + ph.TLS,
		ConnectionOverhead: ph.Setup, Reused: ph.Conn == record.ConnReused,
	}
	if ph.Written > 0 {
		h.Sending, h.HasSending = ph.Written, true
	}
	if ph.FirstByte > 0 {
		h.Waiting, h.Receiving, h.Duration, h.Total = ph.FirstByte-ph.Written, c.Duration-ph.FirstByte, c.Duration, ph.Setup+c.Duration
		h.HasResponse = true
	}
	return h, true
}

// HTTPStats summarises the successful requests' HTTP trace metrics
// (HTTPTrace), in seconds; Reused is a ratio (0 or 1 a request).
type HTTPStats struct {
	Blocked            stats.Stats `json:"blocked_seconds"`
	DNSLookup          stats.Stats `json:"dns_lookup_seconds"`
	Connecting         stats.Stats `json:"connecting_seconds"`
	Reused             stats.Stats `json:"connection_reused"`
	ConnectionOverhead stats.Stats `json:"connection_overhead_seconds"`
	Sending            stats.Stats `json:"sending_seconds"`
	Waiting            stats.Stats `json:"waiting_seconds"`
	Receiving          stats.Stats `json:"receiving_seconds"`
	Duration           stats.Stats `json:"duration_seconds"`
	Total              stats.Stats `json:"total_seconds"`
}

// httpSamples are the samples behind HTTPStats.
type httpSamples struct {
	blocked, dnsLookup, connecting, reused, overhead, sending, waiting, receiving, duration, total []float64
}

func (h *httpSamples) add(t HTTPTrace) {
	reused := 0.0
	if t.Reused {
		reused = 1
	}
	h.blocked = append(h.blocked, t.Blocked.Seconds())
	h.dnsLookup = append(h.dnsLookup, t.DNSLookup.Seconds())
	h.connecting = append(h.connecting, t.Connecting.Seconds())
	h.reused = append(h.reused, reused)
	h.overhead = append(h.overhead, t.ConnectionOverhead.Seconds())
	if t.HasSending {
		h.sending = append(h.sending, t.Sending.Seconds())
	}
	if t.HasResponse {
		h.waiting = append(h.waiting, t.Waiting.Seconds())
		h.receiving = append(h.receiving, t.Receiving.Seconds())
		h.duration = append(h.duration, t.Duration.Seconds())
		h.total = append(h.total, t.Total.Seconds())
	}
}

func (h *httpSamples) stats(level float64) HTTPStats {
	return HTTPStats{
		Blocked: stats.Of(h.blocked, level), DNSLookup: stats.Of(h.dnsLookup, level), Connecting: stats.Of(h.connecting, level),
		Reused: stats.Of(h.reused, level), ConnectionOverhead: stats.Of(h.overhead, level), Sending: stats.Of(h.sending, level),
		Waiting: stats.Of(h.waiting, level), Receiving: stats.Of(h.receiving, level), Duration: stats.Of(h.duration, level),
		Total: stats.Of(h.total, level),
	}
}

// ImageThroughput is AIPerf's image_throughput: images per second of the
// request's latency.
func (c *Contribution) ImageThroughput() (float64, bool) {
	if c.Outcome != record.OutcomeOK || c.Images == 0 || c.Duration <= 0 {
		return 0, false
	}
	return float64(c.Images) / c.Duration.Seconds(), true
}

// ImageLatency is AIPerf's image_latency: the request's latency per image,
// in seconds.
func (c *Contribution) ImageLatency() (float64, bool) {
	if c.Outcome != record.OutcomeOK || c.Images == 0 {
		return 0, false
	}
	return c.Duration.Seconds() / float64(c.Images), true
}

// RTFx is AIPerf's inverse real-time factor: seconds of (first) audio clip
// per second of the request's latency.
func (c *Contribution) RTFx() (float64, bool) {
	if c.Outcome != record.OutcomeOK || c.AudioSeconds <= 0 || c.Duration <= 0 {
		return 0, false
	}
	return c.AudioSeconds / c.Duration.Seconds(), true
}
