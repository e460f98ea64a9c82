package backtest

import (
	"sync"

	"github.com/prometheus/prometheus/promql/parser"
)

// cachingParser parses each query once: a rule hands the engine its query
// as a string at every evaluation, and parsing it again took about a tenth
// of a run's CPU. The engine writes into the tree it evaluates (the series
// a selector selects, offsets, whether it decodes buckets), so each query
// gets a fresh copy of the parsed tree, which is cheaper than parsing.
type cachingParser struct {
	parser.Parser
	parsed sync.Map // query string → parser.Expr, never evaluated itself
}

func (p *cachingParser) ParseExpr(input string) (parser.Expr, error) {
	if e, ok := p.parsed.Load(input); ok {
		if c, ok := cloneExpr(e.(parser.Expr)); ok {
			return c, nil
		}
	}
	e, err := p.Parser.ParseExpr(input)
	if err != nil {
		return e, err
	}
	// Kept is a copy, not the tree this query will evaluate.
	if pristine, ok := cloneExpr(e); ok {
		p.parsed.Store(input, pristine)
	}
	return e, nil
}

// cloneExpr copies e's nodes, leaving out what an evaluation wrote into
// them; false for a node it does not know, or a duration expression, which
// it does not copy, for the caller to parse instead.
func cloneExpr(e parser.Expr) (parser.Expr, bool) {
	ok := true
	clone := func(e parser.Expr) parser.Expr {
		if e == nil || !ok {
			return e
		}
		c, cok := cloneExpr(e)
		ok = ok && cok
		return c
	}
	switch n := e.(type) {
	case *parser.AggregateExpr:
		c := *n
		c.Expr, c.Param = clone(n.Expr), clone(n.Param)
		return &c, ok
	case *parser.BinaryExpr:
		c := *n
		c.LHS, c.RHS = clone(n.LHS), clone(n.RHS)
		if n.VectorMatching != nil {
			m := *n.VectorMatching
			c.VectorMatching = &m
		}
		return &c, ok
	case *parser.Call:
		c := *n
		c.Args = make(parser.Expressions, len(n.Args))
		for i, a := range n.Args {
			c.Args[i] = clone(a)
		}
		return &c, ok
	case *parser.MatrixSelector:
		c := *n
		c.VectorSelector = clone(n.VectorSelector)
		return &c, ok && n.RangeExpr == nil
	case *parser.SubqueryExpr:
		c := *n
		c.Expr = clone(n.Expr)
		c.Timestamp = copyOf(n.Timestamp)
		return &c, ok && n.RangeExpr == nil && n.OriginalOffsetExpr == nil && n.StepExpr == nil
	case *parser.NumberLiteral:
		c := *n
		return &c, true
	case *parser.StringLiteral:
		c := *n
		return &c, true
	case *parser.ParenExpr:
		c := *n
		c.Expr = clone(n.Expr)
		return &c, ok
	case *parser.UnaryExpr:
		c := *n
		c.Expr = clone(n.Expr)
		return &c, ok
	case *parser.VectorSelector:
		c := *n
		c.UnexpandedSeriesSet, c.Series = nil, nil
		c.Timestamp = copyOf(n.Timestamp)
		c.LabelMatchers = append(c.LabelMatchers[:0:0], n.LabelMatchers...)
		return &c, n.OriginalOffsetExpr == nil
	}
	return e, false
}

func copyOf[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
