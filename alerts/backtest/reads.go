package backtest

import (
	"time"

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
// name: whether any selector's __name__ matchers match it. A selector
// without one may read anything.
func readsMetric(groups []*rules.Group) func(name string) bool {
	var selectors [][]*labels.Matcher
	everything := false
	for _, g := range groups {
		for _, r := range g.Rules() {
			parser.Inspect(r.Query(), func(node parser.Node, _ []parser.Node) error {
				vs, ok := node.(*parser.VectorSelector)
				if !ok {
					return nil
				}
				var byName []*labels.Matcher
				for _, m := range vs.LabelMatchers {
					if m.Name == labels.MetricName {
						byName = append(byName, m)
					}
				}
				if len(byName) == 0 {
					everything = true
				}
				selectors = append(selectors, byName)
				return nil
			})
		}
	}
	return func(name string) bool {
		if everything {
			return true
		}
		for _, byName := range selectors {
			if matchesAll(byName, name) {
				return true
			}
		}
		return false
	}
}

func matchesAll(matchers []*labels.Matcher, v string) bool {
	for _, m := range matchers {
		if !m.Matches(v) {
			return false
		}
	}
	return true
}
