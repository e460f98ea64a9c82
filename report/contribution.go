package report

import (
	"iter"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// Contribution is what one finished request adds to the measurements of its
// stream. Every sink — a stream's Prometheus series, a run's exact Report —
// takes it from Contribute, so that all count by the same rules: the
// timings of a failed request count (a stream that stalled after its first
// token still had a real TTFT), lengths, latency and goodput only those of a
// complete response, and of a cancelled request only its lag and cap wait.
type Contribution struct {
	Outcome record.Outcome
	Reason  record.Reason // why it failed; empty otherwise

	// HasLag is false for a request cancelled before its send, which has
	// no send time to be late by.
	HasLag bool
	Lag    time.Duration // the client's own delay (record.Record.Lag)
	// ClientPaused is how long the client did not run while the request
	// was due or in flight (record.Record.ClientPaused): when it is set,
	// the request's timings are the client's, and the sinks count the
	// request apart instead of measuring it.
	ClientPaused time.Duration
	CapWait      time.Duration // the time max_concurrency held it

	// How the request travelled, whatever its outcome: sent again after a
	// stale keep-alive connection, on a connection of its own although
	// keep-alive is on, and the reply's Content-Encoding.
	ConnRetried, KeepAliveWithheld bool
	Encoding                       record.Encoding
	// Phases is the request's connection setup and its way to the first
	// byte (record.Phases).
	Phases record.Phases

	// The timings, each with whether the request got that far; none for a
	// cancelled request.
	TTFT, TTFOT, TTST          time.Duration
	HasTTFT, HasTTFOT, HasTTST bool
	chunks                     []time.Duration // the offsets whose gaps Gaps yields

	// Duration runs from the send to the end of the response or the
	// failure, for every request that was sent: it places failures in
	// time. For a success it is the request latency.
	Duration time.Duration
	// Ack is the offset of the response headers; 0 without a response.
	Ack time.Duration

	// The rest is set for a success only. ITL is also zero when no time
	// passed between the first and last chunks: they came in one read, so
	// the client saw no token timing, and 1/ITL would be infinite.
	ITL                                        time.Duration
	InputTokens, OutputTokens, ReasoningTokens int
	TokenSource                                record.TokenSource
	// PromptTokens is the client's count of the prompt and UsagePromptTokens
	// the server's (0 when it gave none): AIPerf reports both.
	PromptTokens, UsagePromptTokens int
	// Images is the number of images the request carried and AudioSeconds
	// the duration of its first audio clip (record.Record).
	Images       int
	AudioSeconds float64
	// ClientOutputTokens is the tokenizer's count of an output whose length
	// came from usage; 0 when there was none.
	ClientOutputTokens int
	// PinnedOutputTokens is the output length the request pinned, 0 if none.
	PinnedOutputTokens int
	// Mismatch is set when the output length differs from the length the
	// request pinned. A count of content chunks is no measure of length (a
	// chunk may hold several tokens): only counts from usage or a tokenizer
	// are judged.
	Mismatch bool
	Good     bool // met every threshold of the SLO
}

// Contribute derives what rec contributes, judged against slo.
func Contribute(rec *record.Record, slo SLO) Contribution {
	c := Contribution{
		Outcome: rec.Outcome, Reason: rec.Reason,
		HasLag: !rec.Sent.IsZero(), CapWait: rec.CapWait, ClientPaused: rec.ClientPaused, Duration: rec.Duration, Ack: rec.Ack,
		ConnRetried: rec.ConnRetried, KeepAliveWithheld: rec.KeepAliveWithheld, Encoding: rec.Encoding,
		Phases: rec.Phases,
	}
	if c.HasLag {
		c.Lag = rec.Lag()
	}
	if rec.Outcome == record.OutcomeCancelled {
		return c
	}
	c.TTFT, c.HasTTFT = rec.TTFT()
	c.TTFOT, c.HasTTFOT = rec.TTFOT()
	c.TTST, c.HasTTST = rec.TTST()
	c.chunks = rec.Chunks
	if rec.Outcome != record.OutcomeOK {
		return c
	}
	c.ITL, _ = rec.ITL()
	c.InputTokens, c.OutputTokens, c.ReasoningTokens = rec.InputTokens, rec.OutputTokens, rec.ReasoningTokens
	c.TokenSource = rec.TokenSource
	c.PromptTokens, c.UsagePromptTokens, c.PinnedOutputTokens = rec.PromptTokens, rec.UsagePromptTokens, rec.PinnedOutputTokens
	c.ClientOutputTokens = rec.ClientOutputTokens
	c.Images, c.AudioSeconds = rec.Images, rec.AudioSeconds
	c.Mismatch = rec.PinnedOutputTokens > 0 && rec.TokenSource != record.TokensFromChunks && rec.OutputTokens != rec.PinnedOutputTokens
	c.Good = slo.met(&c)
	return c
}

// Gaps yields the time between each two consecutive content chunks: the
// inter-chunk latencies.
func (c *Contribution) Gaps() iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		for i := 1; i < len(c.chunks); i++ {
			if !yield(c.chunks[i] - c.chunks[i-1]) {
				return
			}
		}
	}
}
