package power

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/alerts/backtest/traffic"
)

// shippedRules is the rule file inferprobe ships.
var shippedRules = filepath.Join("..", "..", "inferprobe-rules.yml")

func model(t *testing.T, name string) traffic.Server {
	t.Helper()
	for _, s := range append(traffic.Models(), traffic.HeldOut()...) {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no traffic model %q", name)
	return traffic.Server{}
}

// TestShippedRulesMeetTargets backtests the shipped rules against the targets the power table is
// held to: no critical firing on an unchanged server (the queueing model at 1 probe/s, the
// held-out bimodal one at 0.2), a 30 % slowdown, a doubling and 10 % errors paged at the lowest
// supported probe rate within 30, 20 and 10 minutes on the queueing model, the slowdown on the
// held-out bimodal model too, and a tail-only regression seen within 2 hours at 1 probe/s. Short runs (a day of
// warm-up, so the alerts judge against yesterday alone, and a day judged), to fit CI; `make
// alert-power` measures the whole table. Minutes of CPU: only with INFERPROBE_BACKTEST=1 (make
// backtest-test).
func TestShippedRulesMeetTargets(t *testing.T) {
	if os.Getenv("INFERPROBE_BACKTEST") != "1" {
		t.Skip("minutes of CPU; set INFERPROBE_BACKTEST=1 (make backtest-test does)")
	}
	const day = 24 * time.Hour
	cases := []struct {
		name     string
		model    string
		run      Run
		severity []string
		within   time.Duration
	}{
		{"unchanged at 1/s", "queueing", Run{Rate: 1}, nil, 0},
		{"unchanged at 0.2/s, held out", "bimodal", Run{Rate: 0.2}, nil, 0},
		{"30% slower at 0.2/s", "queueing", Run{Rate: 0.2, Kind: traffic.Slower, Factors: []float64{1.3}}, []string{"critical"}, 30 * time.Minute},
		{"2x slower at 0.2/s", "queueing", Run{Rate: 0.2, Kind: traffic.Slower, Factors: []float64{2}}, []string{"critical"}, 20 * time.Minute},
		{"30% slower at 0.2/s, held out", "bimodal", Run{Rate: 0.2, Kind: traffic.Slower, Factors: []float64{1.3}}, []string{"critical"}, 30 * time.Minute},
		{"10% errors at 0.2/s", "queueing", Run{Rate: 0.2, Kind: traffic.Errors, Factors: []float64{0.1}}, []string{"critical"}, 10 * time.Minute},
		{"tail only at 1/s", "queueing", Run{Rate: 1, Kind: traffic.TailOnly, Factors: []float64{2}}, []string{"critical", "warning"}, 2 * time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := c.run
			r.Server, r.Seed, r.Warmup, r.Judged = model(t, c.model), 7, day, day
			res, err := Measure(context.Background(), []string{shippedRules}, r)
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind == "" {
				if f := res.False("critical"); len(f) > 0 {
					t.Errorf("%d critical firings on an unchanged server: %+v", len(f), f)
				}
				return
			}
			delays := res.Delays(c.severity...)
			if len(delays) == 0 {
				t.Fatal("no injection")
			}
			if n := Within(delays, c.within); n < len(delays) {
				t.Errorf("%d of %d injections alerted within %s; delays %v (-1ns: missed)", n, len(delays), c.within, delays)
			}
		})
	}
}
