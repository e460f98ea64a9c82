package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/stats"
)

// trialRun is a run of n streamed requests, one every 50 ms, whose TTFT
// is ttft(i) and whose 8 chunks then follow 5 ms apart.
func trialRun(t *testing.T, n int, ttft func(i int) time.Duration) Run {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := report.NewReport()
	for i := range n {
		sent := t0.Add(time.Duration(i) * 50 * time.Millisecond)
		rec := &record.Record{Seq: uint64(i), Scheduled: sent, Sent: sent, InputTokens: 64, OutputTokens: 8, FirstChunkTokens: 1,
			Outcome: record.OutcomeOK, Status: 200, ID: record.NewRequestID(1, 1, "bench", uint64(i))}
		for c := range 8 {
			rec.Chunks = append(rec.Chunks, ttft(i)+time.Duration(c)*5*time.Millisecond)
		}
		rec.Duration = rec.Chunks[7] + time.Millisecond
		r.Observe(rec)
	}
	return Run{Summary: r.SummaryAt(.95), Requests: r.Requests(), Config: Config{Model: "m", EndpointType: "chat", Streaming: true}}
}

// expTTFT draws TTFTs from an exponential distribution of mean ms,
// seeded.
func expTTFT(seed uint64, ms float64) func(int) time.Duration {
	rng := rand.New(rand.NewPCG(seed, 1))
	return func(int) time.Duration { return time.Duration((10 + ms*rng.ExpFloat64()) * float64(time.Millisecond)) }
}

func constTTFT(ms float64) func(int) time.Duration {
	return func(int) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
}

