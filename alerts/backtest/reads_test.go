package backtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"
)

func TestExprLookback(t *testing.T) {
	const delta = 5 * time.Minute
	day := 24 * time.Hour
	p := parser.NewParser(parser.Options{})
	for expr, want := range map[string]time.Duration{
		"x":                      delta,
		"rate(x[5m])":            5*time.Minute + delta,
		"rate(x[30m] offset 7d)": 7*day + 30*time.Minute + delta,
		"rate(x[5m] offset -1h)": 5*time.Minute + delta,
		"max_over_time((x and y @ end())[7d:5m])":         7*day + delta,
		"max_over_time(rate(x[5m])[1h:1m] offset 1d) > y": day + time.Hour + 5*time.Minute + delta,
		"x @ 1700000000":                     unbounded,
		"max_over_time(x[1h:] @ 1700000000)": unbounded,
	} {
		e, err := p.ParseExpr(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := exprLookback(e, delta); got != want {
			t.Errorf("%s: lookback %v, want %v", expr, got, want)
		}
	}
}

func TestReadsMetric(t *testing.T) {
	for _, c := range []struct {
		expr       string
		read, skip []string
	}{
		{`rate(inferprobe_requests_total{job="inferprobe"}[5m]) > 0`, []string{"inferprobe_requests_total"}, []string{"inferprobe_good_requests_total"}},
		{`count({__name__=~"inferprobe_.*_total", __name__!="inferprobe_errors_total"}) > 0`, []string{"inferprobe_requests_total"}, []string{"inferprobe_errors_total", "up"}},
		{`count({job="inferprobe"}) > 0`, []string{"inferprobe_requests_total", "up"}, nil},
	} {
		file := filepath.Join(t.TempDir(), "rules.yml")
		rules := "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: '" + c.expr + "'\n"
		if err := os.WriteFile(file, []byte(rules), 0o644); err != nil {
			t.Fatal(err)
		}
		groups, err := loadGroups(promrules.NewManager(&promrules.ManagerOptions{}), parser.NewParser(parser.Options{}), time.Minute, []string{file})
		if err != nil {
			t.Fatal(err)
		}
		reads := readsMetric(groups)
		for _, name := range c.read {
			if !reads(name) {
				t.Errorf("%s: does not read %s", c.expr, name)
			}
		}
		for _, name := range c.skip {
			if reads(name) {
				t.Errorf("%s: reads %s", c.expr, name)
			}
		}
	}
}

func TestAlertsOnly(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.yml")
	const rules = `groups:
  - name: dashboards
    rules:
      - record: c
        expr: sum(x)
  - name: feeds
    rules:
      - record: b
        expr: sum(y)
      - record: unread
        expr: sum(z)
      - record: a
        expr: b * 2
      - alert: A
        expr: a > 1
`
	if err := os.WriteFile(file, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := &promrules.ManagerOptions{}
	groups, err := loadGroups(promrules.NewManager(opts), parser.NewParser(parser.Options{}), time.Minute, []string{file})
	if err != nil {
		t.Fatal(err)
	}
	kept, dropped := alertsOnly(groups, opts)
	var names []string
	for _, g := range kept {
		for _, r := range g.Rules() {
			names = append(names, g.Name()+"/"+r.Name())
		}
	}
	if want := []string{"feeds/b", "feeds/a", "feeds/A"}; !slices.Equal(names, want) || dropped != 2 {
		t.Errorf("kept %v, dropped %d; want %v and 2", names, dropped, want)
	}
}
