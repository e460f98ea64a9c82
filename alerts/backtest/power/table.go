package power

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/inferprobe/inferprobe/alerts/backtest"
	"github.com/inferprobe/inferprobe/alerts/backtest/traffic"
)

// Summary is one run's outcome for one factor, as the power table file keeps it.
type Summary struct {
	Model       string  `json:"model"`
	Rate        float64 `json:"rate"`
	Kind        string  `json:"kind,omitempty"`
	Factor      float64 `json:"factor,omitempty"`
	ClassicOnly bool    `json:"classic_only,omitempty"`
	JudgedHours float64 `json:"judged_hours"`
	// Firings on an unchanged server.
	FalseCritical int `json:"false_critical"`
	FalseWarning  int `json:"false_warning"`
	// Minutes from each injection of Factor to the first critical alert, and to the first alert
	// of any severity; -1 when none began while it lasted.
	CriticalDelays []float64 `json:"critical_delays_min,omitempty"`
	AnyDelays      []float64 `json:"any_delays_min,omitempty"`
	// CaughtBy names the alerts that were the first of any severity after an injection.
	CaughtBy []string `json:"caught_by,omitempty"`
	// Traffic is the traffic.Version the run was measured on.
	Traffic int `json:"traffic"`
}

// Summaries reduce r to a Summary per factor of its injections, in the order of Run.Factors.
func (r Result) Summaries() []Summary {
	base := Summary{
		Model: r.Run.Server.Name, Rate: r.Run.Rate, Kind: string(r.Run.Kind),
		ClassicOnly: r.Run.ClassicOnly, JudgedHours: r.Run.Judged.Hours(), Traffic: traffic.Version,
	}
	if r.Run.Kind == "" {
		base.FalseCritical, base.FalseWarning = len(r.False("critical")), len(r.False("warning"))
		return []Summary{base}
	}
	minutes := func(f backtest.Firing, ok bool, reg traffic.Regression) float64 {
		if !ok {
			return -1
		}
		return f.Start.Sub(reg.Start).Minutes()
	}
	var out []Summary
	for _, factor := range r.Run.Factors {
		if slices.ContainsFunc(out, func(s Summary) bool { return s.Factor == factor }) {
			continue
		}
		s := base
		s.Factor = factor
		for _, reg := range r.Run.Regressions() {
			if reg.Factor != factor {
				continue
			}
			crit, ok := r.first(reg, []string{"critical"})
			s.CriticalDelays = append(s.CriticalDelays, minutes(crit, ok, reg))
			first, ok := r.first(reg, []string{"critical", "warning"})
			s.AnyDelays = append(s.AnyDelays, minutes(first, ok, reg))
			if ok && !slices.Contains(s.CaughtBy, first.Alert) {
				s.CaughtBy = append(s.CaughtBy, first.Alert)
			}
		}
		slices.Sort(s.CaughtBy)
		out = append(out, s)
	}
	return out
}

// newest keeps, of the summaries of each run's settings, those of the newest traffic version:
// a row measured again on changed models replaces the earlier one, while rows of one version
// add up (more days judged, more injections).
func newest(summaries []Summary) []Summary {
	type key struct {
		model, kind string
		rate        float64
		factor      float64
		classic     bool
	}
	k := func(s Summary) key { return key{s.Model, s.Kind, s.Rate, s.Factor, s.ClassicOnly} }
	latest := map[key]int{}
	for _, s := range summaries {
		latest[k(s)] = max(latest[k(s)], s.Traffic)
	}
	var out []Summary
	for _, s := range summaries {
		if s.Traffic == latest[k(s)] {
			out = append(out, s)
		}
	}
	return out
}

