package backtest

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// Probe is one probe request, as inferprobe recorded it when it ended.
type Probe struct {
	Time               time.Time // when the request ended
	Target, Model      string
	TTFT, ITL, Latency time.Duration // TTFT and ITL zero when absent
	OK, Good           bool
}

// Labels of the series the probes are recorded in, besides target and model.
const (
	scenarioLabel = "backtest"
	phaseLabel    = "probe"
)

// missEverything is an SLO that every success with a latency above 1 ns
// misses: a probe that was not good is recorded through it, so that
// report.Contribute itself counts it as not good.
var missEverything = report.SLO{TTFT: time.Nanosecond, RequestLatency: time.Nanosecond}

// recorder feeds probes into inferprobe's own request metrics.
type recorder struct {
	requests *collector.Requests
	streams  map[[2]string]*stream
}

// stream is one target and model's series twice over: the same metrics,
// judged against no SLO (every success is good) or against missEverything.
type stream struct{ good, notGood *collector.Series }

func newRecorder(reg prometheus.Registerer) *recorder {
	return &recorder{requests: collector.NewRequests(reg), streams: map[[2]string]*stream{}}
}

// check says why p cannot be recorded as it is, or nil.
func (p *Probe) check() error {
	switch {
	case p.Latency <= 0:
		return fmt.Errorf("latency %v: a request takes time", p.Latency)
	case p.TTFT < 0 || p.ITL < 0:
		return fmt.Errorf("negative TTFT %v or ITL %v", p.TTFT, p.ITL)
	case p.ITL > 0 && p.TTFT == 0:
		return fmt.Errorf("an ITL (%v) without a TTFT", p.ITL)
	case !p.OK && p.ITL > 0:
		return fmt.Errorf("an ITL (%v) on a failed request, which inferprobe does not count", p.ITL)
	case !p.OK && p.Good:
		return fmt.Errorf("a failed request cannot be good")
	case p.OK && !p.Good && p.Latency <= missEverything.RequestLatency:
		return fmt.Errorf("a success of latency %v that missed its SLO: no SLO threshold is that small", p.Latency)
	}
	return nil
}

// observe records p, which check accepted, as a request that started and
// ended at p.Time.
func (r *recorder) observe(p *Probe) {
	key := [2]string{p.Target, p.Model}
	s := r.streams[key]
	if s == nil {
		l := collector.Labels{Target: p.Target, Model: p.Model, Scenario: scenarioLabel, Phase: phaseLabel}
		s = &stream{good: r.requests.Series(l, report.SLO{}), notGood: r.requests.Series(l, missEverything)}
		r.streams[key] = s
	}
	series := s.good
	if !p.Good {
		series = s.notGood
	}
	rec := recordOf(p)
	series.Started()
	series.Observe(&rec)
}

// recordOf is the record.Record of which report.Contribute derives exactly
// p's TTFT, ITL, latency and outcome: a first chunk at the TTFT and, for an
// ITL, a second one an ITL later carrying the second of two tokens.
func recordOf(p *Probe) record.Record {
	sent := p.Time.Add(-p.Latency)
	rec := record.Record{Scheduled: sent, Sent: sent, Duration: p.Latency, FirstOutput: -1, Outcome: record.OutcomeOK}
	if !p.OK {
		// The records name no reason; one of the reasons inferprobe exports from 0, so that
		// the first failure counts as in serve.
		rec.Outcome, rec.Reason = record.OutcomeError, record.ReasonHTTP5xx
	}
	if p.TTFT > 0 {
		rec.Chunks = []time.Duration{p.TTFT}
		rec.FirstOutput = 0
		rec.OutputTokens = 1
		if p.ITL > 0 {
			rec.Chunks = append(rec.Chunks, p.TTFT+p.ITL)
			rec.OutputTokens, rec.FirstChunkTokens = 2, 1
		}
	}
	return rec
}
