package backtest

import (
	"context"
	"flag"
	"iter"
	"testing"
	"time"
)

var shippedHours = flag.Int("shipped-hours", 4, "hours of synthetic records TestShippedRules runs")

// TestShippedRules runs alerts/inferprobe-rules.yml over a few simulated
// hours, the third of which is an incident.
func TestShippedRules(t *testing.T) {
	probes := withoutErrors(synthetic(hour0, time.Duration(*shippedHours)*time.Hour, 1, 2))
	firings, err := Run(context.Background(), probes, Options{RuleFiles: []string{"../inferprobe-rules.yml"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range firings {
		t.Logf("%s %v from %s", f.Alert, f.Labels, f.Start.UTC().Format(time.TimeOnly))
	}
	if len(firings) == 0 {
		t.Error("an hour of 10 % errors fired nothing")
	}
}

func withoutErrors(probes iter.Seq[Probe]) iter.Seq2[Probe, error] {
	return func(yield func(Probe, error) bool) {
		for p := range probes {
			if !yield(p, nil) {
				return
			}
		}
	}
}
