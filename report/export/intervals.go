package export

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/inferprobe/inferprobe/stats"
)

// estimate is one reported value with its confidence interval.
type estimate struct {
	Metric   metric
	Stat     string // avg or pN, AIPerf's statistic name
	Value    float64
	Interval stats.Interval
	// Needs is, for a mean or percentile the run could not bound, how
	// many samples would bound it at the level; 0 otherwise.
	Needs int
}

// intervalStats are the statistics shown with intervals, and the quantile
// each percentile is.
var intervalStats = []struct {
	name string
	q    float64 // 0 for avg
	of   func(*stats.Stats) float64
	iv   func(*stats.Intervals) stats.Interval
}{
	{"avg", 0, func(s *stats.Stats) float64 { return s.Avg }, func(i *stats.Intervals) stats.Interval { return i.Avg }},
	{"p50", .50, func(s *stats.Stats) float64 { return s.P50 }, func(i *stats.Intervals) stats.Interval { return i.P50 }},
	{"p90", .90, func(s *stats.Stats) float64 { return s.P90 }, func(i *stats.Intervals) stats.Interval { return i.P90 }},
	{"p95", .95, func(s *stats.Stats) float64 { return s.P95 }, func(i *stats.Intervals) stats.Interval { return i.P95 }},
	{"p99", .99, func(s *stats.Stats) float64 { return s.P99 }, func(i *stats.Intervals) stats.Interval { return i.P99 }},
}

// confidenceLevel is the level r's intervals are at; 0 without them.
func (r Run) confidenceLevel() float64 {
	if t := r.Summary.Throughputs; t != nil {
		return t.Level
	}
	for _, m := range distributions(r.Summary) {
		if m.Stats.Intervals != nil {
			return m.Stats.Intervals.Level
		}
	}
	return 0
}

// estimates are r's means, percentiles (those of intervalStats) and
// throughputs with their intervals, in the order of the report; none when
// the run was summarised without intervals.
func (r Run) estimates() []estimate {
	var out []estimate
	for _, m := range distributions(r.Summary) {
		iv := m.Stats.Intervals
		if iv == nil {
			continue
		}
		for _, st := range intervalStats {
			e := estimate{Metric: m, Stat: st.name, Value: st.of(m.Stats), Interval: st.iv(iv)}
			switch {
			case e.Interval.Bounded():
			case st.q > 0:
				e.Needs = stats.MinSamples(st.q, iv.Level)
			default:
				e.Needs = 2 // a spread to take the mean's from
			}
			out = append(out, e)
		}
	}
	if t := r.Summary.Throughputs; t != nil {
		byTag := map[string]stats.Interval{
			"request_throughput": t.Request, "output_token_throughput": t.OutputToken, "total_token_throughput": t.TotalToken,
			"input_token_throughput": t.InputToken, "goodput": t.Goodput,
		}
		for _, m := range singles(r) {
			if iv, ok := byTag[m.Tag]; ok {
				out = append(out, estimate{Metric: m, Stat: "avg", Value: m.Value, Interval: iv})
			}
		}
	}
	return out
}

// intervalsJSON is the "confidence_intervals" object of the JSON's
// inferprobe extras: the level, and per metric tag each statistic's
// [low, high], null for a side the run cannot bound. It sits there rather
// than in AIPerf's metric objects, whose keys AIPerf fixes.
func (r Run) intervalsJSON() obj {
	out := obj{{"level", r.confidenceLevel()}, {"method", "docs/metrics.md#confidence-intervals"}}
	var tag string
	var cur obj
	flush := func() {
		if cur != nil {
			out = append(out, kv{tag, cur})
		}
	}
	for _, e := range r.estimates() {
		if e.Metric.Tag != tag {
			flush()
			tag, cur = e.Metric.Tag, obj{}
		}
		cur = append(cur, kv{e.Stat, e.Interval})
	}
	flush()
	return out
}

// bound is one side of an interval for the console and the HTML report:
// "—" for a side the run could not bound.
func bound(v float64) string {
	if math.IsInf(v, 0) {
		return "—"
	}
	return fmt.Sprintf("%.2f", v)
}

// Bracket is the interval as text: [low, high].
func (e estimate) Bracket() string {
	return "[" + bound(e.Interval.Low) + ", " + bound(e.Interval.High) + "]"
}

// consoleIntervals prints the estimates compactly, a line per metric
// (p99 123.40 [118.00, 131.20]), and says why a side is missing.
func consoleIntervals(w io.Writer, r Run) {
	// The console leaves out the HTTP trace metrics, as its table does.
	es := slices.DeleteFunc(r.estimates(), func(e estimate) bool { return e.Metric.trace })
	if len(es) == 0 {
		return
	}
	fmt.Fprintf(w, "\nConfidence intervals at %g %% (docs/metrics.md):\n", 100*r.confidenceLevel())
	needs := map[string]int{}
	for i := 0; i < len(es); {
		j := i
		var parts []string
		for ; j < len(es) && es[j].Metric.Tag == es[i].Metric.Tag; j++ {
			parts = append(parts, fmt.Sprintf("%s %.2f %s", es[j].Stat, es[j].Value, es[j].Bracket()))
			if es[j].Needs > 0 {
				needs[es[j].Stat] = es[j].Needs
			}
		}
		fmt.Fprintf(w, "%-52s %s\n", csvName(es[i].Metric), strings.Join(parts, "  "))
		i = j
	}
	if len(needs) > 0 {
		var why []string
		for _, st := range intervalStats {
			if n := needs[st.name]; n > 0 {
				why = append(why, fmt.Sprintf("%s needs %d", st.name, n))
			}
		}
		fmt.Fprintf(w, "—: too few samples to bound that side at this level (%s); the value beside it is less precise than it looks.\n", strings.Join(why, ", "))
	}
}

// ErrorBar draws the interval as a horizontal error bar, 160 by 12 pixels,
// the bounded span from 10 % to 90 % of the width; an unbounded side runs
// to the edge as an arrow.
func (e estimate) ErrorBar() template.HTML {
	const w, left, right = 160.0, 16.0, 144.0
	lo, hi := e.Interval.Low, e.Interval.High
	span := [2]float64{min(e.Value, lo), max(e.Value, hi)}
	if math.IsInf(lo, 0) {
		span[0] = e.Value
	}
	if math.IsInf(hi, 0) {
		span[1] = e.Value
	}
	x := func(v float64) float64 {
		if span[1] == span[0] {
			return w / 2
		}
		return left + (v-span[0])/(span[1]-span[0])*(right-left)
	}
	x0, x1 := 0.0, w
	var b strings.Builder
	fmt.Fprintf(&b, `<svg width="%g" height="12" viewBox="0 0 %g 12" role="img" aria-label="%s">`, w, w, e.Bracket())
	if !math.IsInf(lo, 0) {
		x0 = x(lo)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="2" x2="%.1f" y2="10" stroke="#1f77b4"/>`, x0, x0)
	} else {
		b.WriteString(`<path d="M0 6 l5 -4 v8 z" fill="#d62728"/>`)
	}
	if !math.IsInf(hi, 0) {
		x1 = x(hi)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="2" x2="%.1f" y2="10" stroke="#1f77b4"/>`, x1, x1)
	} else {
		fmt.Fprintf(&b, `<path d="M%g 6 l-5 -4 v8 z" fill="#d62728"/>`, w)
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="6" x2="%.1f" y2="6" stroke="#1f77b4" stroke-width="2"/><circle cx="%.1f" cy="6" r="3" fill="#222"/></svg>`, x0, x1, x(e.Value))
	return template.HTML(b.String())
}
