package backtest

import (
	"slices"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
)

// unbounded is the lookback of a rule that may read any past sample: one
// with an absolute @ timestamp, or a range or offset only known when it is
// evaluated.
const unbounded = time.Duration(1<<63 - 1)

// lookback is how far before an evaluation the groups' rules may read: the
// longest range plus offset, through nested subqueries, plus lookbackDelta
// for the instant selected at the far end, plus each group's query offset.
func lookback(groups []*rules.Group, lookbackDelta time.Duration) time.Duration {
	var longest time.Duration
	for _, g := range groups {
		for _, r := range g.Rules() {
			d := exprLookback(r.Query(), lookbackDelta)
			if d == unbounded {
				return unbounded
			}
			longest = max(longest, d+g.QueryOffset())
		}
	}
	return longest
}

func exprLookback(expr parser.Expr, lookbackDelta time.Duration) time.Duration {
	var longest time.Duration
	parser.Inspect(expr, func(node parser.Node, path []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok || longest == unbounded {
			return nil
		}
		d, ok := reach(vs.Timestamp, vs.OriginalOffsetExpr, vs.OriginalOffset)
		if !ok {
			longest = unbounded
			return nil
		}
		d += lookbackDelta
		for _, n := range path {
			switch n := n.(type) {
			case *parser.MatrixSelector:
				if n.RangeExpr != nil {
					longest = unbounded
					return nil
				}
				d += n.Range
			case *parser.SubqueryExpr:
				off, ok := reach(n.Timestamp, n.OriginalOffsetExpr, n.OriginalOffset)
				if !ok || n.RangeExpr != nil {
					longest = unbounded
					return nil
				}
				d += n.Range + off
			}
		}
		longest = max(longest, d)
		return nil
	})
	return longest
}

// reach is how far back an offset takes a selector; ok is false when it
// cannot be known before evaluation. A rule's @ start() and @ end() are its
// evaluation time; a negative offset reads later data, which is never gone.
func reach(at *int64, offsetExpr *parser.DurationExpr, offset time.Duration) (time.Duration, bool) {
	if at != nil || offsetExpr != nil {
		return 0, false
	}
	return max(offset, 0), true
}

// readsMetric returns whether the groups' rules may read a series of metric
// name.
func readsMetric(groups []*rules.Group) func(name string) bool {
	var selectors []nameSelector
	for _, g := range groups {
		for _, r := range g.Rules() {
			selectors = append(selectors, nameSelectors(r.Query())...)
		}
	}
	return func(name string) bool {
		for _, sel := range selectors {
			if sel.matches(name) {
				return true
			}
		}
		return false
	}
}

// nameSelector is a selector's __name__ matchers; with none it may read
// any metric.
type nameSelector []*labels.Matcher

func (sel nameSelector) matches(name string) bool {
	for _, m := range sel {
		if !m.Matches(name) {
			return false
		}
	}
	return true
}

func nameSelectors(expr parser.Expr) []nameSelector {
	var selectors []nameSelector
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			var sel nameSelector
			for _, m := range vs.LabelMatchers {
				if m.Name == model.MetricNameLabel {
					sel = append(sel, m)
				}
			}
			selectors = append(selectors, sel)
		}
		return nil
	})
	return selectors
}

// alertsOnly drops the recording rules that no alerting rule reads, directly
// or through other recording rules, and the groups left empty: a firing
// cannot depend on them, and they can be most of the work (the shipped
// latency quantiles feed dashboards only). A group that loses rules is made
// anew with opts, as the manager made it. It returns the groups and how
// many recording rules it dropped.
func alertsOnly(groups []*rules.Group, opts *rules.ManagerOptions) ([]*rules.Group, int) {
	needed := map[rules.Rule]bool{}
	var reads []nameSelector // the selectors of the needed rules
	for _, g := range groups {
		for _, r := range g.Rules() {
			if _, ok := r.(*rules.AlertingRule); ok {
				needed[r] = true
				reads = append(reads, nameSelectors(r.Query())...)
			}
		}
	}
	for grown := true; grown; {
		grown = false
		for _, g := range groups {
			for _, r := range g.Rules() {
				if needed[r] || !slices.ContainsFunc(reads, func(sel nameSelector) bool { return sel.matches(r.Name()) }) {
					continue
				}
				needed[r] = true
				reads = append(reads, nameSelectors(r.Query())...)
				grown = true
			}
		}
	}
	var kept []*rules.Group
	dropped := 0
	for _, g := range groups {
		all := g.Rules()
		rs := slices.DeleteFunc(slices.Clone(all), func(r rules.Rule) bool { return !needed[r] })
		dropped += len(all) - len(rs)
		switch {
		case len(rs) == len(all):
			kept = append(kept, g)
		case len(rs) > 0:
			opts.RuleDependencyController.AnalyseRules(rs)
			offset := g.QueryOffset()
			kept = append(kept, rules.NewGroup(rules.GroupOptions{
				Name: g.Name(), File: g.File(), Interval: g.Interval(), Limit: g.Limit(),
				Rules: rs, Opts: opts, QueryOffset: &offset,
			}))
		}
	}
	return kept, dropped
}
