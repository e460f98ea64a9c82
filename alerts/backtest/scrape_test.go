package backtest

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
)

// BenchmarkScrape measures one scrape of a target's series, with 15 new
// requests since the last, for rules that read every metric and for the
// shipped ones.
func BenchmarkScrape(b *testing.B) {
	m := rules.NewManager(&rules.ManagerOptions{})
	p := parser.NewParser(parser.Options{})
	shipped, err := loadGroups(m, p, time.Minute, []string{"../inferprobe-rules.yml"})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		reads   func(string) bool
		classic bool
	}{
		{"native", func(string) bool { return true }, false},
		{"classic", func(string) bool { return true }, true},
		{"native-shipped", readsMetric(shipped), false},
		{"classic-shipped", readsMetric(shipped), true},
	} {
		b.Run(c.name, func(b *testing.B) {
			db, err := openStorage(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			reg := prometheus.NewRegistry()
			rec := newRecorder(reg)
			s := newScraper(reg, c.reads, c.classic)
			probes := synthetic(hour0, 24*time.Hour, 1, 3)
			var ps []Probe
			for p := range probes {
				ps = append(ps, p)
				if len(ps) == 15*(b.N+1) {
					break
				}
			}
			b.ResetTimer()
			for i := range b.N {
				for j := range 15 {
					rec.observe(&ps[i*15+j])
				}
				app := db.AppenderV2(context.Background())
				if err := s.scrape(app, ps[i*15+14].Time.UnixMilli()); err != nil {
					b.Fatal(err)
				}
				if err := app.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
