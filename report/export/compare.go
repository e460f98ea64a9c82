package export

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/inferprobe/inferprobe/stats"
)

// Metrics are the metrics of a profile export: metric tag → statistic →
// value, as profile_export_aiperf.json (AIPerf's and ours) and the
// profile_export_inferprobe.json of inferprobe before it wrote AIPerf's
// schema all lay them out.
type Metrics map[string]map[string]float64

// Metrics are the metrics JSON writes of r, without writing and reading
// them back.
func (r Run) Metrics() Metrics {
	out := Metrics{}
	for _, m := range distributions(r.Summary) {
		stats := map[string]float64{}
		for _, s := range statistics(m.Stats) {
			stats[s.k] = s.v.(float64)
		}
		out[m.Tag] = stats
	}
	for _, m := range singles(r) {
		out[m.Tag] = map[string]float64{"avg": m.Value}
	}
	return out
}

// LoadBaseline reads the metrics of a profile export JSON file, or of the
// run directory holding one: profile_export_aiperf.json (AIPerf's or
// inferprobe's) or an older inferprobe's profile_export_inferprobe.json.
func LoadBaseline(path string) (Metrics, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		dir := path
		if path = filepath.Join(dir, artifactJSON); !exists(path) {
			path = filepath.Join(dir, legacyJSON)
		}
		if !exists(path) {
			return nil, fmt.Errorf("%s holds no %s or %s; give a run's artifact directory or one of those files", dir, artifactJSON, legacyJSON)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w; give the profile_export_aiperf.json of an earlier run (inferprobe's or AIPerf's) or its directory", err)
	}
	m, err := ParseMetrics(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; give a profile_export_aiperf.json (inferprobe's or AIPerf's) or an older profile_export_inferprobe.json", path, err)
	}
	return m, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// ParseMetrics reads the metrics of a profile export: every top-level
// object with a unit.
func ParseMetrics(b []byte) (Metrics, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	doc := Metrics{}
	for tag, v := range raw {
		var m map[string]any
		if json.Unmarshal(v, &m) != nil {
			continue
		}
		if _, ok := m["unit"].(string); !ok {
			continue // not a metric: input_config, error_summary, extras
		}
		stats := map[string]float64{}
		for k, x := range m {
			if f, ok := x.(float64); ok {
				stats[k] = f
			}
		}
		doc[tag] = stats
	}
	if len(doc) == 0 {
		return nil, fmt.Errorf("no metrics in it")
	}
	return doc, nil
}

// Rule is one regression rule: METRIC[.STAT]>N% (rose by more than N %),
// METRIC[.STAT]<-N% (fell by more than N %), or METRIC[.STAT]>V and <V
// (an absolute bound in the metric's unit).
type Rule struct {
	text, metric, stat string
	above              bool    // > rather than <
	relative           bool    // bound is a change in percent
	bound              float64 // percent when relative, else a value in the metric's unit
}

var ruleSyntax = regexp.MustCompile(`^([a-z0-9_]+)(?:\.([a-z0-9]+))?\s*([<>])\s*([+-]?[0-9]*\.?[0-9]+)(%?)$`)

// ParseRules reads regression rules.
func ParseRules(texts []string) ([]Rule, error) {
	var rules []Rule
	for _, t := range texts {
		m := ruleSyntax.FindStringSubmatch(strings.TrimSpace(t))
		if m == nil {
			return nil, fmt.Errorf(`%q: want METRIC[.STAT]>N%%, METRIC[.STAT]<-N%% or METRIC[.STAT]>VALUE, e.g. "time_to_first_token.p99>10%%"`, t)
		}
		r := Rule{text: t, metric: m[1], stat: m[2], above: m[3] == ">", relative: m[5] == "%"}
		if r.stat == "" {
			r.stat = "avg"
		}
		if !isStatistic(r.stat) {
			return nil, fmt.Errorf("%q: unknown statistic %q; use avg, min, max, std or p1, p5, p10, p25, p50, p75, p90, p95, p99", t, r.stat)
		}
		r.bound, _ = strconv.ParseFloat(m[4], 64)
		rules = append(rules, r)
	}
	return rules, nil
}

func isStatistic(name string) bool {
	for _, s := range statistics(&stats.Stats{}) {
		if s.k == name {
			return true
		}
	}
	return false
}

// CheckRules says which relative rule the baseline m cannot judge, for
// want of the value it compares with; a run can then be refused before it
// starts rather than after.
func (m Metrics) CheckRules(rules []Rule) error {
	for _, r := range rules {
		if _, ok := m[r.metric][r.stat]; r.relative && !ok {
			return fmt.Errorf("%q: the baseline has no %s.%s; metrics there: %s", r.text, r.metric, r.stat, strings.Join(m.tags(), ", "))
		}
	}
	return nil
}

// comparedByDefault are the rows Compare prints even without rules.
var comparedByDefault = [][2]string{
	{"time_to_first_token", "p50"}, {"time_to_first_token", "p99"},
	{"inter_token_latency", "p50"}, {"inter_token_latency", "p99"},
	{"request_latency", "p50"}, {"request_latency", "p99"},
	{"output_token_throughput", "avg"}, {"request_throughput", "avg"}, {"goodput", "avg"},
}

// Baseline is what a run is compared with: the metrics of --compare's
// file and --compare-fail's rules.
type Baseline struct {
	Path    string
	Metrics Metrics
	Rules   []Rule
}

// delta is one value of a comparison, on both sides.
type delta struct {
	metric, stat      string
	baseline, current float64
}

// deltas are the values a comparison shows: the default rows and those the
// rules name, each once, where both sides have them.
func deltas(baseline, current Metrics, rules []Rule) []delta {
	rows := comparedByDefault
	for _, r := range rules {
		rows = append(rows, [2]string{r.metric, r.stat})
	}
	seen := map[[2]string]bool{}
	var out []delta
	for _, row := range rows {
		b, okB := baseline[row[0]][row[1]]
		c, okC := current[row[0]][row[1]]
		if seen[row] || !okB || !okC {
			continue
		}
		seen[row] = true
		out = append(out, delta{row[0], row[1], b, c})
	}
	return out
}

// verdict is a rule's outcome against the values it judged.
type verdict struct {
	rule              string
	failed            bool
	baseline, current float64
}

// judge evaluates the rules. A rule naming a metric that either side lacks
// is an error: a gate that cannot be evaluated must not pass.
func judge(baseline, current Metrics, rules []Rule) ([]verdict, error) {
	var out []verdict
	for _, r := range rules {
		b, okB := baseline[r.metric][r.stat]
		c, okC := current[r.metric][r.stat]
		if !okB && r.relative || !okC {
			return nil, fmt.Errorf("%q: %s.%s is missing from the baseline or this run; metrics there: %s", r.text, r.metric, r.stat, strings.Join(current.tags(), ", "))
		}
		var bad bool
		switch {
		case r.relative && b == 0:
			bad = r.above && c > 0 || !r.above && c < 0
		case r.relative:
			pct := (c - b) / b * 100
			bad = r.above && pct > r.bound || !r.above && pct < r.bound
		default:
			bad = r.above && c > r.bound || !r.above && c < r.bound
		}
		out = append(out, verdict{r.text, bad, b, c})
	}
	return out, nil
}

// Compare prints the deltas between baseline and current, and returns how
// many rules failed, or an error for a rule it cannot evaluate.
func Compare(w io.Writer, baseline, current Metrics, rules []Rule) (failed int, err error) {
	fmt.Fprintf(w, "%-40s %12s %12s %9s\n", "Metric", "baseline", "current", "change")
	for _, d := range deltas(baseline, current, rules) {
		fmt.Fprintf(w, "%-40s %12.2f %12.2f %9s\n", d.metric+"."+d.stat, d.baseline, d.current, change(d.baseline, d.current))
	}
	verdicts, err := judge(baseline, current, rules)
	if err != nil {
		return 0, err
	}
	for _, v := range verdicts {
		if v.failed {
			failed++
			fmt.Fprintf(w, "FAIL %s (baseline %.2f, now %.2f, %s)\n", v.rule, v.baseline, v.current, change(v.baseline, v.current))
		} else {
			fmt.Fprintf(w, "pass %s\n", v.rule)
		}
	}
	return failed, nil
}

func change(b, c float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", (c-b)/b*100)
}

func (m Metrics) tags() []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
