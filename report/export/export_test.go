package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// AIPerf writes its start and end times in local time; the golden files
// hold them in UTC wherever the tests run.
func init() { time.Local = time.UTC }

// fixedRun is a run of 24 requests with made-up but fixed timings: TTFT
// rising with the sequence number, every other request opening with a
// reasoning chunk, one HTTP 429, one stall, one cancelled, one shorter than
// it pinned.
func fixedRun(t *testing.T) Run {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	slo := report.SLO{TTFT: ms(120)}
	r := report.NewReport(report.WithSLO(slo))
	for i := range 24 {
		sched := t0.Add(ms(250 * i))
		rec := &record.Record{Seq: uint64(i), Scheduled: sched, Sent: sched.Add(ms(i % 3)), FirstOutput: i % 2,
			InputTokens: 112 + i, UsagePromptTokens: 112 + i, PromptTokens: 100 + i, OutputTokens: 8, Outcome: record.OutcomeOK, Status: 200,
			Ack: ms(2), Body: fmt.Appendf(nil, `{"model":"Qwen/Qwen3-0.6B","messages":[{"role":"user","content":"prompt %d"}],"max_completion_tokens":8}`, i)}
		if i >= 20 { // one session of three turns (23 is replaced below)
			rec.Session = "conv-a"
		}
		for c := range 8 {
			rec.Chunks = append(rec.Chunks, ms(80+5*i+(10+i%4)*c+(c*i)%3))
		}
		rec.FirstChunkTokens = 1
		rec.Duration = rec.Chunks[7] + ms(2)
		rec.Phases = record.Phases{Conn: record.ConnReused, Setup: 20 * time.Microsecond, Written: 50 * time.Microsecond, FirstByte: ms(1)}
		if i == 0 {
			rec.Phases.Conn, rec.Phases.DNS, rec.Phases.Connect, rec.Phases.TLS, rec.Phases.Setup = record.ConnDialled, 100*time.Microsecond, 300*time.Microsecond, 700*time.Microsecond, 1200*time.Microsecond
			rec.Sent = rec.Sent.Add(rec.Phases.Setup) // dialled on the schedule's time
		}
		switch i {
		case 2:
			rec.PinnedOutputTokens = 9
		case 4:
			rec.ClientOutputTokens = 7 // a tokenizer's count beside usage's 8
		case 5:
			*rec = record.Record{Seq: 5, Scheduled: sched, Sent: sched, Duration: ms(3), Outcome: record.OutcomeError,
				Reason: record.ReasonHTTP429, Status: 429, Err: `HTTP 429: {"error":"rate limited"}`}
		case 11:
			rec.Chunks, rec.Duration = rec.Chunks[:2], ms(400)
			rec.Outcome, rec.Reason, rec.Err, rec.InputTokens, rec.OutputTokens = record.OutcomeError, record.ReasonStall, "no bytes for 200ms", 0, 0
		case 23:
			*rec = record.Record{Seq: 23, Scheduled: sched, Outcome: record.OutcomeCancelled}
		}
		rec.Run = exampleRun
		rec.ID = record.NewRequestID(42, rec.Run, "bench", rec.Seq)
		r.Observe(rec)
	}
	return Run{
		Summary: r.SummaryAt(0.95), Requests: r.Requests(), SLO: slo,
		Config: Config{Model: "Qwen/Qwen3-0.6B", EndpointType: "chat", Streaming: true, URLs: []string{"http://127.0.0.1:8000/v1"},
			Seed: 42, RequestRate: 4, ArrivalPattern: "poisson", RequestCount: 24, ExtraInputs: map[string]any{"ignore_eos": true},
			Dataset: "synthetic", ISLMean: 100, ISLStd: 5, OSLMean: 8, Tokenizer: "Qwen/Qwen3-0.6B", ArtifactDir: "artifacts/example",
			Command: "inferprobe bench --model Qwen/Qwen3-0.6B --url localhost:8000 --streaming --request-rate 4 --request-count 24 --random-seed 42"},
		Digest:      "3f1c0ffee",
		ClientBound: "schedule lag p99 12ms ≥ 10ms",
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report/export/ -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; if the change is meant, run go test ./report/export/ -update and review the diff\ngot:\n%s", name, got)
	}
}

