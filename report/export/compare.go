package export

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
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
// file, the per-request samples of the same run when they are there
// (Samples, nil otherwise), and --compare-fail's rules.
type Baseline struct {
	Path    string
	Metrics Metrics
	Samples *Samples
	Rules   []Rule
}

// Side is one side of a comparison: its metrics, and its per-request
// samples when it has them (nil otherwise).
type Side struct {
	Metrics Metrics
	Samples *Samples
}

// delta is one value of a comparison, on both sides, and the test of its
// change; test is nil when the change cannot be tested.
type delta struct {
	metric, stat      string
	baseline, current float64
	test              *test
}

// test is the test of a change: the interval of current − baseline and
// the two-sided p-value that it is 0, also after Holm's adjustment over
// every test of the comparison.
type test struct {
	interval    stats.Interval
	p, adjusted float64
}

// distributionTest is the Mann–Whitney U test of one metric's whole
// distribution: did its values move, whatever the statistic.
type distributionTest struct {
	metric string
	up     bool // the current run's values tend to be larger
	test
}

// comparison is what Compare prints and the HTML report shows.
type comparison struct {
	rows          []delta
	distributions []distributionTest
	verdicts      []verdict
	// tested says both sides had per-request samples; without them no
	// change has a test and rules judge the values alone.
	tested bool
	level  float64
}

// significant says the change is unlikely to be noise at the comparison's
// level, after the correction for the number of tests made.
func (c *comparison) significant(t *test) bool { return t != nil && t.adjusted < 1-c.level }

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
		out = append(out, delta{metric: row[0], stat: row[1], baseline: b, current: c})
	}
	return out
}

// compare builds the comparison of current with base at level. With
// samples on both sides each row is tested: a statistic of a per-request
// metric by a seeded bootstrap of both samples, a throughput by Welch's t
// over the rates of the runs' time slices; each metric's distribution by
// Mann–Whitney U; and the p-values are adjusted together by Holm, so that
// the chance of calling any of them significant by noise alone stays under
// 1 − level however many are compared.
func compare(base, current Side, rules []Rule, level float64) (*comparison, error) {
	c := &comparison{rows: deltas(base.Metrics, current.Metrics, rules), level: level}
	c.tested = base.Samples != nil && current.Samples != nil
	if c.tested {
		c.test(base.Samples, current.Samples)
	}
	var err error
	c.verdicts, err = c.judge(base.Metrics, current.Metrics, rules)
	return c, err
}

// bootstrapped are the statistics a bootstrap tests, as they read a sorted
// sample; min, max and sums are left untested (an extreme has no
// bootstrap distribution worth the name).
var bootstrapped = map[string]func([]float64) float64{
	"avg": func(s []float64) float64 { return stats.Of(s, 0).Avg },
	"std": func(s []float64) float64 { return stats.Of(s, 0).Std },
	"p1":  quantileOf(.01), "p5": quantileOf(.05), "p10": quantileOf(.10), "p25": quantileOf(.25), "p50": quantileOf(.50),
	"p75": quantileOf(.75), "p90": quantileOf(.90), "p95": quantileOf(.95), "p99": quantileOf(.99),
}

func quantileOf(p float64) func([]float64) float64 {
	return func(s []float64) float64 { return stats.Percentile(s, p) }
}

func (c *comparison) test(base, current *Samples) {
	var all []*test
	byMetric := map[string][]int{} // rows of each per-request metric
	var metrics []string
	for i, d := range c.rows {
		_, okB := base.Values[d.metric]
		_, okC := current.Values[d.metric]
		switch {
		case okB && okC && bootstrapped[d.stat] != nil:
			if byMetric[d.metric] == nil {
				metrics = append(metrics, d.metric)
			}
			byMetric[d.metric] = append(byMetric[d.metric], i)
		case d.stat == "avg" && base.Rates[d.metric] != nil && current.Rates[d.metric] != nil:
			ch := stats.Welch(base.Rates[d.metric], current.Rates[d.metric], c.level)
			c.rows[i].test = &test{interval: ch.Interval, p: ch.P}
			all = append(all, c.rows[i].test)
		}
	}
	for _, m := range metrics {
		b, cur := base.Values[m], current.Values[m]
		var fs []func([]float64) float64
		for _, i := range byMetric[m] {
			fs = append(fs, bootstrapped[c.rows[i].stat])
		}
		// Seeded by the metric, so that the same two runs always compare alike.
		seed := fnv.New64a()
		seed.Write([]byte(m))
		for k, ch := range stats.BootstrapChanges(b, cur, fs, c.level, seed.Sum64()) {
			row := &c.rows[byMetric[m][k]]
			row.test = &test{interval: ch.Interval, p: ch.P}
			all = append(all, row.test)
		}
		c.distributions = append(c.distributions, distributionTest{metric: m, up: stats.Of(cur, 0).P50 > stats.Of(b, 0).P50, test: test{p: stats.MannWhitney(b, cur)}})
	}
	for i := range c.distributions {
		all = append(all, &c.distributions[i].test)
	}
	ps := make([]float64, len(all))
	for i, t := range all {
		ps[i] = t.p
	}
	for i, adj := range stats.Holm(ps) {
		all[i].adjusted = adj
	}
}

// verdict is a rule's outcome against the values it judged; test is the
// test of the change it judged, nil when there was none.
type verdict struct {
	rule              string
	failed            bool
	baseline, current float64
	test              *test
}

