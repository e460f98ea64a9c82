package power

import (
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/alerts/backtest"
	"github.com/inferprobe/inferprobe/alerts/backtest/traffic"
)

// TestSummariesPerFactor: a run of several factors injects them in turn and summarizes each
// factor's injections alone, naming the alert that fired first.
func TestSummariesPerFactor(t *testing.T) {
	run := Run{Server: traffic.Server{Name: SweepModel}, Rate: 1, Kind: traffic.Slower, Factors: []float64{1.1, 1.3},
		Warmup: 24 * time.Hour, Judged: 40 * time.Hour}
	regs := run.Regressions()
	if len(regs) != 4 || regs[0].Factor != 1.1 || regs[1].Factor != 1.3 || regs[2].Factor != 1.1 {
		t.Fatalf("injections %+v, want 4 taking 1.1 and 1.3 in turn", regs)
	}
	// Every ×1.3 injection is paged after 12 minutes, preceded by a warning; ×1.1 only warned
	// once, after 90 minutes, which is past the injection's end.
	var firings []backtest.Firing
	for _, r := range regs {
		if r.Factor == 1.3 {
			firings = append(firings,
				backtest.Firing{Alert: "Tail", Severity: "warning", Start: r.Start.Add(5 * time.Minute)},
				backtest.Firing{Alert: "Step", Severity: "critical", Start: r.Start.Add(12 * time.Minute)})
		}
	}
	firings = append(firings, backtest.Firing{Alert: "Late", Severity: "warning", Start: regs[0].Start.Add(3 * time.Hour)})
	got := Result{Run: run, Firings: firings}.Summaries()
	if len(got) != 2 {
		t.Fatalf("%d summaries, want one per factor: %+v", len(got), got)
	}
	low, high := got[0], got[1]
	if low.Factor != 1.1 || len(low.CriticalDelays) != 2 || low.CriticalDelays[0] != -1 || low.AnyDelays[1] != -1 || low.CaughtBy != nil {
		t.Errorf("×1.1: %+v, want two injections missed", low)
	}
	if high.Factor != 1.3 || high.CriticalDelays[0] != 12 || high.AnyDelays[1] != 5 || strings.Join(high.CaughtBy, ",") != "Tail" {
		t.Errorf("×1.3: %+v, want paged after 12m, warned after 5m by Tail", high)
	}

	table := SmallestTable(append(got, Summary{Model: "bimodal", Rate: 1, Kind: "slower", Factor: 1.05, CriticalDelays: []float64{1}, AnyDelays: []float64{1}}))
	if !strings.Contains(table, "| 1 | TTFT and ITL ×k (request duration too) | ×1.3 | ×1.3 | ×1.1 (2), ×1.3 (2) | Tail |") {
		t.Errorf("smallest-regression table:\n%s\nwant ×1.3 the smallest caught, of ×1.1 and ×1.3 on %s only", table, SweepModel)
	}
}

// TestSmallestTableNeedsEveryLargerFactor: a factor counts as caught only if every larger factor
// tried was caught too, so one lucky small factor does not set the answer.
func TestSmallestTableNeedsEveryLargerFactor(t *testing.T) {
	caught, missed := []float64{10, 20}, []float64{10, -1}
	table := SmallestTable([]Summary{
		{Model: SweepModel, Rate: 0.2, Kind: "errors", Factor: 0.01, CriticalDelays: caught, AnyDelays: caught},
		{Model: SweepModel, Rate: 0.2, Kind: "errors", Factor: 0.03, CriticalDelays: missed, AnyDelays: caught},
		{Model: SweepModel, Rate: 0.2, Kind: "errors", Factor: 0.1, CriticalDelays: caught, AnyDelays: caught},
		{Model: SweepModel, Rate: 0.2, Kind: "tail", Factor: 2, CriticalDelays: missed, AnyDelays: missed},
	})
	for _, row := range []string{"| 0.2 | a share k of requests failing | 10 % | 1 % |", "| 0.2 | queueing tail ×k as frequent and as long | > ×2 | > ×2 |"} {
		if !strings.Contains(table, row) {
			t.Errorf("smallest-regression table:\n%s\nwant a row starting %q", table, row)
		}
	}
}
