package report

import (
	"time"

	"github.com/inferprobe/inferprobe/prober"
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

// Met reports whether a successful request met every set threshold. A
// request without a first (output) chunk misses a TTFT (TTFOT) threshold;
// one whose ITL is undefined (a single chunk) meets the ITL and per-user
// thresholds, which only a token stream can miss.
func (s SLO) Met(rec *prober.Record) bool {
	if rec.Outcome != prober.OutcomeOK {
		return false
	}
	if s.TTFT > 0 {
		if d, ok := rec.TTFT(); !ok || d > s.TTFT {
			return false
		}
	}
	if s.TTFOT > 0 {
		if d, ok := rec.TTFOT(); !ok || d > s.TTFOT {
			return false
		}
	}
	if s.ITL > 0 || s.MinTokensPerUser > 0 {
		if d, ok := rec.ITL(); ok && (s.ITL > 0 && d > s.ITL || s.MinTokensPerUser > 0 && 1/d.Seconds() < s.MinTokensPerUser) {
			return false
		}
	}
	return s.RequestLatency <= 0 || rec.Duration <= s.RequestLatency
}