func TestGolden(t *testing.T) {
	run := fixedRun(t)
	var jsonl bytes.Buffer
	if err := WriteJSONL(&jsonl, run); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		make func(Run) ([]byte, error)
	}{
		{"profile_export_aiperf.json", JSON},
		{"profile_export_aiperf.csv", CSV},
		{"profile_export.jsonl", func(Run) ([]byte, error) { return jsonl.Bytes(), nil }},
		{"inputs.json", func(r Run) ([]byte, error) {
			var b bytes.Buffer
			err := WriteInputs(&b, r)
			return b.Bytes(), err
		}},
		{"report.html", HTML},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.make(run)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b)
		})
	}
}

// TestJSONLayout reads the JSON the way AIPerf-era scripts do: metric tag →
// unit and statistics, summary values under "avg".
func TestJSONLayout(t *testing.T) {
	b, err := JSON(fixedRun(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	type stat struct {
		Unit string   `json:"unit"`
		Avg  *float64 `json:"avg"`
		P99  *float64 `json:"p99"`
	}
	for _, tc := range []struct {
		tag, unit string
		dist      bool
		avg       float64
	}{
		{"time_to_first_token", "ms", true, 0}, {"time_to_first_output_token", "ms", true, 0}, {"inter_token_latency", "ms", true, 0}, {"request_latency", "ms", true, 0},
		{"output_token_throughput_per_user", "tokens/sec/user", true, 0}, {"input_sequence_length", "tokens", true, 0},
		{"request_count", "requests", false, 21}, {"error_request_count", "requests", false, 2},
		{"request_throughput", "requests/sec", false, 0}, {"goodput", "requests/sec", false, 0},
		{"benchmark_duration", "sec", false, 0}, {"output_token_throughput", "tokens/sec", false, 0},
		{"total_osl", "tokens", false, 168},
	} {
		var s stat
		if err := json.Unmarshal(doc[tc.tag], &s); err != nil || s.Unit != tc.unit || s.Avg == nil {
			t.Errorf("%s = %s (%v); want unit %q and avg", tc.tag, doc[tc.tag], err, tc.unit)
			continue
		}
		if tc.dist != (s.P99 != nil) {
			t.Errorf("%s: p99 present = %v, want %v", tc.tag, s.P99 != nil, tc.dist)
		}
		if tc.avg != 0 && *s.Avg != tc.avg {
			t.Errorf("%s avg = %v, want %v", tc.tag, *s.Avg, tc.avg)
		}
	}
	var extras struct {
		Digest    string `json:"sequence_digest"`
		Saturated bool   `json:"client_saturated"`
		Lag       stat   `json:"schedule_lag"`
	}
	if err := json.Unmarshal(doc["inferprobe"], &extras); err != nil || extras.Digest != "3f1c0ffee" || !extras.Saturated || extras.Lag.Unit != "ms" {
		t.Errorf("inferprobe extras = %s (%v)", doc["inferprobe"], err)
	}
	var info struct {
		Command string `json:"cli_command"`
	}
	if err := json.Unmarshal(doc["run_info"], &info); err != nil || !strings.HasPrefix(info.Command, "inferprobe bench") {
		t.Errorf("run_info lacks the command: %s", doc["run_info"])
	}
}

// TestCSVSections: AIPerf's two sections, ours, the intervals, and AIPerf's GPU
// telemetry header, separated by blank lines, with CRLF line ends as
// Python's csv module writes them.
func TestCSVSections(t *testing.T) {
	b, err := CSV(fixedRun(t))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(b, []byte("\n")) != bytes.Count(b, []byte("\r\n")) {
		t.Errorf("lines do not all end in CRLF:\n%q", b)
	}
	var sections []string
	for sec := range strings.SplitSeq(strings.TrimSpace(string(b)), "\r\n\r\n") {
		if sec = strings.TrimSpace(sec); sec != "" {
			sections = append(sections, sec)
		}
	}
	wants := []string{"Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std", "Metric,Value", "inferprobe,Value", "Confidence Interval,Level,Low,High",
		"Endpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std"}
	if len(sections) != len(wants) {
		t.Fatalf("%d sections, want %d:\n%s", len(sections), len(wants), b)
	}
	for i, want := range wants {
		rows, err := csv.NewReader(strings.NewReader(sections[i])).ReadAll()
		if err != nil {
			t.Fatalf("section %d: %v", i, err)
		}
		if got := strings.Join(rows[0], ","); got != want {
			t.Errorf("section %d header %q, want %q", i, got, want)
		}
		if i < 2 {
			var names []string
			for _, row := range rows[1:] {
				names = append(names, row[0])
			}
			// AIPerf sorts by tag, which mostly sorts the names too.
			if len(names) < 5 {
				t.Errorf("section %d has only %v", i, names)
			}
		}
	}
	for _, want := range []string{"\r\nTime to First Token (ms),", "\r\nTime to First Output Token (ms),", "\r\nDecode Duration (ms),",
		"\r\nUsage Prompt Diff % (%),", "\r\nRequest Throughput (requests/sec),", "\r\nRequest Error Rate (%),"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("AIPerf row %q missing:\n%s", strings.TrimSpace(want), b)
		}
	}
	// AIPerf names counts without their unit, with two decimals like the rest.
	for _, want := range []string{"\r\nRequest Count,21.00\r\n", "\r\nError Request Count,2.00\r\n", "\r\nGood Request Count,8.00\r\n",
		"\r\nCompleted Requests (Success + Error),23.00\r\n"} {
		if !strings.Contains(sections[1]+"\r\n", want) {
			t.Errorf("summary section lacks %q as AIPerf writes it:\n%s", strings.TrimSpace(want), sections[1])
		}
	}
}

// TestFailuresAtTheirEnd: a failed request is placed at its end, in the
// errors-over-time chart and in the JSONL's request_end_ns, as successes are.
func TestFailuresAtTheirEnd(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	failed := report.RequestRecord{Seq: 0, Scheduled: t0, Sent: t0, Err: "timed out", Contribution: report.Contribution{
		HasLag: true, Duration: 5500 * time.Millisecond, Outcome: record.OutcomeError, Reason: record.ReasonTimeout}}
	run := Run{Summary: report.Summary{Start: t0, End: t0.Add(10 * time.Second), Duration: 10 * time.Second},
		Requests: []report.RequestRecord{failed}}
	_, _, errs := overTime(run)
	for i, p := range errs {
		if want := map[bool]float64{true: 1, false: 0}[i == 5]; p.y != want {
			t.Errorf("errors/s in second %d = %v, want %v", i, p.y, want)
		}
	}
	line, err := requestLine(failed, 1, conversation{id: "session_000000"}, false, false).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `"request_end_ns":` + strconv.FormatInt(t0.Add(5500*time.Millisecond).UnixNano(), 10); !strings.Contains(string(line), want) {
		t.Errorf("JSONL line lacks %s: %s", want, line)
	}
}

// TestJSONNoErrors: without failures error_summary is an empty list, as in
// AIPerf's file, so that scripts iterating over it do not meet null.
func TestJSONNoErrors(t *testing.T) {
	b, err := JSON(Run{})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if got := string(doc["error_summary"]); got != "[]" {
		t.Errorf("error_summary = %s, want []", got)
	}
}

// TestMismatchesReported: a server that ignored min_tokens or ignore_eos
// returned other lengths than the requests pinned; every report says how
// many, and what to do.
func TestMismatchesReported(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := report.NewReport()
	for i, out := range []int{64, 5, 64, 17} {
		sent := t0.Add(time.Duration(i) * time.Second)
		r.Observe(&record.Record{Seq: uint64(i), Scheduled: sent, Sent: sent, Duration: time.Second, FirstOutput: -1,
			OutputTokens: out, PinnedOutputTokens: 64, TokenSource: record.TokensFromUsage})
	}
	run := Run{Summary: r.Summary(), Requests: r.Requests()}
	const count, advice = "2 of 4", "Check that the server supports min_tokens and ignore_eos"
	var console bytes.Buffer
	Console(&console, run, record.Digest{}, 1)
	if !strings.Contains(console.String(), count) || !strings.Contains(console.String(), advice) {
		t.Errorf("the console report does not say %q and %q:\n%s", count, advice, console.String())
	}
	html, err := HTML(run)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte(count)) || !bytes.Contains(html, []byte(advice)) {
		t.Errorf("the HTML report does not say %q and %q", count, advice)
	}
	b, err := JSON(run)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Inferprobe struct {
			Mismatches int    `json:"output_length_mismatches"`
			Note       string `json:"output_length_note"`
		} `json:"inferprobe"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Inferprobe.Mismatches != 2 || !strings.Contains(doc.Inferprobe.Note, advice) {
		t.Errorf("the JSON's inferprobe object has %+v (%v), want 2 mismatches and the advice", doc.Inferprobe, err)
	}
	csvOut, err := CSV(run)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(csvOut, []byte("\r\nOutput Length Mismatches,2\r\n")) {
		t.Errorf("the CSV lacks the mismatch count:\n%s", csvOut)
	}
}

// TestEveryMetricPlaced: each metric the exports know has its place in
// profile_export_aiperf.json's order, once; a metric missing from both
// lists would be silently left out of the JSON.
func TestEveryMetricPlaced(t *testing.T) {
	one := stats.Stats{Count: 1, Avg: 1, Sum: 1}
	s := report.Summary{OK: 1, Failed: 1, ReasoningTokensTotal: 1}
	for _, st := range []*stats.Stats{&s.TTFT, &s.TTFOT, &s.TTST, &s.ITL, &s.InterChunk, &s.Latency, &s.InputTokens, &s.OutputTokens,
		&s.OutputTokenThroughputPerUser, &s.DecodeDuration, &s.E2EOutputThroughput, &s.PrefillThroughputPerUser, &s.OutputTokenCount,
		&s.ReasoningTokens, &s.UsagePromptTokens, &s.UsageCompletionTokens, &s.UsageTotalTokens, &s.UsagePromptDiffPct,
		&s.OSLMismatchDiffPct, &s.CreditToStart, &s.UsageCompletionDiffPct} {
		*st = one
	}
	run := Run{Summary: s, SLO: report.SLO{TTFT: time.Second}}
	place := map[string]int{}
	for _, tag := range append(slices.Clone(declaredOrder), extraOrder...) {
		place[tag]++
	}
	all := append(distributions(run.Summary), singles(run)...)
	if len(all) != 21+len(singles(run)) {
		t.Fatalf("%d distributions, want all 21 set above", len(all)-len(singles(run)))
	}
	for _, m := range all {
		if place[m.Tag] != 1 {
			t.Errorf("%s is in the JSON's order lists %d times, want once", m.Tag, place[m.Tag])
		}
	}
}

// exampleRun is the run ID of example's requests.
const exampleRun record.RunID = 0x5eed0123456789ab

// TestRequestIDsRegenerate: each line of profile_export.jsonl carries what,
// with the seed and the probe's name, regenerates its x_request_id.
func TestRequestIDsRegenerate(t *testing.T) {
	run := fixedRun(t)
	var b bytes.Buffer
	if err := WriteJSONL(&b, run); err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(b.String()) {
		var l struct {
			Metadata struct {
				ID string `json:"x_request_id"`
			} `json:"metadata"`
			Inferprobe struct {
				Run   string `json:"run_id"`
				Index uint64 `json:"request_index"`
			} `json:"inferprobe"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		r, err := record.ParseRunID(l.Inferprobe.Run)
		if err != nil {
			t.Fatalf("run_id %q: %v", l.Inferprobe.Run, err)
		}
		if got := record.NewRequestID(run.Config.Seed, r, "bench", l.Inferprobe.Index).String(); got != l.Metadata.ID {
			t.Errorf("request %d: regenerated ID %s, exported %s", l.Inferprobe.Index, got, l.Metadata.ID)
		}
	}
}

// TestCorrelationID: a conversation's x_correlation_id follows from the
// seed and the conversation alone, is UUID-shaped, and differs between
// seeds and conversations.
func TestCorrelationID(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	corr := CorrelationID(42, "session_000007")
	if again := CorrelationID(42, "session_000007"); again != corr {
		t.Errorf("ids vary between calls: %s, then %s", corr, again)
	}
	if !uuid.MatchString(corr) {
		t.Errorf("%q is not a version-4-shaped UUID", corr)
	}
	seen := map[string]bool{}
	for _, tc := range []struct {
		seed uint64
		conv string
	}{{42, "session_000007"}, {43, "session_000007"}, {42, "session_000008"}, {42, "conv-a"}} {
		c := CorrelationID(tc.seed, tc.conv)
		if seen[c] {
			t.Errorf("seed %d, %s: an id repeats (%s)", tc.seed, tc.conv, c)
		}
		seen[c] = true
	}
}
