package backtest

import (
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// TestCachingParserCopiesTheShippedRules checks that every shipped rule's
// query comes out of the cache as a copy equal to a fresh parse that shares
// no selector with it, so that an evaluation cannot write into another's.
func TestCachingParserCopiesTheShippedRules(t *testing.T) {
	plain := parser.NewParser(parser.Options{})
	f, errs := rulefmt.ParseFile("../inferprobe-rules.yml", false, model.UTF8Validation, plain, promslog.NewNopLogger())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	p := &cachingParser{Parser: plain}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			first, err := p.ParseExpr(r.Expr)
			if err != nil {
				t.Fatal(err)
			}
			second, err := p.ParseExpr(r.Expr)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := p.parsed.Load(r.Expr); !ok {
				t.Errorf("%s: not cached", r.Expr)
			}
			if first.String() != second.String() {
				t.Errorf("cached %s, parsed %s", second, first)
			}
			seen := map[*parser.VectorSelector]bool{}
			for _, e := range []parser.Expr{first, second} {
				parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
					if vs, ok := n.(*parser.VectorSelector); ok {
						if seen[vs] {
							t.Errorf("%s: a selector shared between two queries", r.Expr)
						}
						seen[vs] = true
					}
					return nil
				})
			}
		}
	}
}
