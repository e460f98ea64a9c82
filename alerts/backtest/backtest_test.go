package backtest

import (
	"context"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"
)

// hour0 is a Unix time on the hour, so that scrapes (every 15 s) and
// evaluations (every minute) fall on whole offsets from it.
var hour0 = time.Unix(1_700_000_000-1_700_000_000%3600, 0)

func at(offset time.Duration) time.Time { return hour0.Add(offset) }

// everySecond yields a probe each second of [0, d) from hour0, failed when
// failed says so.
func everySecond(d time.Duration, failed func(offset time.Duration) bool) iter.Seq2[Probe, error] {
	return func(yield func(Probe, error) bool) {
		for off := time.Duration(0); off < d; off += time.Second {
			p := Probe{Time: at(off), Target: "t", Model: "m", TTFT: 50 * time.Millisecond, ITL: 10 * time.Millisecond,
				Latency: time.Second, OK: true, Good: true}
			if failed(off) {
				p.OK, p.Good, p.ITL = false, false, 0
			}
			if !yield(p, nil) {
				return
			}
		}
	}
}

func TestForAndKeepFiringFor(t *testing.T) {
	// Errors from 10m to 15m (the last at 14m59s): the 10m scrape sees the
	// first, so the alert is pending from the 10m evaluation and fires at
	// 12m, after its for of 2m. The 15m scrape sees the last; at 16m the
	// 1m window (15m, 16m] holds no increase, and keep_firing_for holds
	// it until 16m + 3m.
	errors := func(off time.Duration) bool { return off >= 10*time.Minute && off < 15*time.Minute }
	firings, err := Run(context.Background(), everySecond(time.Hour, errors), Options{RuleFiles: []string{"testdata/errors.rules.yml"}})
	if err != nil {
		t.Fatal(err)
	}
	end := at(19 * time.Minute)
	want := []Firing{
		{Alert: "ManySuccesses", Severity: "info", Labels: seriesLabels("ok"), Start: at(2 * time.Minute)},
		{Alert: "Errors", Severity: "critical", Labels: seriesLabels("error"), Start: at(12 * time.Minute), End: &end},
	}
	checkFirings(t, firings, want)
}

// seriesLabels are those of the inferprobe_requests_total series of
// outcome, less the metric name.
func seriesLabels(outcome string) map[string]string {
	return map[string]string{"instance": instanceLabel, "job": jobLabel, "target": "t", "model": "m",
		"scenario": scenarioLabel, "phase": phaseLabel, "outcome": outcome}
}

func checkFirings(t *testing.T, got, want []Firing) {
	t.Helper()
	if !slices.EqualFunc(got, want, equalFiring) {
		t.Errorf("firings:\n%s\nwant:\n%s", formatFirings(got), formatFirings(want))
	}
}

func equalFiring(a, b Firing) bool {
	return a.Alert == b.Alert && a.Severity == b.Severity && a.Start.Equal(b.Start) &&
		(a.End == nil) == (b.End == nil) && (a.End == nil || a.End.Equal(*b.End)) &&
		len(a.Labels) == len(b.Labels) && func() bool {
		for k, v := range a.Labels {
			if b.Labels[k] != v {
				return false
			}
		}
		return true
	}()
}

func formatFirings(fs []Firing) string {
	var b strings.Builder
	for _, f := range fs {
		end := "-"
		if f.End != nil {
			end = f.End.Sub(hour0).String()
		}
		b.WriteString("  " + f.Alert + " " + f.Severity + " " + f.Start.Sub(hour0).String() + " to " + end + "\n")
		for k, v := range f.Labels {
			b.WriteString("    " + k + "=" + v + "\n")
		}
	}
	return b.String()
}

func TestNativeAndClassicIngestion(t *testing.T) {
	never := func(time.Duration) bool { return false }
	for _, classic := range []bool{false, true} {
		firings, err := Run(context.Background(), everySecond(20*time.Minute, never),
			Options{RuleFiles: []string{"testdata/ingest.rules.yml"}, ClassicOnly: classic})
		if err != nil {
			t.Fatal(err)
		}
		var alerts []string
		for _, f := range firings {
			alerts = append(alerts, f.Alert)
		}
		want := []string{"Native"}
		if classic {
			want = []string{"Classic"}
		}
		if !slices.Equal(alerts, want) {
			t.Errorf("classic only %v: %v fired, want %v", classic, alerts, want)
		}
	}
}