// ReadSummaries reads a power table file: one Summary a line.
func ReadSummaries(r io.Reader) ([]Summary, error) {
	var out []Summary
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var s Summary
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// A column of the power table: a regression, the severities that count, and the time within
// which the targets ask for an alert.
type column struct {
	title      string
	kind       string
	factor     float64
	severities string // "critical" or "any"
	limit      time.Duration
}

var columns = []column{
	{"×1.3 slower: critical ≤ 30m", "slower", 1.3, "critical", 30 * time.Minute},
	{"×2 slower: critical ≤ 20m", "slower", 2, "critical", 20 * time.Minute},
	{"tail ×2 (median same): any ≤ 2h", "tail", 2, "any", 2 * time.Hour},
	{"ITL ×1.3: critical ≤ 30m", "itl", 1.3, "critical", 30 * time.Minute},
	{"errors 10 %: critical ≤ 10m", "errors", 0.1, "critical", 10 * time.Minute},
}

// Table renders summaries as the markdown table of alerts/README.md: a row per probe rate,
// traffic model and kind of Prometheus, the false firings on the unchanged server and, per
// regression, how many of the injections an alert followed within the target's time, with the
// median delay. Rows of the held-out models come after the tuning models' at each rate.
func Table(summaries []Summary) string {
	type key struct {
		rate    float64
		heldOut bool
		model   string
		classic bool
	}
	heldOut := map[string]bool{}
	for _, s := range traffic.HeldOut() {
		heldOut[s.Name] = true
	}
	rows := map[key][]Summary{}
	for _, s := range newest(summaries) {
		k := key{s.Rate, heldOut[s.Model], s.Model, s.ClassicOnly}
		rows[k] = append(rows[k], s)
	}
	keys := make([]key, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.rate, b.rate), compareBool(a.heldOut, b.heldOut), cmp.Compare(a.model, b.model), compareBool(a.classic, b.classic))
	})

	var b strings.Builder
	b.WriteString("| probes/s | model | false critical / warning (days judged) |")
	for _, c := range columns {
		b.WriteString(" " + c.title + " |")
	}
	b.WriteString("\n|---|---|---|")
	b.WriteString(strings.Repeat("---|", len(columns)))
	b.WriteString("\n")
	for _, k := range keys {
		model := k.model
		if k.heldOut {
			model += " (held out)"
		}
		if k.classic {
			model += ", classic buckets only"
		}
		fmt.Fprintf(&b, "| %g | %s | %s |", k.rate, model, falseCell(rows[k]))
		for _, c := range columns {
			b.WriteString(" " + delayCell(rows[k], c) + " |")
		}
		b.WriteString("\n")
	}
	return withOldNote(b.String())
}

