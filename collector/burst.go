package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/stats"
)

// Burst run results, the result label of inferprobe_burst_runs_total.
const (
	BurstSucceeded = "succeeded"
	BurstFailed    = "failed"
	BurstCancelled = "cancelled"
)

var burstLabels = []string{"burst", "target"}

// burstQuantiles are the quantile label values of the last-run gauges.
var burstQuantiles = []struct {
	label string
	of    func(stats.Stats) float64
}{
	{"0.5", func(s stats.Stats) float64 { return s.P50 }},
	{"0.9", func(s stats.Stats) float64 { return s.P90 }},
	{"0.95", func(s stats.Stats) float64 { return s.P95 }},
	{"0.99", func(s stats.Stats) float64 { return s.P99 }},
}

// Bursts holds the burst metrics: which bursts run, how their runs ended,
// and the exact results of each burst's last completed run.
type Bursts struct {
	running                                           *prometheus.GaugeVec
	runs, skipped, queued                             *prometheus.CounterVec
	ttft, itl, latency                                *prometheus.GaugeVec // by quantile
	reqThroughput, outThroughput, goodput, errorRatio *prometheus.GaugeVec
	duration, end                                     *prometheus.GaugeVec
	regression, regressionChange                      *prometheus.GaugeVec // by metric
	capacity, capacityReqRate, capacityOutRate        *prometheus.GaugeVec // by recipe and sla
	capacityEnd                                       *prometheus.GaugeVec
	all                                               []interface{ DeletePartialMatch(prometheus.Labels) int }
	StorageWriteErrors                                prometheus.Counter
}

// NewBursts registers the burst metrics with reg.
func NewBursts(reg prometheus.Registerer) *Bursts {
	gauge := func(name, help string, extra ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help}, append(burstLabels, extra...))
	}
	counter := func(name, help string, extra ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, append(burstLabels, extra...))
	}
	b := &Bursts{
		running: gauge("burst_running", "1 while a run of the burst is sending or finishing its requests."),
		runs:    counter("burst_runs_total", "Burst runs ended, by result: succeeded (ran to its end), failed (could not run), cancelled.", "result"),
		skipped: counter("burst_skipped_total", "Scheduled starts skipped because the target was running a burst (overlap: skip, or a run already queued)."),
		queued:  counter("burst_queued_total", "Scheduled starts queued until the target was free (overlap: queue)."),
		ttft:    gauge("burst_last_time_to_first_token_seconds", "Exact quantiles of time to first token in the last completed run.", "quantile"),
		itl:     gauge("burst_last_inter_token_latency_seconds", "Exact quantiles of inter-token latency in the last completed run.", "quantile"),
		latency: gauge("burst_last_request_duration_seconds", "Exact quantiles of request duration in the last completed run.", "quantile"),
		reqThroughput: gauge("burst_last_request_throughput",
			"Successful requests per second of the last completed run, from the first send to the end of the last response."),
		outThroughput: gauge("burst_last_output_token_throughput", "Output tokens per second of the last completed run."),
		goodput:       gauge("burst_last_goodput_ratio", "Share of the last completed run's finished requests that succeeded and met every SLO of the burst."),
		errorRatio:    gauge("burst_last_error_ratio", "Share of the last completed run's finished requests that failed."),
		duration:      gauge("burst_last_duration_seconds", "Length of the last completed run, from its first send to the end of its last response."),
		end:           gauge("burst_last_end_timestamp_seconds", "Unix time the last completed run ended."),
		regression: gauge("burst_last_regression",
			"1 when the last completed run's metric (AIPerf's tag: time_to_first_token, inter_token_latency, request_latency) is significantly worse than in the earlier runs of the burst kept in memory (p99 by bootstrap or the values as a whole by Mann-Whitney U, Holm-corrected, at 95 %), else 0; absent without an earlier run since the start.", "metric"),
		regressionChange: gauge("burst_last_regression_p99_change_ratio",
			"Relative change of the last completed run's p99 of metric from the earlier runs kept in memory (0.1: 10 % higher), beside burst_last_regression.", "metric"),
		capacity: gauge("capacity_concurrency",
			"The last capacity search's answer: the highest closed-loop concurrency at which every SLA filter (sla: AIPerf's metric_tag:stat:op:threshold, joined by ' and ') held; 0 when none did.", "recipe", "sla"),
		capacityReqRate: gauge("capacity_request_throughput", "Successful requests per second of the last capacity search's step at its answer.", "recipe", "sla"),
		capacityOutRate: gauge("capacity_output_token_throughput", "Output tokens per second of the last capacity search's step at its answer.", "recipe", "sla"),
		capacityEnd:     gauge("capacity_timestamp_seconds", "Unix time the last capacity search ended.", "recipe", "sla"),
		StorageWriteErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "storage_write_errors_total",
			Help: "Burst runs that could not be written to --storage.path; they are kept in memory only.",
		}),
	}
	b.all = []interface{ DeletePartialMatch(prometheus.Labels) int }{
		b.running, b.runs, b.skipped, b.queued, b.ttft, b.itl, b.latency,
		b.reqThroughput, b.outThroughput, b.goodput, b.errorRatio, b.duration, b.end, b.regression, b.regressionChange,
		b.capacity, b.capacityReqRate, b.capacityOutRate, b.capacityEnd,
	}
	reg.MustRegister(b.running, b.runs, b.skipped, b.queued, b.ttft, b.itl, b.latency,
		b.reqThroughput, b.outThroughput, b.goodput, b.errorRatio, b.duration, b.end, b.regression, b.regressionChange,
		b.capacity, b.capacityReqRate, b.capacityOutRate, b.capacityEnd, b.StorageWriteErrors)
	return b
}

