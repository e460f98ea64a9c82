package backtest

import (
	"time"

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