// withOldNote adds to table, when it marks anything, what the mark means.
func withOldNote(table string) string {
	if !strings.Contains(table, oldSign) {
		return table
	}
	return table + fmt.Sprintf("\n%s measured on an earlier version of the traffic models than %d (the `traffic` of its line in power.jsonl), not yet measured again.\n", oldSign, traffic.Version)
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func falseCell(runs []Summary) string {
	crit, warn, hours, any, old := 0, 0, 0.0, false, false
	for _, s := range runs {
		if s.Kind == "" {
			crit, warn, hours, any = crit+s.FalseCritical, warn+s.FalseWarning, hours+s.JudgedHours, true
			old = old || s.Traffic < traffic.Version
		}
	}
	if !any {
		return "not run"
	}
	return fmt.Sprintf("%d / %d (%g)", crit, warn, hours/24) + oldMark(old)
}

// oldMark marks what was measured on an earlier version of the traffic models.
func oldMark(old bool) string {
	if old {
		return " " + oldSign
	}
	return ""
}

const oldSign = "†"

func delayCell(runs []Summary, c column) string {
	var delays []float64
	old := false
	for _, s := range runs {
		if s.Kind == c.kind && s.Factor == c.factor {
			old = old || s.Traffic < traffic.Version
			if c.severities == "critical" {
				delays = append(delays, s.CriticalDelays...)
			} else {
				delays = append(delays, s.AnyDelays...)
			}
		}
	}
	if len(delays) == 0 {
		return "not run"
	}
	var caught []float64
	for _, d := range delays {
		if d >= 0 && d <= c.limit.Minutes() {
			caught = append(caught, d)
		}
	}
	if len(caught) == 0 {
		return fmt.Sprintf("0/%d", len(delays)) + oldMark(old)
	}
	slices.Sort(caught)
	return fmt.Sprintf("%d/%d, median %.0fm", len(caught), len(delays), caught[len(caught)/2]) + oldMark(old)
}

// SweepModel is the traffic model whose runs of several factors give the smallest regression
// caught: the tuning model the rules were designed on.
const SweepModel = "queueing"

// A row kind of the smallest-regression table, and how its factor reads.
var sweepKinds = []struct {
	kind, title string
	factor      func(float64) string
}{
	{"slower", "TTFT and ITL ×k (request duration too)", times},
	{"ttft", "TTFT only ×k", times},
	{"itl", "ITL only ×k", times},
	{"tail", "queueing tail ×k as frequent and as long", times},
	{"errors", "a share k of requests failing", func(k float64) string { return fmt.Sprintf("%g %%", 100*k) }},
}

func times(k float64) string { return fmt.Sprintf("×%g", k) }

// caughtShare is the share of a factor's injections an alert must follow in time for the
// factor to count as caught: the targets' 95 %.
const caughtShare = 0.95

// SmallestTable renders the second table of alerts/README.md: per probe rate and regression, on
// SweepModel with native histograms, the smallest factor from which every larger factor tried
// was caught (an alert within the time, after 95 % of its injections), by a critical alert
// within 30 minutes and by any alert within 2 hours; the factors tried, and the alerts that
// fired first.
func SmallestTable(summaries []Summary) string {
	type key struct {
		rate float64
		kind string
	}
	byKey := map[key][]Summary{}
	var rates []float64
	for _, s := range newest(summaries) {
		if s.Model != SweepModel || s.ClassicOnly || s.Kind == "" {
			continue
		}
		k := key{s.Rate, s.Kind}
		byKey[k] = append(byKey[k], s)
		if !slices.Contains(rates, s.Rate) {
			rates = append(rates, s.Rate)
		}
	}
	slices.Sort(rates)
	var b strings.Builder
	b.WriteString("| probes/s | regression | smallest caught: critical ≤ 30m | smallest caught: any ≤ 2h | factors tried (injections each) | first to fire |\n|---|---|---|---|---|---|\n")
	for _, rate := range rates {
		for _, sk := range sweepKinds {
			runs := byKey[key{rate, sk.kind}]
			if len(runs) == 0 {
				continue
			}
			slices.SortFunc(runs, func(a, b Summary) int { return cmp.Compare(a.Factor, b.Factor) })
			var tried, by []string
			for _, s := range runs {
				tried = append(tried, fmt.Sprintf("%s (%d)", sk.factor(s.Factor), len(s.AnyDelays))+oldMark(s.Traffic < traffic.Version))
				for _, a := range s.CaughtBy {
					if !slices.Contains(by, a) {
						by = append(by, a)
					}
				}
			}
			slices.Sort(by)
			smallest := func(delays func(Summary) []float64, limit time.Duration) string {
				answer := "> " + sk.factor(runs[len(runs)-1].Factor)
				for i := len(runs) - 1; i >= 0; i-- {
					d := delays(runs[i])
					caught := 0
					for _, m := range d {
						if m >= 0 && m <= limit.Minutes() {
							caught++
						}
					}
					if float64(caught) < caughtShare*float64(len(d)) {
						break
					}
					answer = sk.factor(runs[i].Factor)
				}
				return answer
			}
			crit := smallest(func(s Summary) []float64 { return s.CriticalDelays }, 30*time.Minute)
			anyAlert := smallest(func(s Summary) []float64 { return s.AnyDelays }, 2*time.Hour)
			fmt.Fprintf(&b, "| %g | %s | %s | %s | %s | %s |\n", rate, sk.title, crit, anyAlert, strings.Join(tried, ", "), strings.Join(by, ", "))
		}
	}
	return withOldNote(b.String())
}
