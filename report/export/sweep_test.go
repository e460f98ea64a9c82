package export

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
			Label      string         `json:"label"`
			Parameters map[string]any `json:"parameters"`
			Error      string         `json:"error"`
		} `json:"failed_runs"`
		Metadata struct {
			Params []struct {
				Name   string    `json:"name"`
				Values []float64 `json:"values"`
			} `json:"sweep_parameters"`
			Combinations int     `json:"num_combinations"`
			Mode         string  `json:"sweep_mode"`
			Level        float64 `json:"confidence_level"`
			Trials       int     `json:"num_trials_per_value"`
			Type         string  `json:"aggregation_type"`
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
	if doc.Type != "sweep" || doc.Runs != 4 || doc.Successful != 3 || len(doc.Failed) != 1 ||
		doc.Failed[0].Error != "all 10 requests failed" || doc.Failed[0].Label != "run_0001" {
		t.Errorf("runs: %+v", doc)
	}
	if m := doc.Metadata; len(m.Params) != 1 || m.Params[0].Name != "concurrency" || len(m.Params[0].Values) != 4 || m.Combinations != 4 ||
		m.Mode != "repeated" || m.Level != 0.95 || m.Trials != 1 || m.Type != "sweep" {
		t.Errorf("metadata: %+v", doc.Metadata)
	}
	// AIPerf's one-trial cell: each metric by tag, its statistics beside
	// the mean and no spread.
	if len(doc.PerCombination) != 3 {
		t.Fatalf("per-combination metrics: %+v", doc.PerCombination)
	}
	ttft, thru := doc.PerCombination[1].Metrics["time_to_first_token"], doc.PerCombination[1].Metrics["request_throughput"]
	if ttft["mean"] != 25.0 || ttft["avg"] != 25.0 || ttft["p99"] != 25.0 || ttft["std"] != 0.0 || ttft["cv"] != 0.0 ||
		ttft["ci_low"] != 25.0 || ttft["count"] != 10.0 || ttft["unit"] != "ms" {
		t.Errorf("TTFT cell %v", ttft)
	}
	if thru["mean"] != 35.0 || thru["min"] != 35.0 || thru["max"] != 35.0 || thru["unit"] != "requests/sec" || thru["p99"] != nil {
		t.Errorf("throughput cell %v: a single value has mean, min and max, no percentiles", thru)
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

// TestMultiRunSweepLayout: a multi-run sweep is written as AIPerf 0.13
// writes one in each --parameter-sweep-mode: each point's confidence
// aggregate in aggregate/POINT/ (repeated) or POINT/aggregate/
// (independent), stamped with AIPerf's variation label, values and sweep
// mode, and the sweep's summary in aggregate/sweep_aggregate/ (repeated)
// or sweep_aggregate/, each point's metrics the statistics across its
// runs with their t intervals, every failed run listed, and the pages'
// links pointing at the runs' and points' reports.
func TestMultiRunSweepLayout(t *testing.T) {
	for _, tc := range []struct {
		mode, aggregate, summary, run, runLink, pointLink string
	}{
		{SweepRepeated, "aggregate/concurrency_4", "aggregate/sweep_aggregate", "profile_runs/trial_0003/concurrency_4",
			"../../profile_runs/trial_0003/concurrency_4/report.html", "../../aggregate/concurrency_2/report.html"},
		{SweepIndependent, "concurrency_4/aggregate", "sweep_aggregate", "concurrency_4/profile_runs/trial_0003",
			"../../concurrency_4/profile_runs/trial_0003/report.html", "../concurrency_2/aggregate/report.html"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			checkMultiRunSweep(t, tc.mode, tc.aggregate, tc.summary, tc.run, tc.runLink, tc.pointLink)
		})
	}
}

func checkMultiRunSweep(t *testing.T, mode, aggregateDir, summaryDir, runDir, runLink, pointLink string) {
	dir := t.TempDir()
	var points []SweepPoint
	for j, c := range []float64{2, 4} {
		p := SweepPoint{Params: []SweepParam{{"concurrency", c}}, Dir: fmt.Sprintf("concurrency_%g", c)}
		m := MultiRun{Level: .9, Point: &SweepPoint{Params: p.Params, Dir: p.Dir}, Mode: mode}
		for i, ms := range []float64{10, 12, 14} {
			failed := ""
			if j == 1 && i == 2 {
				failed = "all 10 requests failed"
			}
			tr, err := NewTrial(i, TrialDir(i, p.Dir, mode), trialRun(t, 10, constTTFT(ms*float64(j+1))), failed)
			if err != nil {
				t.Fatal(err)
			}
			m.Trials = append(m.Trials, tr)
		}
		if err := WriteAggregate(dir, m); err != nil {
			t.Fatal(err)
		}
		p.Runs = &m
		points = append(points, p)
	}
	if err := WriteSweep(dir, points); err != nil {
		t.Fatal(err)
	}

	var agg struct {
		Metadata struct {
			Label     string         `json:"variation_label"`
			Values    map[string]int `json:"variation_values"`
			Mode      string         `json:"sweep_mode"`
			RunLabels []string       `json:"run_labels"`
		} `json:"metadata"`
		Metrics map[string]struct{ Mean float64 } `json:"metrics"`
	}
	b, err := os.ReadFile(filepath.Join(dir, aggregateDir, "profile_export_aiperf_aggregate.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &agg); err != nil {
		t.Fatal(err)
	}
	if md := agg.Metadata; md.Label != "phases.profiling.concurrency=4" || md.Values["phases.profiling.concurrency"] != 4 || len(md.Values) != 1 ||
		md.Mode != mode || strings.Join(md.RunLabels, " ") != "run_0001 run_0002" || !near(agg.Metrics["time_to_first_token_avg"].Mean, 22) {
		t.Errorf("concurrency_4's aggregate: %+v", agg)
	}
	page, err := os.ReadFile(filepath.Join(dir, aggregateDir, "report.html"))
	if err != nil || !strings.Contains(string(page), `href="`+runLink+`"`) {
		t.Errorf("concurrency_4's page does not link its third run at %s (%v)", runLink, err)
	}

	var sweep struct {
		Runs       int `json:"num_profile_runs"`
		Successful int `json:"num_successful_runs"`
		Failed     []struct {
			Label      string         `json:"label"`
			Parameters map[string]int `json:"parameters"`
			Dir        string         `json:"artifact_directory"`
		} `json:"failed_runs"`
		Metadata struct {
			Mode   string  `json:"sweep_mode"`
			Level  float64 `json:"confidence_level"`
			Trials int     `json:"num_trials_per_value"`
		} `json:"metadata"`
		PerCombination []struct {
			Parameters map[string]int `json:"parameters"`
			Dir        string         `json:"artifact_directory"`
			Metrics    map[string]struct {
				Mean, Std, Min, Max float64
				Low                 float64 `json:"ci_low"`
				High                float64 `json:"ci_high"`
			} `json:"metrics"`
		} `json:"per_combination_metrics"`
	}
	b, err = os.ReadFile(filepath.Join(dir, summaryDir, "profile_export_aiperf_sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sweep); err != nil {
		t.Fatal(err)
	}
	if sweep.Runs != 6 || sweep.Successful != 5 || len(sweep.Failed) != 1 || sweep.Failed[0].Label != "run_0003" ||
		sweep.Failed[0].Parameters["concurrency"] != 4 || sweep.Failed[0].Dir != filepath.FromSlash(runDir) ||
		sweep.Metadata.Mode != mode || sweep.Metadata.Level != .9 || sweep.Metadata.Trials != 3 || len(sweep.PerCombination) != 2 {
		t.Errorf("sweep summary: %+v", sweep)
	}
	for i, c := range sweep.PerCombination {
		ttft := c.Metrics["time_to_first_token_avg"]
		mean := []float64{12, 22}[i]
		want := strings.Replace(aggregateDir, "4", strconv.Itoa(c.Parameters["concurrency"]), 1)
		if c.Dir != filepath.FromSlash(want) || !near(ttft.Mean, mean) || !(ttft.Low < mean && mean < ttft.High) || ttft.Std == 0 {
			t.Errorf("point %v: %s, TTFT %+v; want %s and the mean %g of its runs inside its interval", c.Parameters, c.Dir, ttft, want, mean)
		}
	}
	if other := map[string]string{SweepRepeated: SweepDir, SweepIndependent: "aggregate"}[mode]; other != summaryDir {
		if _, err := os.Stat(filepath.Join(dir, other)); !os.IsNotExist(err) {
			t.Errorf("%s/ written too: %v", other, err)
		}
	}
	page, err = os.ReadFile(filepath.Join(dir, summaryDir, "sweep_report.html"))
	if err != nil || !strings.Contains(string(page), `href="`+pointLink+`"`) {
		t.Errorf("the sweep's page does not link concurrency_2's aggregate at %s (%v)", pointLink, err)
	}
}

// TestSweepCSV: AIPerf 0.13's sweep CSV: a row per successful point with
// every metric's mean, std, min, max and cv, then its three sections.
func TestSweepCSV(t *testing.T) {
	b, err := SweepCSV(sweepPoints())
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	lines := strings.Split(text, "\r\n")
	head := strings.Split(lines[0], ",")
	var tags []string
	for i := 1; i < len(head); i += 5 {
		tags = append(tags, strings.TrimSuffix(head[i], "_mean"))
	}
	if head[0] != "concurrency" || !slices.Contains(head, "request_throughput_mean") || !slices.Contains(head, "time_to_first_token_cv") ||
		!slices.IsSorted(tags) || (len(head)-1)%5 != 0 {
		t.Errorf("header %v", head)
	}
	i := slices.Index(head, "request_throughput_mean")
	if row := strings.Split(lines[2], ","); row[0] != "4" || row[i] != "35.00" || row[i+4] != "0.0000" {
		t.Errorf("row %v; want concurrency 4, 35.00 requests/s, cv 0.0000", row)
	}
	for _, want := range []string{
		"\r\n\r\nBest Configurations\r\nConfiguration,concurrency,Metric,Unit\r\nBest Throughput,4,35.00,requests/sec\r\nBest Latency P99,1,20.00,ms\r\n",
		"\r\n\r\nPareto Optimal Points\r\nconcurrency\r\n1\r\n4\r\n",
		"\r\n\r\nMetadata\r\nField,Value\r\nAggregation Type,sweep\r\nSweep Parameters,concurrency\r\nNumber of Combinations,4\r\n" +
			"Number of Profile Runs,4\r\nNumber of Successful Runs,3\r\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("CSV lacks %q:\n%s", want, text)
		}
	}
}
