package daemon

import (
	"math/rand/v2"
	"sync"

	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/stats"
)

// Earlier runs are kept in memory to judge each burst run against: the
// last keptRuns succeeded runs of a burst and target, each metric's samples
// thinned to at most keptSamples (a seeded uniform subsample), about 600 KB
// per burst and target. They are lost on restart: the first run after one
// has no verdict.
const (
	keptRuns    = 5
	keptSamples = 5000
)

// Regression is how a burst run compares with the earlier runs of its
// burst and target kept in memory, at Level: per metric, whether its
// values are significantly higher (worse) by the tests of bench --compare
// (docs/metrics.md#comparing-two-runs), here against the earlier runs'
// samples pooled.
type Regression struct {
	EarlierRuns int                `json:"earlier_runs"`
	Level       float64            `json:"confidence_level"`
	Metrics     []MetricRegression `json:"metrics"`
}

// MetricRegression is one metric's verdict. P99Change is the relative
// change of p99 from the earlier runs (0.1: 10 % higher) with its
// interval; the p-values are Holm-adjusted over every test of the run.
type MetricRegression struct {
	Metric            string         `json:"metric"` // AIPerf's tag
	Regressed         bool           `json:"regressed"`
	P99Change         float64        `json:"p99_change"`
	P99ChangeInterval stats.Interval `json:"p99_change_interval"`
	P99P              float64        `json:"p99_p"`
	DistributionP     float64        `json:"distribution_p"` // Mann–Whitney U
}

// earlierRuns keeps the samples of each burst and target's last runs.
type earlierRuns struct {
	mu   sync.Mutex
	runs map[[2]string][]report.Samples // oldest first
	rng  *rand.Rand
}

func newEarlierRuns() *earlierRuns {
	return &earlierRuns{runs: map[[2]string][]report.Samples{}, rng: rand.New(rand.NewPCG(3, 4))}
}

// judge compares s with the earlier runs of burst and target, then keeps
// s as the newest of them. It returns nil without an earlier run.
func (e *earlierRuns) judge(burst, target string, s report.Samples) *Regression {
	key := [2]string{burst, target}
	e.mu.Lock()
	earlier := e.runs[key]
	kept := report.Samples{TTFT: e.thin(s.TTFT), ITL: e.thin(s.ITL), Latency: e.thin(s.Latency)}
	e.runs[key] = append(earlier[max(len(earlier)+1-keptRuns, 0):], kept)
	e.mu.Unlock()
	if len(earlier) == 0 {
		return nil
	}
	var pooled report.Samples
	for _, r := range earlier {
		pooled.TTFT, pooled.ITL, pooled.Latency = append(pooled.TTFT, r.TTFT...), append(pooled.ITL, r.ITL...), append(pooled.Latency, r.Latency...)
	}
	return regressionOf(pooled, s, len(earlier), stats.DefaultLevel)
}

// forget drops the earlier runs of burst and target.
func (e *earlierRuns) forget(burst, target string) {
	e.mu.Lock()
	delete(e.runs, [2]string{burst, target})
	e.mu.Unlock()
}

// thin is a uniform subsample of at most keptSamples of s.
func (e *earlierRuns) thin(s []float64) []float64 {
	if len(s) <= keptSamples {
		return s
	}
	out := make([]float64, keptSamples)
	for i, j := range e.rng.Perm(len(s))[:keptSamples] {
		out[i] = s[j]
	}
	return out
}

func regressionOf(earlier, current report.Samples, runs int, level float64) *Regression {
	p99 := []func([]float64) float64{func(s []float64) float64 { return stats.Percentile(s, .99) }}
	out := &Regression{EarlierRuns: runs, Level: level}
	var ps []float64
	var medianUp []bool // the direction of a distribution's shift
	for _, m := range []struct {
		tag     string
		was, is []float64
	}{{"time_to_first_token", earlier.TTFT, current.TTFT}, {"inter_token_latency", earlier.ITL, current.ITL}, {"request_latency", earlier.Latency, current.Latency}} {
		if len(m.was) < 2 || len(m.is) < 2 {
			continue
		}
		ch := stats.BootstrapChanges(m.was, m.is, p99, level, 1)[0]
		v := MetricRegression{Metric: m.tag, P99P: ch.P, DistributionP: stats.MannWhitney(m.was, m.is)}
		if ch.Baseline > 0 {
			v.P99Change = ch.Current/ch.Baseline - 1
			v.P99ChangeInterval = ch.Interval.Scaled(1 / ch.Baseline)
		}
		out.Metrics = append(out.Metrics, v)
		ps = append(ps, v.P99P, v.DistributionP)
		medianUp = append(medianUp, stats.Of(m.is, 0).P50 > stats.Of(m.was, 0).P50)
	}
	adjusted := stats.Holm(ps)
	for i := range out.Metrics {
		v := &out.Metrics[i]
		v.P99P, v.DistributionP = adjusted[2*i], adjusted[2*i+1]
		// Worse: p99 significantly higher, or the values as a whole
		// significantly higher (their median the witness of the direction).
		v.Regressed = v.P99P < 1-level && v.P99Change > 0 || v.DistributionP < 1-level && medianUp[i]
	}
	return out
}

// gauges are r's verdicts for the burst gauges.
func (r *Regression) gauges() []collector.BurstRegression {
	if r == nil {
		return nil
	}
	out := make([]collector.BurstRegression, len(r.Metrics))
	for i, m := range r.Metrics {
		out[i] = collector.BurstRegression{Metric: m.Metric, Regressed: m.Regressed, P99Change: m.P99Change}
	}
	return out
}