// judge evaluates the rules. A rule naming a metric that either side lacks
// is an error: a gate that cannot be evaluated must not pass. A relative
// rule whose change was tested fails only when the change is significant
// as well as past its bound: a regression the runs cannot tell from noise
// does not fail the gate.
func (c *comparison) judge(baseline, current Metrics, rules []Rule) ([]verdict, error) {
	tests := map[[2]string]*test{}
	for _, d := range c.rows {
		tests[[2]string{d.metric, d.stat}] = d.test
	}
	var out []verdict
	for _, r := range rules {
		b, okB := baseline[r.metric][r.stat]
		cur, okC := current[r.metric][r.stat]
		if !okB && r.relative || !okC {
			return nil, fmt.Errorf("%q: %s.%s is missing from the baseline or this run; metrics there: %s", r.text, r.metric, r.stat, strings.Join(current.tags(), ", "))
		}
		var bad bool
		switch {
		case r.relative && b == 0:
			bad = r.above && cur > 0 || !r.above && cur < 0
		case r.relative:
			pct := (cur - b) / b * 100
			bad = r.above && pct > r.bound || !r.above && pct < r.bound
		default:
			bad = r.above && cur > r.bound || !r.above && cur < r.bound
		}
		v := verdict{rule: r.text, baseline: b, current: cur}
		if r.relative {
			v.test = tests[[2]string{r.metric, r.stat}]
		}
		v.failed = bad && (v.test == nil || c.significant(v.test))
		out = append(out, v)
	}
	return out, nil
}

// Compare prints the changes from base to current, each with its interval
// and p-value where both sides have per-request samples, and returns how
// many rules failed, or an error for a rule it cannot evaluate.
func Compare(w io.Writer, base, current Side, rules []Rule, level float64) (failed int, err error) {
	c, err := compare(base, current, rules, level)
	if err != nil {
		return 0, err
	}
	c.print(w)
	return c.failed(), nil
}

// sides are r's baseline and r as a comparison's sides, and r's
// confidence level (stats.DefaultLevel for a run summarised without
// intervals); r has samples only when its baseline has, as a test needs
// both.
func (r Run) sides() (base, current Side, level float64, err error) {
	level = r.confidenceLevel()
	if level == 0 {
		level = stats.DefaultLevel
	}
	base, current = Side{Metrics: r.Baseline.Metrics, Samples: r.Baseline.Samples}, Side{Metrics: r.Metrics()}
	if base.Samples != nil {
		current.Samples, err = r.Samples()
	}
	return base, current, level, err
}

// comparison compares r with its Baseline.
func (r Run) comparison() (*comparison, error) {
	base, current, level, err := r.sides()
	if err != nil {
		return nil, err
	}
	return compare(base, current, r.Baseline.Rules, level)
}

// CompareWithBaseline is Compare of r with its Baseline.
func (r Run) CompareWithBaseline(w io.Writer) (failed int, err error) {
	base, current, level, err := r.sides()
	if err != nil {
		return 0, err
	}
	return Compare(w, base, current, r.Baseline.Rules, level)
}

func (c *comparison) failed() int {
	n := 0
	for _, v := range c.verdicts {
		if v.failed {
			n++
		}
	}
	return n
}

func (c *comparison) print(w io.Writer) {
	fmt.Fprintf(w, "%-40s %12s %12s %9s", "Metric", "baseline", "current", "change")
	if c.tested {
		fmt.Fprintf(w, "  %-20s %s", fmt.Sprintf("%g %% interval", 100*c.level), "significance")
	}
	fmt.Fprintln(w)
	for _, d := range c.rows {
		fmt.Fprintf(w, "%-40s %12.2f %12.2f %9s", d.metric+"."+d.stat, d.baseline, d.current, change(d.baseline, d.current))
		if c.tested {
			fmt.Fprintf(w, "  %-20s %s", relativeInterval(d.baseline, d.test), c.mark(d.test))
		}
		fmt.Fprintln(w)
	}
	for _, d := range c.distributions {
		shift := "lower"
		if d.up {
			shift = "higher"
		}
		if !c.significant(&d.test) {
			shift = "same"
		}
		fmt.Fprintf(w, "%-40s %12s %12s %9s  %-20s %s\n", d.metric+" (all values)", "", "", shift, "Mann–Whitney U", c.mark(&d.test))
	}
	switch {
	case c.tested:
		fmt.Fprintf(w, "~: not significant at %g %% after Holm's correction for the %d tests above, p its adjusted p-value (docs/metrics.md).\n", 100*c.level, c.tests())
	default:
		fmt.Fprintln(w, "Significance cannot be judged: the baseline has no per-request records. Compare with the baseline run's directory, "+
			"or keep its profile_export.jsonl beside its profile_export_aiperf.json; until then the rules judge the values alone.")
	}
	for _, v := range c.verdicts {
		how := ""
		if v.test != nil {
			how = ", " + c.mark(v.test)
		}
		if v.failed {
			fmt.Fprintf(w, "FAIL %s (baseline %.2f, now %.2f, %s%s)\n", v.rule, v.baseline, v.current, change(v.baseline, v.current), how)
		} else {
			fmt.Fprintf(w, "pass %s (%s%s)\n", v.rule, change(v.baseline, v.current), how)
		}
	}
}

func (c *comparison) tests() int {
	n := len(c.distributions)
	for _, d := range c.rows {
		if d.test != nil {
			n++
		}
	}
	return n
}

// mark is benchstat's: the adjusted p-value, after ~ when the change is
// not significant.
func (c *comparison) mark(t *test) string {
	switch {
	case t == nil:
		return "not tested"
	case c.significant(t):
		return fmt.Sprintf("(p=%.3f)", t.adjusted)
	}
	return fmt.Sprintf("~ (p=%.2f)", t.adjusted)
}

// relativeInterval is the interval of a change in percent of the
// baseline.
func relativeInterval(baseline float64, t *test) string {
	if t == nil || baseline == 0 || !t.interval.Bounded() {
		return ""
	}
	return fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*t.interval.Low/baseline, 100*t.interval.High/baseline)
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