func newTrial(t *testing.T, i int, r Run, failed string) Trial {
	t.Helper()
	tr, err := NewTrial(i, TrialDir(i, "", ""), r, failed)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

type aggregateDoc struct {
	Schema   string `json:"schema_version"`
	Metadata struct {
		Type       string   `json:"aggregation_type"`
		Runs       int      `json:"num_profile_runs"`
		Successful int      `json:"num_successful_runs"`
		Level      float64  `json:"confidence_level"`
		RunLabels  []string `json:"run_labels"`
		SingleRun  bool     `json:"single_run"`
		Failed     []struct {
			Label, Error string
		} `json:"failed_runs"`
		Inferprobe struct {
			Agree     *bool `json:"runs_agree"`
			Agreement map[string]struct {
				P           float64 `json:"p_adjusted"`
				Significant bool    `json:"significant"`
			} `json:"agreement"`
		} `json:"inferprobe"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Mean, Std, Min, Max, CV, SE float64
		Low                         float64  `json:"ci_low"`
		High                        float64  `json:"ci_high"`
		T                           *float64 `json:"t_critical"`
		Unit                        string
	} `json:"metrics"`
}

func aggregateOf(t *testing.T, m MultiRun) aggregateDoc {
	t.Helper()
	b, err := AggregateJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	var doc aggregateDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return doc
}

// TestAggregateJSON: AIPerf's confidence aggregate of three runs and a
// failed one: the failed run listed apart, and each statistic's mean,
// sample spread and t interval over the successful runs' values.
func TestAggregateJSON(t *testing.T) {
	var runs []Run
	m := MultiRun{Level: .95, Cooldown: 2}
	for i, seed := range []uint64{1, 2, 3} {
		runs = append(runs, trialRun(t, 50, expTTFT(seed, 20)))
		m.Trials = append(m.Trials, newTrial(t, i, runs[i], ""))
	}
	m.Trials = append(m.Trials, newTrial(t, 3, trialRun(t, 5, constTTFT(1)), "all 5 requests failed"))
	doc := aggregateOf(t, m)
	md := doc.Metadata
	if doc.Schema != "1.0" || md.Type != "confidence" || md.Runs != 4 || md.Successful != 3 || md.Level != .95 ||
		strings.Join(md.RunLabels, " ") != "run_0001 run_0002 run_0003" || md.SingleRun ||
		len(md.Failed) != 1 || md.Failed[0].Label != "run_0004" || md.Failed[0].Error != "all 5 requests failed" {
		t.Errorf("metadata %+v", md)
	}
	// The runs' p99s, worked out as AIPerf does: mean, std with n−1, t(0.975, 2).
	var p99 []float64
	for _, r := range runs {
		p99 = append(p99, r.Summary.TTFT.P99*1e3)
	}
	mean := (p99[0] + p99[1] + p99[2]) / 3
	var sq float64
	for _, v := range p99 {
		sq += (v - mean) * (v - mean)
	}
	std := math.Sqrt(sq / 2)
	half := stats.StudentQuantile(.975, 2) * std / math.Sqrt(3)
	got := doc.Metrics["time_to_first_token_p99"]
	if !near(got.Mean, mean) || !near(got.Std, std) || !near(got.Low, mean-half) || !near(got.High, mean+half) ||
		!near(got.CV, std/mean) || got.T == nil || got.Unit != "ms" || got.Min > got.Max {
		t.Errorf("time_to_first_token_p99 = %+v; want mean %g, std %g, interval ±%g", got, mean, std, half)
	}
	if _, ok := doc.Metrics["request_throughput_avg"]; !ok {
		t.Error("no request_throughput_avg")
	}
	// A run-wide value has only avg, and count is not one of AIPerf's STAT_KEYS.
	for _, k := range []string{"request_throughput_p99", "time_to_first_token_count"} {
		if _, ok := doc.Metrics[k]; ok {
			t.Errorf("%s is in the aggregate", k)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// TestAggregateSingleRun: with one successful run AIPerf reports the
// values with no spread, the interval collapsed and t_critical null.
func TestAggregateSingleRun(t *testing.T) {
	m := MultiRun{Level: .95, Trials: []Trial{newTrial(t, 0, trialRun(t, 20, constTTFT(30)), ""), newTrial(t, 1, trialRun(t, 20, constTTFT(30)), "interrupted")}}
	doc := aggregateOf(t, m)
	got := doc.Metrics["time_to_first_token_avg"]
	if !doc.Metadata.SingleRun || !near(got.Mean, 30) || got.Std != 0 || got.Low != got.Mean || got.High != got.Mean || got.T != nil {
		t.Errorf("single run: %+v %+v", doc.Metadata, got)
	}
	if doc.Metadata.Inferprobe.Agree != nil {
		t.Errorf("one run judged for agreement: %v", *doc.Metadata.Inferprobe.Agree)
	}
}

// TestAggregateCSV: AIPerf's aggregate CSV: the statistics, a blank line,
// the metadata as its exporter titles it, then inferprobe's verdict.
func TestAggregateCSV(t *testing.T) {
	m := MultiRun{Level: .9}
	for i := range 2 {
		m.Trials = append(m.Trials, newTrial(t, i, trialRun(t, 20, expTTFT(uint64(i), 20)), ""))
	}
	b, err := AggregateCSV(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("\r\n")) {
		t.Error("not CRLF, as Python's csv module writes")
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1 // the sections differ in width, as AIPerf's
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "metric,mean,std,min,max,cv,se,ci_low,ci_high,t_critical,unit" {
		t.Errorf("header %v", rows[0])
	}
	meta := map[string]string{}
	for _, row := range rows[1:] {
		if len(row) == 2 {
			meta[row[0]] = row[1]
		}
	}
	for k, want := range map[string]string{"Aggregation Type": "confidence", "Total Runs": "2", "Successful Runs": "2",
		"Confidence Level": "0.9", "Run Labels": "['run_0001', 'run_0002']", "Cooldown Seconds": "0.0"} {
		if meta[k] != want {
			t.Errorf("%s: %q, want %q", k, meta[k], want)
		}
	}
	if !strings.HasPrefix(meta["Runs Agree"], "yes") && !strings.HasPrefix(meta["Runs Agree"], "no") {
		t.Errorf("Runs Agree: %q", meta["Runs Agree"])
	}
}

// TestRunsAgree: runs of one distribution agree; a run 30 % slower in
// TTFT makes them differ, in TTFT.
func TestRunsAgree(t *testing.T) {
	same := MultiRun{Level: .95}
	for i, seed := range []uint64{1, 2, 3} {
		same.Trials = append(same.Trials, newTrial(t, i, trialRun(t, 300, expTTFT(seed, 20)), ""))
	}
	doc := aggregateOf(t, same)
	if a := doc.Metadata.Inferprobe.Agree; a == nil || !*a || doc.Metadata.Inferprobe.Agreement["time_to_first_token"].Significant {
		t.Errorf("runs of one distribution: %+v", doc.Metadata.Inferprobe)
	}
	slow := same
	slow.Trials = append(same.Trials[:2:2], newTrial(t, 2, trialRun(t, 300, func(i int) time.Duration {
		return expTTFT(3, 20)(i) * 13 / 10
	}), ""))
	doc = aggregateOf(t, slow)
	if a := doc.Metadata.Inferprobe.Agree; a == nil || *a || !doc.Metadata.Inferprobe.Agreement["time_to_first_token"].Significant {
		t.Errorf("a run 30 %% slower: %+v", doc.Metadata.Inferprobe)
	}
	if v := slow.verdict(slow.agreement()); !strings.Contains(v, "differ in time_to_first_token") {
		t.Errorf("verdict %q does not name TTFT", v)
	}
}

// TestConvergence: each mode stops where AIPerf's criterion does.
func TestConvergence(t *testing.T) {
	trials := func(ttfts ...float64) []Trial {
		var out []Trial
		for i, v := range ttfts {
			out = append(out, newTrial(t, i, trialRun(t, 20, constTTFT(v)), ""))
		}
		return out
	}
	// 100 and 101: t(0.975, 1) = 12.71, se 0.5: the interval is 12.6 % of
	// the mean, over 10 %; with 100.5 too, t(0.975, 2) = 4.30, se 0.29:
	// 2.5 %, under it. Their CV is 0.7 %, under 5 %, from the second run.
	for _, tc := range []struct {
		mode  string
		ttfts []float64
		want  bool
	}{
		{ModeCIWidth, []float64{100}, false},
		{ModeCIWidth, []float64{100, 101}, false},
		{ModeCIWidth, []float64{100, 101, 100.5}, true},
		{ModeCV, []float64{100, 101}, true},
		{ModeCV, []float64{100, 130}, false},
	} {
		c := &Convergence{Metric: "time_to_first_token", Stat: "avg", Mode: tc.mode}
		if got := c.Check(trials(tc.ttfts...), .95); got != tc.want || c.Converged != tc.want || c.Runs != len(tc.ttfts) {
			t.Errorf("%s of %v: converged %v (%+v), want %v", tc.mode, tc.ttfts, got, c, tc.want)
		}
	}
	// A failed run does not count.
	failed := trials(100, 101, 100.5)
	failed[2].Failed = "interrupted"
	if c := (&Convergence{Metric: "time_to_first_token", Stat: "avg", Mode: ModeCIWidth}); c.Check(failed, .95) {
		t.Errorf("converged on a failed run: %+v", c)
	}
	// distribution: the last run against the others, by their per-request values.
	dist := func(last func(int) time.Duration) bool {
		ts := []Trial{newTrial(t, 0, trialRun(t, 200, expTTFT(1, 20)), ""), newTrial(t, 1, trialRun(t, 200, expTTFT(2, 20)), ""),
			newTrial(t, 2, trialRun(t, 200, last), "")}
		return (&Convergence{Metric: "time_to_first_token", Mode: ModeDistribution}).Check(ts, .95)
	}
	if !dist(expTTFT(3, 20)) {
		t.Error("three runs of one distribution did not converge")
	}
	if dist(expTTFT(3, 40)) {
		t.Error("a last run twice as slow converged")
	}
}

// TestCheckConvergence: the rules a run can apply pass; a metric the
// runs do not report, or a statistic or test it cannot have, is refused.
func TestCheckConvergence(t *testing.T) {
	for _, tc := range []struct {
		metric, stat, mode string
		ok                 bool
	}{
		{"time_to_first_token", "p99", ModeCIWidth, true},
		{"request_throughput", "avg", ModeCV, true},
		{"inter_token_latency", "avg", ModeDistribution, true},
		{"ttft", "avg", ModeCIWidth, false},
		{"request_throughput", "p99", ModeCV, false},
		{"output_token_throughput", "avg", ModeDistribution, false},
	} {
		if err := CheckConvergence(tc.metric, tc.stat, tc.mode); (err == nil) != tc.ok {
			t.Errorf("%s %s %s: %v, want ok %v", tc.metric, tc.stat, tc.mode, err, tc.ok)
		}
	}
}

// TestAggregateHTML: the page lists the runs, the verdict and every
// statistic with its interval, and has no script.
func TestAggregateHTML(t *testing.T) {
	m := MultiRun{Level: .95, Convergence: &Convergence{Metric: "time_to_first_token", Stat: "avg", Mode: ModeCV}}
	for i := range 3 {
		m.Trials = append(m.Trials, newTrial(t, i, trialRun(t, 30, expTTFT(uint64(i), 20)), ""))
	}
	m.Convergence.Check(m.Trials, m.Level)
	b, err := AggregateHTML(m)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"run_0003/report.html", "Do the runs agree?", "time_to_first_token_p99", "<svg", "Convergence: "} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Error("page has a script")
	}
}

// TestConsoleMultiRun: the console gives each headline statistic's mean,
// spread and interval across the runs, and the verdict.
func TestConsoleMultiRun(t *testing.T) {
	m := MultiRun{Level: .95}
	for i := range 3 {
		m.Trials = append(m.Trials, newTrial(t, i, trialRun(t, 30, expTTFT(uint64(i), 20)), ""))
	}
	var b bytes.Buffer
	ConsoleMultiRun(&b, m)
	out := b.String()
	a := m.aggregate()
	var p99 aggregateMetric
	for _, x := range a {
		if x.key == "time_to_first_token_p99" {
			p99 = x
		}
	}
	want := fmt.Sprintf("[%.2f, %.2f]", p99.spread.Interval.Low, p99.spread.Interval.High)
	for _, s := range []string{"3 of 3 runs succeeded", "time_to_first_token_p99 (ms)", want, "Runs agree: "} {
		if !strings.Contains(out, s) {
			t.Errorf("console lacks %q:\n%s", s, out)
		}
	}
}

// TestCollatedJSON: with a convergence rule the aggregate directory also
// has AIPerf's collated file: each metric's values of every successful
// run pooled, and each run's mean and count; without one it has not.
func TestCollatedJSON(t *testing.T) {
	m := MultiRun{Level: .95, Trials: []Trial{
		newTrial(t, 0, trialRun(t, 10, constTTFT(10)), ""), newTrial(t, 1, trialRun(t, 30, constTTFT(30)), ""),
		newTrial(t, 2, trialRun(t, 5, constTTFT(99)), "interrupted"),
	}}
	dir := t.TempDir()
	if err := WriteAggregate(dir, m); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, AggregateDir, collatedJSONFile)); !os.IsNotExist(err) {
		t.Errorf("collated file without a convergence rule: %v", err)
	}
	m.Convergence = &Convergence{Metric: "time_to_first_token", Stat: "avg", Mode: ModeCV}
	if err := WriteAggregate(dir, m); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, AggregateDir, collatedJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Metadata struct {
			Type       string   `json:"aggregation_type"`
			Successful int      `json:"num_successful_runs"`
			Labels     []string `json:"run_labels"`
		} `json:"metadata"`
		Metrics map[string]struct {
			Combined struct {
				Mean, P50 float64
				Count     int
			} `json:"combined"`
			PerRun []struct {
				Label string
				Mean  float64
				Count int
			} `json:"per_run"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	ttft := doc.Metrics["time_to_first_token"]
	// 10 requests at 10 ms and 30 at 30 ms: mean (100+900)/40 = 25, median 30.
	if doc.Metadata.Type != "detailed" || doc.Metadata.Successful != 2 || len(doc.Metadata.Labels) != 2 ||
		ttft.Combined.Count != 40 || !near(ttft.Combined.Mean, 25) || !near(ttft.Combined.P50, 30) ||
		len(ttft.PerRun) != 2 || ttft.PerRun[1].Label != "run_0002" || ttft.PerRun[1].Count != 30 || !near(ttft.PerRun[1].Mean, 30) {
		t.Errorf("collated: %+v, TTFT %+v", doc.Metadata, ttft)
	}
}
