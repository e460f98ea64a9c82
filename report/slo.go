package report

import (
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// SLO thresholds for goodput; zero means not set. The durations are maxima,
// MinTokensPerUser (output tokens per second, 1/ITL) a minimum.
type SLO struct {
	TTFT, TTFOT, ITL, RequestLatency time.Duration
	MinTokensPerUser                 float64
}

// NewSLO converts a scenario's slo block.
func NewSLO(s scenarios.SLO) SLO {
	return SLO{
		TTFT:             time.Duration(s.TimeToFirstToken),
		TTFOT:            time.Duration(s.TimeToFirstOutputToken),
		ITL:              time.Duration(s.InterTokenLatency),
		RequestLatency:   time.Duration(s.RequestLatency),
		MinTokensPerUser: s.OutputTokenThroughputPerUser,
	}
}

// met reports whether a success met every set threshold. A request
// without a first (output) chunk misses a TTFT (TTFOT) threshold; one
// without an ITL (a single chunk) meets the ITL and per-user thresholds,
// which only a token stream can miss.
func (s SLO) met(c *Contribution) bool {
	switch {
	case c.Outcome != record.OutcomeOK,
		s.TTFT > 0 && (!c.HasTTFT || c.TTFT > s.TTFT),
		s.TTFOT > 0 && (!c.HasTTFOT || c.TTFOT > s.TTFOT),
		c.ITL > 0 && s.ITL > 0 && c.ITL > s.ITL,
		c.ITL > 0 && s.MinTokensPerUser > 0 && 1/c.ITL.Seconds() < s.MinTokensPerUser,
		s.RequestLatency > 0 && c.Duration > s.RequestLatency:
		return false
	}
	return true
}
