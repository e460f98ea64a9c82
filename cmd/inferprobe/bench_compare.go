package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// exportDoc is a profile export read back: metric tag → statistic → value,
// from our JSON or AIPerf's (the layout is the same).
type exportDoc map[string]map[string]float64

// loadExport reads the metrics of a profile_export JSON file.
func loadExport(path string) (exportDoc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w; give the profile_export_inferprobe.json of an earlier run (in its --artifact-dir) or AIPerf's profile_export_aiperf.json", err)
	}
	doc, err := parseExport(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; give a profile_export_inferprobe.json or profile_export_aiperf.json", path, err)
	}
	return doc, nil
}

func parseExport(b []byte) (exportDoc, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	doc := exportDoc{}
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

// compareRule is one --compare-fail rule.
type compareRule struct {
	text, metric, stat string
	above              bool    // > rather than <
	relative           bool    // bound is a change in percent
	bound              float64 // percent when relative, else a value in the metric's unit
}

var ruleSyntax = regexp.MustCompile(`^([a-z0-9_]+)(?:\.([a-z0-9]+))?\s*([<>])\s*([+-]?[0-9]*\.?[0-9]+)(%?)$`)

var ruleStats = map[string]bool{"avg": true, "min": true, "max": true, "std": true, "p1": true, "p5": true, "p10": true,
	"p25": true, "p50": true, "p75": true, "p90": true, "p95": true, "p99": true}

func parseRules(texts []string) ([]compareRule, error) {
	var rules []compareRule
	for _, t := range texts {
		m := ruleSyntax.FindStringSubmatch(strings.TrimSpace(t))
		if m == nil {
			return nil, fmt.Errorf(`--compare-fail %q: want METRIC[.STAT]>N%%, METRIC[.STAT]<-N%% or METRIC[.STAT]>VALUE, e.g. "time_to_first_token.p99>10%%"`, t)
		}
		r := compareRule{text: t, metric: m[1], stat: m[2], above: m[3] == ">", relative: m[5] == "%"}
		if r.stat == "" {
			r.stat = "avg"
		}
		if !ruleStats[r.stat] {
			return nil, fmt.Errorf("--compare-fail %q: unknown statistic %q; use avg, min, max, std or p1, p5, p10, p25, p50, p75, p90, p95, p99", t, r.stat)
		}
		r.bound, _ = strconv.ParseFloat(m[4], 64)
		rules = append(rules, r)
	}
	return rules, nil
}

// comparedByDefault are the rows printed with --compare even without rules.
var comparedByDefault = [][2]string{
	{"time_to_first_token", "p50"}, {"time_to_first_token", "p99"},
	{"inter_token_latency", "p50"}, {"inter_token_latency", "p99"},
	{"request_latency", "p50"}, {"request_latency", "p99"},
	{"output_token_throughput", "avg"}, {"request_throughput", "avg"}, {"goodput", "avg"},
}

// compare prints the deltas between baseline and the current run's JSON,
// and returns how many rules failed. A rule naming a metric that either side
// lacks is an error: a gate that cannot be evaluated must not pass.
func compare(w io.Writer, baseline exportDoc, currentJSON []byte, rules []compareRule) (failed int, err error) {
	current, err := parseExport(currentJSON)
	if err != nil {
		return 0, err
	}
	rows := comparedByDefault
	for _, r := range rules {
		rows = append(rows, [2]string{r.metric, r.stat})
	}
	seen := map[[2]string]bool{}
	fmt.Fprintf(w, "%-40s %12s %12s %9s\n", "Metric", "baseline", "current", "change")
	for _, row := range rows {
		b, okB := baseline[row[0]][row[1]]
		c, okC := current[row[0]][row[1]]
		if seen[row] || !okB || !okC {
			continue
		}
		seen[row] = true
		fmt.Fprintf(w, "%-40s %12.2f %12.2f %9s\n", row[0]+"."+row[1], b, c, change(b, c))
	}
	var msgs []string
	for _, r := range rules {
		b, okB := baseline[r.metric][r.stat]
		c, okC := current[r.metric][r.stat]
		if !okB && r.relative || !okC {
			return 0, fmt.Errorf("%q: %s.%s is missing from the baseline or this run; metrics there: %s", r.text, r.metric, r.stat, strings.Join(current.tags(), ", "))
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
		if bad {
			failed++
			msgs = append(msgs, fmt.Sprintf("FAIL %s (baseline %.2f, now %.2f, %s)", r.text, b, c, change(b, c)))
		} else {
			msgs = append(msgs, fmt.Sprintf("pass %s", r.text))
		}
	}
	for _, m := range msgs {
		fmt.Fprintln(w, m)
	}
	return failed, nil
}

func change(b, c float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", (c-b)/b*100)
}

func (d exportDoc) tags() []string {
	var out []string
	for k := range d {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
