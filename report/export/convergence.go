package export

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/inferprobe/inferprobe/stats"
)

// The convergence modes of AIPerf 0.13 (--convergence-mode).
const (
	ModeCIWidth      = "ci-width"
	ModeCV           = "cv"
	ModeDistribution = "distribution"
)

// ConvergenceModes are the modes with the threshold each uses when none
// is given, AIPerf's defaults.
var ConvergenceModes = map[string]float64{ModeCIWidth: 0.10, ModeCV: 0.05, ModeDistribution: 0.05}

// ConvergenceStats are the statistics a rule may watch (--convergence-stat).
var ConvergenceStats = []string{"avg", "p50", "p90", "p95", "p99", "min", "max"}

// convergenceMinRuns is how many successful runs a rule needs before it
// may stop the runs: AIPerf's default, which its command line cannot
// change.
const convergenceMinRuns = 2

// Convergence is AIPerf's adaptive stopping rule: after each run, stop
// once the Stat of Metric has settled by Mode — the t interval of the
// runs' values narrower than Threshold of their mean (ci-width), their
// coefficient of variation under Threshold (cv), or the last run's
// per-request values not told apart from the runs before it by a
// Kolmogorov–Smirnov test at p above Threshold (distribution).
type Convergence struct {
	Metric, Stat, Mode string
	Threshold          float64 // 0: the mode's default
	// Converged says the rule stopped the runs, after Runs successful
	// runs; Value is the figure it last compared with the threshold
	// (NaN before it could).
	Converged bool
	Runs      int
	Value     float64
}

func (c *Convergence) threshold() float64 {
	if c.Threshold > 0 {
		return c.Threshold
	}
	return ConvergenceModes[c.Mode]
}

// CheckConvergence says what is wrong with a rule on metric's stat by
// mode: a metric profile_export_aiperf.json does not have, a statistic
// other than avg of a run-wide value, or a distribution test of a value
// that is not per request.
func CheckConvergence(metric, stat, mode string) error {
	perRequest := perRequest(metric)
	switch {
	case !slices.Contains(declaredOrder, metric) && !slices.Contains(extraOrder, metric):
		return fmt.Errorf("--convergence-metric %q: not a metric of profile_export_aiperf.json; use a tag such as time_to_first_token, inter_token_latency, request_latency or request_throughput", metric)
	case mode == ModeDistribution && !perRequest:
		return fmt.Errorf("--convergence-mode distribution compares per-request values, and %s is a run-wide value; use ci-width or cv, or a per-request metric such as time_to_first_token", metric)
	case stat != "avg" && mode != ModeDistribution && !perRequest:
		return fmt.Errorf("--convergence-stat %s: %s is a run-wide value, which has only avg; use --convergence-stat avg", stat, metric)
	}
	return nil
}

// Check applies the rule to the runs so far and says whether they have
// converged, recording it in c.
func (c *Convergence) Check(trials []Trial, level float64) bool {
	var ok []Trial
	for _, t := range trials {
		if t.Failed == "" {
			ok = append(ok, t)
		}
	}
	c.Runs, c.Value, c.Converged = len(ok), math.NaN(), false
	if len(ok) < convergenceMinRuns {
		return false
	}
	if c.Mode == ModeDistribution {
		var before []float64
		for _, t := range ok[:len(ok)-1] {
			before = append(before, t.samples.Values[c.Metric]...)
		}
		last := ok[len(ok)-1].samples.Values[c.Metric]
		if len(before) < 2 || len(last) < 2 {
			return false
		}
		c.Value = stats.KolmogorovSmirnov(before, last)
		c.Converged = c.Value > c.threshold()
		return c.Converged
	}
	var values []float64
	for _, t := range ok {
		if v, found := t.value(c.Metric, c.Stat); found {
			values = append(values, v)
		}
	}
	if len(values) < convergenceMinRuns {
		return false
	}
	s := stats.Across(values, level)
	if s.Mean == 0 {
		return false
	}
	switch c.Mode {
	case ModeCIWidth:
		c.Value = (s.Interval.High - s.Interval.Low) / math.Abs(s.Mean)
	case ModeCV:
		c.Value = s.Std / math.Abs(s.Mean)
	}
	c.Converged = c.Value < c.threshold()
	return c.Converged
}

// summary says in one line what the rule decided.
func (c *Convergence) summary() string {
	what := map[string]string{
		ModeCIWidth:      "the CI width as a fraction of the mean",
		ModeCV:           "the coefficient of variation",
		ModeDistribution: "the Kolmogorov–Smirnov p-value of the last run against the others",
	}[c.Mode]
	watched := c.Metric + " " + c.Stat
	if c.Mode == ModeDistribution {
		watched = c.Metric
	}
	figure := "never computed (too few successful runs with it)"
	if !math.IsNaN(c.Value) {
		figure = fmt.Sprintf("%.4g", c.Value)
	}
	cmp := "under"
	if c.Mode == ModeDistribution {
		cmp = "over"
	}
	state := "did not converge"
	if c.Converged {
		state = "converged"
	}
	return strings.Join([]string{fmt.Sprintf("%s after %d successful runs (%s):", state, c.Runs, c.Mode),
		fmt.Sprintf("%s of %s is %s, want %s %g", what, watched, figure, cmp, c.threshold())}, " ")
}
