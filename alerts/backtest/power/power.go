// Package power measures what alert rules can see: it runs them through the backtest over the
// traffic models, unchanged and with regressions injected at known times, and counts the false
// firings and the delay from each regression to the first alert that began while it lasted.
package power

import (
	"context"
	"iter"
	"slices"
	"time"

	"github.com/inferprobe/inferprobe/alerts/backtest"
	"github.com/inferprobe/inferprobe/alerts/backtest/traffic"
)

// Epoch is when every simulated run starts: a Monday, so each run holds its weekends.
var Epoch = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// Injections are Length long and Spacing apart, from an hour after the warm-up to the end of the
// run. A spacing of 10h puts yesterday's same time of day 4h after an earlier injection, outside
// it and the baseline windows around it; a run of two weeks keeps last week's in the unchanged
// first week.
const (
	Length  = 2 * time.Hour
	Spacing = 10 * time.Hour
)

// Run is one backtest: a server at a probe rate, with or without regressions.
type Run struct {
	Server traffic.Server
	Rate   float64 // probes a second
	Seed   uint64
	Kind   traffic.Kind // "" for an unchanged server
	// Factors of the injections, in turn: several measure, in one run and one warm-up, the
	// smallest regression the rules catch.
	Factors []float64
	// Warmup is the unchanged history before anything is judged: the rules' baselines reach a
	// week back. Judged is the time after it.
	Warmup, Judged time.Duration
	ClassicOnly    bool
}

// Regressions are the injections of r.
func (r Run) Regressions() []traffic.Regression {
	if r.Kind == "" {
		return nil
	}
	var regs []traffic.Regression
	end := Epoch.Add(r.Warmup + r.Judged)
	for s := Epoch.Add(r.Warmup + time.Hour); !s.Add(Length).After(end); s = s.Add(Spacing) {
		factor := r.Factors[len(regs)%len(r.Factors)]
		regs = append(regs, traffic.Regression{Kind: r.Kind, Factor: factor, Start: s, Length: Length})
	}
	return regs
}

// Result is what the rules did in one run.
type Result struct {
	Run     Run
	Firings []backtest.Firing
}

// Measure backtests rules over r.
func Measure(ctx context.Context, rules []string, r Run) (Result, error) {
	probes := r.Server.Probes(Epoch, r.Warmup+r.Judged, r.Rate, r.Seed, r.Regressions()...)
	firings, err := backtest.Run(ctx, withNoError(probes), backtest.Options{RuleFiles: rules, ClassicOnly: r.ClassicOnly})
	return Result{Run: r, Firings: firings}, err
}

func withNoError(s iter.Seq[backtest.Probe]) iter.Seq2[backtest.Probe, error] {
	return func(yield func(backtest.Probe, error) bool) {
		for p := range s {
			if !yield(p, nil) {
				return
			}
		}
	}
}

// False returns the firings of severity that began after the warm-up: on an unchanged server,
// every one is false.
func (r Result) False(severity string) []backtest.Firing {
	var out []backtest.Firing
	for _, f := range r.Firings {
		if f.Severity == severity && !f.Start.Before(Epoch.Add(r.Run.Warmup)) {
			out = append(out, f)
		}
	}
	return out
}

// Missed is the delay of an injection that no alert followed.
const Missed = time.Duration(-1)

// Delays returns, for each injection, the delay to the first firing of an alert of one of
// severities that began while it lasted, or Missed.
func (r Result) Delays(severities ...string) []time.Duration {
	var out []time.Duration
	for _, reg := range r.Run.Regressions() {
		d := Missed
		if f, ok := r.first(reg, severities); ok {
			d = f.Start.Sub(reg.Start)
		}
		out = append(out, d)
	}
	return out
}

// first is the first firing of an alert of one of severities that began while reg lasted.
func (r Result) first(reg traffic.Regression, severities []string) (backtest.Firing, bool) {
	var first backtest.Firing
	found := false
	for _, f := range r.Firings {
		if !slices.Contains(severities, f.Severity) || f.Start.Before(reg.Start) || !f.Start.Before(reg.Start.Add(reg.Length)) {
			continue
		}
		if !found || f.Start.Before(first.Start) {
			first, found = f, true
		}
	}
	return first, found
}

// Within counts the delays that are not Missed and at most limit.
func Within(delays []time.Duration, limit time.Duration) int {
	n := 0
	for _, d := range delays {
		if d != Missed && d <= limit {
			n++
		}
	}
	return n
}