// Declare exports a configured burst's running gauge and counters at 0, so
// that rate() and alerts see them before the first run.
func (b *Bursts) Declare(burst, target string) {
	b.running.WithLabelValues(burst, target)
	for _, r := range []string{BurstSucceeded, BurstFailed, BurstCancelled} {
		b.runs.WithLabelValues(burst, target, r)
	}
	b.skipped.WithLabelValues(burst, target)
	b.queued.WithLabelValues(burst, target)
}

// Forget drops every series of a burst on a target, once the burst is
// removed from the configuration or moved to another target.
func (b *Bursts) Forget(burst, target string) {
	for _, v := range b.all {
		v.DeletePartialMatch(prometheus.Labels{"burst": burst, "target": target})
	}
}

// Running sets whether a run of the burst is in progress.
func (b *Bursts) Running(burst, target string, running bool) {
	v := 0.0
	if running {
		v = 1
	}
	b.running.WithLabelValues(burst, target).Set(v)
}

// Ended counts a run that ended with result.
func (b *Bursts) Ended(burst, target, result string) {
	b.runs.WithLabelValues(burst, target, result).Inc()
}

// Skipped counts a scheduled start that was skipped.
func (b *Bursts) Skipped(burst, target string) { b.skipped.WithLabelValues(burst, target).Inc() }

// Queued counts a scheduled start that was queued.
func (b *Bursts) Queued(burst, target string) { b.queued.WithLabelValues(burst, target).Inc() }

// BurstResult is what the last-run gauges show of one run.
type BurstResult struct {
	Summary report.Summary
	// End is the Unix time the run ended, in seconds.
	End float64
	// Regressions are the run's verdicts against the earlier runs; none
	// without an earlier run.
	Regressions []BurstRegression
}

// BurstRegression is one metric's verdict against the earlier runs.
type BurstRegression struct {
	Metric    string
	Regressed bool
	P99Change float64
}

// SetLast shows r as the burst's last completed run. A quantile family
// without samples in r (no request streamed) is removed rather than left at
// an older run's value.
func (b *Bursts) SetLast(burst, target string, r BurstResult) {
	s := r.Summary
	// The end timestamp goes first: the burst alert tells runs apart by it,
	// and a scrape between the two writes must not show this run's
	// quantiles under the previous run's end.
	b.end.WithLabelValues(burst, target).Set(r.End)
	for _, g := range []struct {
		vec   *prometheus.GaugeVec
		stats stats.Stats
	}{{b.ttft, s.TTFT}, {b.itl, s.ITL}, {b.latency, s.Latency}} {
		for _, q := range burstQuantiles {
			if g.stats.Count == 0 {
				g.vec.DeleteLabelValues(burst, target, q.label)
				continue
			}
			g.vec.WithLabelValues(burst, target, q.label).Set(q.of(g.stats))
		}
	}
	finished := s.OK + s.Failed
	goodput, errRatio := 0.0, 0.0
	if finished > 0 {
		goodput, errRatio = float64(s.Good)/float64(finished), float64(s.Failed)/float64(finished)
	}
	b.reqThroughput.WithLabelValues(burst, target).Set(s.RequestThroughput)
	b.outThroughput.WithLabelValues(burst, target).Set(s.OutputTokenThroughput)
	b.goodput.WithLabelValues(burst, target).Set(goodput)
	b.errorRatio.WithLabelValues(burst, target).Set(errRatio)
	b.duration.WithLabelValues(burst, target).Set(s.Duration.Seconds())
	// An earlier run's verdict must not stand for this one's.
	b.regression.DeletePartialMatch(prometheus.Labels{"burst": burst, "target": target})
	b.regressionChange.DeletePartialMatch(prometheus.Labels{"burst": burst, "target": target})
	for _, v := range r.Regressions {
		regressed := 0.0
		if v.Regressed {
			regressed = 1
		}
		b.regression.WithLabelValues(burst, target, v.Metric).Set(regressed)
		b.regressionChange.WithLabelValues(burst, target, v.Metric).Set(v.P99Change)
	}
}

// CapacityResult is what the capacity gauges show of a burst's search.
type CapacityResult struct {
	Recipe, SLA string
	// Concurrency is the answer; 0 when no step met the SLA.
	Concurrency int
	// RequestThroughput and OutputTokenThroughput are the step's at the
	// answer.
	RequestThroughput, OutputTokenThroughput float64
	// End is the Unix time the search ended, in seconds.
	End float64
}

// SetCapacity shows c as the burst's last capacity search, in place of an
// earlier one's (whose recipe or SLA may differ).
func (b *Bursts) SetCapacity(burst, target string, c CapacityResult) {
	for _, v := range []*prometheus.GaugeVec{b.capacityEnd, b.capacity, b.capacityReqRate, b.capacityOutRate} {
		v.DeletePartialMatch(prometheus.Labels{"burst": burst, "target": target})
	}
	b.capacityEnd.WithLabelValues(burst, target, c.Recipe, c.SLA).Set(c.End)
	b.capacity.WithLabelValues(burst, target, c.Recipe, c.SLA).Set(float64(c.Concurrency))
	b.capacityReqRate.WithLabelValues(burst, target, c.Recipe, c.SLA).Set(c.RequestThroughput)
	b.capacityOutRate.WithLabelValues(burst, target, c.Recipe, c.SLA).Set(c.OutputTokenThroughput)
}
