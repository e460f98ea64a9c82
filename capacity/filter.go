package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Metrics are one step's AIPerf metrics: metric tag → statistic → value.
type Metrics = map[string]map[string]float64

// Filter is one SLA filter, AIPerf's SLAFilter: the step is feasible when
// Stat of Metric is Op Threshold, in the metric's own unit.
type Filter struct {
	Metric    string  `json:"metric_tag"`
	Stat      string  `json:"stat"`
	Op        string  `json:"op"`
	Threshold float64 `json:"threshold"`
}

// Stats and Ops a filter may name, as AIPerf's --search-sla takes them.
var (
	Stats = []string{"avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}
	Ops   = []string{"lt", "le", "gt", "ge"}
)

// ParseFilter reads AIPerf's --search-sla form, metric_tag:stat:op:threshold.
func ParseFilter(s string) (Filter, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return Filter{}, fmt.Errorf("%q: want metric_tag:stat:op:threshold, e.g. time_to_first_token:p95:lt:200", s)
	}
	f := Filter{Metric: strings.TrimSpace(parts[0]), Stat: strings.TrimSpace(parts[1]), Op: strings.TrimSpace(parts[2])}
	if f.Metric == "" {
		return Filter{}, fmt.Errorf("%q: the metric tag is empty; name one, e.g. time_to_first_token", s)
	}
	if !slices.Contains(Stats, f.Stat) {
		return Filter{}, fmt.Errorf("%q: stat %q is not one of %s", s, f.Stat, strings.Join(Stats, ", "))
	}
	if !slices.Contains(Ops, f.Op) {
		return Filter{}, fmt.Errorf("%q: op %q is not one of %s", s, f.Op, strings.Join(Ops, ", "))
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(parts[3]), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Filter{}, fmt.Errorf("%q: threshold %q is not a finite number", s, parts[3])
	}
	f.Threshold = v
	return f, nil
}

// String is the filter in --search-sla's form.
func (f Filter) String() string {
	return f.Metric + ":" + f.Stat + ":" + f.Op + ":" + strconv.FormatFloat(f.Threshold, 'g', -1, 64)
}

// observe returns the filter's statistic in m, if the step measured it.
func (f Filter) observe(m Metrics) (float64, bool) {
	v, ok := m[f.Metric][f.Stat]
	return v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// passes says whether v meets the filter.
func (f Filter) passes(v float64) bool {
	switch f.Op {
	case "lt":
		return v < f.Threshold
	case "le":
		return v <= f.Threshold
	case "gt":
		return v > f.Threshold
	default:
		return v >= f.Threshold
	}
}

// margin is how far v is past the threshold, in the metric's unit and in
// the direction that breaks it: negative while the filter holds, rising
// with the load on a monotone target whatever the op (AIPerf's signed
// margin).
func (f Filter) margin(v float64) float64 {
	if f.Op == "gt" || f.Op == "ge" {
		return f.Threshold - v
	}
	return v - f.Threshold
}

// Breach is a filter a step did not meet, and what it measured: nil
// when the step did not measure the metric, which AIPerf counts as a
// breach too.
type Breach struct {
	Filter
	Observed *float64 `json:"observed"`
}

// judge returns the filters m breaches, in the filters' order.
func judge(filters []Filter, m Metrics) []Breach {
	var out []Breach
	for _, f := range filters {
		v, ok := f.observe(m)
		switch {
		case !ok:
			out = append(out, Breach{Filter: f})
		case !f.passes(v):
			out = append(out, Breach{Filter: f, Observed: &v})
		}
	}
	return out
}
