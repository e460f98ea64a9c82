package report

import (
	"math"
	"time"

	"github.com/inferprobe/inferprobe/record"
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
