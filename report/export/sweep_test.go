package export

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/stats"
)

func sweepPoints() []SweepPoint {
	point := func(c float64, thru, ttft float64, failed string) SweepPoint {
		st := stats.Stats{Count: 10, Avg: ttft, Min: ttft, Max: ttft, P50: ttft, P90: ttft, P99: ttft}
		return SweepPoint{
			Params: []SweepParam{{"concurrency", c}}, Dir: fmt.Sprintf("concurrency_%g", c),
			Run:    Run{Summary: report.Summary{OK: 10, TTFT: st, ITL: st, Latency: st, RequestThroughput: thru, OutputTokenThroughput: 100 * thru}},
			Failed: failed,
		}
	}
	return []SweepPoint{point(1, 10, 0.020, ""), point(4, 35, 0.025, ""), point(16, 30, 0.090, ""), point(64, 0, 0, "all 10 requests failed")}
}

// TestSweepJSON: AIPerf's sweep layout, with the failed point listed apart,
// the best points, and the Pareto front of throughput against TTFT p99.
func TestSweepJSON(t *testing.T) {
	b, err := SweepJSON(sweepPoints())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Type       string `json:"aggregation_type"`
		Runs       int    `json:"num_profile_runs"`
		Successful int    `json:"num_successful_runs"`
		Failed     []struct {
			Parameters map[string]any `json:"parameters"`
			Error      string         `json:"error"`
		} `json:"failed_runs"`
		Metadata struct {
			Params []struct {
				Name   string    `json:"name"`
				Values []float64 `json:"values"`
			} `json:"sweep_parameters"`
			Combinations int `json:"num_combinations"`
		} `json:"metadata"`
		PerCombination []struct {
			Parameters map[string]any            `json:"parameters"`
			Metrics    map[string]map[string]any `json:"metrics"`
		} `json:"per_combination_metrics"`
		Best   map[string]struct{ Parameters map[string]float64 } `json:"best_configurations"`
		Pareto []map[string]float64                               `json:"pareto_optimal"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if doc.Type != "sweep" || doc.Runs != 4 || doc.Successful != 3 || len(doc.Failed) != 1 || doc.Failed[0].Error != "all 10 requests failed" {
		t.Errorf("runs: %+v", doc)
	}
	if len(doc.Metadata.Params) != 1 || doc.Metadata.Params[0].Name != "concurrency" || len(doc.Metadata.Params[0].Values) != 4 || doc.Metadata.Combinations != 4 {
		t.Errorf("metadata: %+v", doc.Metadata)
	}
	if len(doc.PerCombination) != 3 || doc.PerCombination[1].Metrics["time_to_first_token_p99"]["mean"] != 25.0 ||
		doc.PerCombination[1].Metrics["request_throughput_avg"]["unit"] != "requests/sec" {
		t.Errorf("per-combination metrics: %+v", doc.PerCombination)
	}
	if doc.Best["best_throughput"].Parameters["concurrency"] != 4 || doc.Best["best_latency_p99"].Parameters["concurrency"] != 1 {
		t.Errorf("best: %+v", doc.Best)
	}
	// 16 has less throughput and more latency than 4: dominated.
	if len(doc.Pareto) != 2 || doc.Pareto[0]["concurrency"] != 1 || doc.Pareto[1]["concurrency"] != 4 {
		t.Errorf("pareto: %+v", doc.Pareto)
	}
}

// TestSweepHTML: the page plots throughput against TTFT and ITL with gonum
// as inline SVG, lists every point, and has no script.
func TestSweepHTML(t *testing.T) {
	b, err := SweepHTML(sweepPoints())
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if n := strings.Count(page, "<svg"); n != 2 {
		t.Errorf("%d charts, want 2 (TTFT, ITL)", n)
	}
	for _, want := range []string{"TTFT p99", "ITL p50", "time_to_first_token (ms)", "Markers are labelled with concurrency.", "concurrency=16", "failed: all 10 requests failed", `href="../concurrency_4/report.html"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(strings.ToLower(page), "<script") {
		t.Error("the page has a script")
	}
}
