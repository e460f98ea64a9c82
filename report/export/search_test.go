package export

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/capacity"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/stats"
)

// searchOf runs a search whose steps' TTFT p95 is 50 ms up to concurrency
// 8 and 150 ms above, and returns it with its steps as sweep points.
func searchOf(t *testing.T, s capacity.Settings) (*capacity.Result, []SweepPoint) {
	t.Helper()
	p, err := capacity.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	var points []SweepPoint
	r, err := p.Run(context.Background(), time.Time{}, func(_ context.Context, step capacity.Step) (capacity.Metrics, error) {
		ttft := 0.050
		if step.Concurrency > 8 {
			ttft = 0.150
		}
		st := stats.Stats{Count: 100, Avg: ttft, Min: ttft, Max: ttft, P50: ttft, P90: ttft, P95: ttft, P99: ttft,
			Intervals: &stats.Intervals{Level: 0.95, P95: stats.Interval{Low: 0.9 * ttft, High: 1.1 * ttft}}}
		run := Run{Summary: report.Summary{OK: 100, TTFT: st, ITL: st, Latency: st, OutputTokenThroughput: float64(step.Concurrency)}}
		points = append(points, SweepPoint{Params: []SweepParam{{"concurrency", float64(step.Concurrency)}}, Dir: p.Label(step), Run: run})
		return run.Metrics(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return r, points
}

// TestWriteSearch: each style's summary in AIPerf's file and fields, and
// the page with the answer and the curve.
func TestWriteSearch(t *testing.T) {
	for _, tc := range []struct {
		s    capacity.Settings
		file string
		want map[string]any
	}{
		{capacity.Settings{Recipe: "max-concurrency-under-sla", Style: "monotonic", TTFT: 100, Streaming: true, Max: 64}, searchHistoryFile,
			map[string]any{"recipe": "max-concurrency-under-sla", "convergence_reason": "monotonic_precision_reached"}},
		{capacity.Settings{Recipe: "max-concurrency-under-sla", Style: "grid", TTFT: 100, Streaming: true, Max: 64}, filepath.Join(SweepDir, slaBreachFile),
			map[string]any{"max_passing_concurrency": 6.0, "first_failing_concurrency": 11.0, "monotonicity_check": true}},
		{capacity.Settings{Recipe: "concurrency-ramp", Max: 64, DegradationMetric: "time_to_first_token", Streaming: true}, filepath.Join(SweepDir, kneeFile),
			map[string]any{"knee_concurrency": 11.0, "baseline_concurrency": 1.0, "swept_metric": "time_to_first_token"}},
	} {
		r, points := searchOf(t, tc.s)
		dir := t.TempDir()
		if err := WriteSearch(dir, r, points); err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		b, err := os.ReadFile(filepath.Join(dir, tc.file))
		if err == nil {
			err = json.Unmarshal(b, &doc)
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.s.Style, err)
		}
		for k, v := range tc.want {
			if doc[k] != v {
				t.Errorf("%s %s: %s = %v, want %v", tc.s.Recipe, tc.file, k, doc[k], v)
			}
		}
		page, err := os.ReadFile(filepath.Join(dir, searchHTMLFile))
		if err != nil || !strings.Contains(string(page), "<svg") || !strings.Contains(string(page), template.HTMLEscapeString(Answer(r))) {
			t.Errorf("%s %s: report.html without the chart or the answer: %v", tc.s.Recipe, tc.s.Style, err)
		}
	}
	r, _ := searchOf(t, capacity.Settings{Recipe: "max-concurrency-under-sla", Style: "monotonic", TTFT: 100, Streaming: true, Max: 64})
	h := searchHistory(r)
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Boundary struct {
			FeasibleMax   struct{ Value int } `json:"feasible_max"`
			InfeasibleMin struct {
				Value       int
				FirstBreach struct {
					Metric   string  `json:"metric_tag"`
					Observed float64 `json:"observed"`
				} `json:"first_breach"`
			} `json:"infeasible_min"`
		} `json:"boundary_summary"`
		Best []struct {
			Values map[string]int `json:"variation_values"`
		} `json:"best_trials"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if bd := doc.Boundary; bd.FeasibleMax.Value != 8 || bd.InfeasibleMin.Value != 9 || bd.InfeasibleMin.FirstBreach.Metric != "time_to_first_token" || bd.InfeasibleMin.FirstBreach.Observed != 150 {
		t.Errorf("boundary %+v, want 8, then 9 breaching TTFT at 150", bd)
	}
	if len(doc.Best) != 1 || doc.Best[0].Values[sweptPath] != 8 {
		t.Errorf("best trials %+v, want the feasible step with the most throughput, 8", doc.Best)
	}
}

// TestSearchHistoryBoundary: smooth_isotonic's boundary_summary has
// AIPerf's boundary_type, binding_constraint and, after replicates,
// boundary_ci; the answer names a cliff and the interval.
func TestSearchHistoryBoundary(t *testing.T) {
	r, _ := searchOf(t, capacity.Settings{Recipe: "max-concurrency-under-sla", TTFT: 100, Streaming: true, Max: 64})
	boundary := func() map[string]any {
		b, err := json.Marshal(searchHistory(r))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Boundary map[string]any `json:"boundary_summary"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Boundary
	}
	if b := boundary(); b["boundary_type"] != "smooth" || b["binding_constraint"] != "0:time_to_first_token.p95.lt.100.0" || b["boundary_ci"] != nil {
		t.Errorf("smooth search: boundary_summary %v", b)
	}
	r.Boundary = &capacity.Boundary{Type: "cliff", BindingConstraint: "0:time_to_first_token.p95.lt.100.0", CI: &[2]float64{-3, -1}}
	if b := boundary(); b["boundary_type"] != "cliff" || fmt.Sprint(b["boundary_ci"]) != "map[hi:-1 lo:-3]" {
		t.Errorf("cliff with an interval: boundary_summary %v", b)
	}
	if a := Answer(r); !strings.Contains(a, "a CLIFF") || !strings.Contains(a, "within [-3, -1] (95 %)") {
		t.Errorf("answer %q: no cliff or interval", a)
	}
}

// TestConsoleSearch: a row per step with the SLA's statistic and its
// interval, the SLA, and the answer with the bracket.
func TestConsoleSearch(t *testing.T) {
	r, points := searchOf(t, capacity.Settings{Recipe: "max-concurrency-under-sla", Style: "monotonic", TTFT: 100, Streaming: true, Max: 64})
	var out strings.Builder
	ConsoleSearch(&out, r, points)
	for _, want := range []string{
		"50.00 [45.00, 55.00] feasible", "150.00 [135.00, 165.00] INFEASIBLE",
		"SLA: every step must have time_to_first_token p95 lt 100",
		"Answer: capacity 8: the last feasible step", "first infeasible: step", "concurrency 9, time_to_first_token p95 150.00, SLA lt 100 (monotonic_precision_reached)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, out.String())
		}
	}
}

// TestAnswerRamp: a ramp without an SLA answers with its knee alone.
func TestAnswerRamp(t *testing.T) {
	r, _ := searchOf(t, capacity.Settings{Recipe: "concurrency-ramp", Max: 64, DegradationMetric: "time_to_first_token", Streaming: true})
	if got, want := Answer(r), "knee at concurrency 11: time_to_first_token p99 150.00 > 50.00 × 1.20 (grid_complete)"; got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
}
