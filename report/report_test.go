package report

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/stats"
)

// reportRecords is a small run worked out by hand: two successes (one meets
// the 100 ms TTFT SLO, one does not; one opens with reasoning, one misses
// its pinned length), an HTTP 500 held by the concurrency cap, a truncated
// stream that got two chunks of reasoning, and a cancelled request.
func reportRecords(t0 time.Time) []*record.Record {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	return []*record.Record{
		{Seq: 3, Scheduled: t0.Add(ms(700)), Sent: t0.Add(ms(700)), FirstOutput: -1, Outcome: record.OutcomeCancelled, Reason: record.ReasonNone},
		// ITL: (100−50) ms / (5 − 1 token in the first chunk) = 12.5 ms; 80 tokens/s per user.
		// The first chunk is reasoning: TTFOT 60 ms.
		{Seq: 0, Scheduled: t0, Sent: t0, Chunks: []time.Duration{ms(50), ms(60), ms(100)}, FirstOutput: 1, FirstChunkTokens: 1,
			Duration: ms(110), InputTokens: 10, OutputTokens: 5, ReasoningTokens: 1, PinnedOutputTokens: 5, Outcome: record.OutcomeOK, Status: 200},
		// Sent 2 ms late; ITL (220−200)/(3−1) = 10 ms; ends at t0+2s, the end of the run.
		// Three tokens of the four it pinned.
		{Seq: 1, Scheduled: t0.Add(ms(998)), Sent: t0.Add(time.Second), Chunks: []time.Duration{ms(200), ms(220)}, FirstChunkTokens: 1,
			Duration: time.Second, InputTokens: 20, OutputTokens: 3, PinnedOutputTokens: 4, Outcome: record.OutcomeOK, Status: 200},
		// Held 10 ms by the cap, so sent on time.
		{Seq: 2, Scheduled: t0.Add(ms(490)), CapWait: ms(10), Sent: t0.Add(ms(500)), Duration: ms(5), FirstOutput: -1, Outcome: record.OutcomeError,
			Reason: record.ReasonHTTP5xx, Status: 500, Err: "HTTP 500: boom"},
		{Seq: 4, Scheduled: t0.Add(ms(300)), Sent: t0.Add(ms(300)), Chunks: []time.Duration{ms(30), ms(35)}, FirstOutput: -1, Duration: ms(40),
			Outcome: record.OutcomeError, Reason: record.ReasonTruncated, Status: 200, Err: "stream ended before [DONE]"},
	}
}

func TestReportSummary(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := NewReport(WithSLO(SLO{TTFT: 100 * time.Millisecond}))
	for _, rec := range reportRecords(t0) {
		r.Observe(rec)
	}
	s := r.Summary()
	ms := 1e-3
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"ok", float64(s.OK), 2}, {"failed", float64(s.Failed), 2}, {"cancelled", float64(s.Cancelled), 1},
		{"good", float64(s.Good), 1},
		{"duration", s.DurationSeconds, 2}, {"duration (Go)", s.Duration.Seconds(), 2},
		{"request throughput", s.RequestThroughput, 1},
		{"output tokens total", s.OutputTokensTotal, 8}, {"input tokens total", s.InputTokensTotal, 30},
		{"output token throughput", s.OutputTokenThroughput, 4},
		{"total token throughput", s.TotalTokenThroughput, 19},
		{"goodput", s.Goodput, 0.5},
		// TTFT counts failed requests that got a chunk: 30, 50, 200 ms.
		{"ttft count", float64(s.TTFT.Count), 3}, {"ttft p50", s.TTFT.P50, 50 * ms}, {"ttft avg", s.TTFT.Avg, 280.0 / 3 * ms},
		// TTFOT: 60 and 200 ms; the truncated stream had only reasoning.
		{"ttfot count", float64(s.TTFOT.Count), 2}, {"ttfot avg", s.TTFOT.Avg, 130 * ms},
		{"ttst count", float64(s.TTST.Count), 3}, {"ttst max", s.TTST.Max, 20 * ms},
		{"inter-chunk count", float64(s.InterChunk.Count), 4}, {"inter-chunk max", s.InterChunk.Max, 40 * ms},
		{"itl avg", s.ITL.Avg, 11.25 * ms}, {"itl min", s.ITL.Min, 10 * ms},
		{"per-user avg", s.OutputTokenThroughputPerUser.Avg, 90}, {"per-user min", s.OutputTokenThroughputPerUser.Min, 80},
		{"latency max", s.Latency.Max, 1}, {"latency count", float64(s.Latency.Count), 2},
		{"isl avg", s.InputTokens.Avg, 15}, {"osl avg", s.OutputTokens.Avg, 4},
		// lag of every request, cancelled ones too: 0, 2 ms, 0, 0, 0.
		{"lag count", float64(s.ScheduleLag.Count), 5}, {"lag max", s.ScheduleLag.Max, 2 * ms},
		{"cap wait count", float64(s.CapWait.Count), 5}, {"cap wait max", s.CapWait.Max, 10 * ms},
		{"reasoning tokens total", s.ReasoningTokensTotal, 1}, {"output length mismatches", float64(s.OutputLengthMismatches), 1},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if want := map[record.Reason]int{record.ReasonHTTP5xx: 1, record.ReasonTruncated: 1}; !reflect.DeepEqual(s.Errors, want) {
		t.Errorf("errors = %v, want %v", s.Errors, want)
	}
	if !s.Start.Equal(t0) || !s.End.Equal(t0.Add(2*time.Second)) {
		t.Errorf("start, end = %v, %v; want %v and 2s later", s.Start, s.End, t0)
	}
}

func TestReportGoodputWithoutSLO(t *testing.T) {
	r := NewReport()
	for _, rec := range reportRecords(time.Unix(0, 0)) {
		r.Observe(rec)
	}
	if s := r.Summary(); s.Good != 2 || s.Goodput != s.RequestThroughput {
		t.Errorf("without an SLO every success is good: good %d, goodput %v, request throughput %v", s.Good, s.Goodput, s.RequestThroughput)
	}
}

func TestReportRequests(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewReport(WithSLO(SLO{TTFT: 100 * time.Millisecond}))
	for _, rec := range reportRecords(t0) {
		r.Observe(rec)
	}
	got := r.Requests()
	var seqs []uint64
	for _, q := range got {
		seqs = append(seqs, q.Seq)
	}
	if !reflect.DeepEqual(seqs, []uint64{0, 1, 2, 3, 4}) {
		t.Fatalf("requests come in order %v, want by sequence number", seqs)
	}
	ms := time.Millisecond
	want := []RequestRecord{
		{Seq: 0, Scheduled: t0, Sent: t0, Status: 200, Gaps: []float32{10, 40}, Contribution: Contribution{HasLag: true,
			TTFT: 50 * ms, TTFOT: 60 * ms, TTST: 10 * ms, HasTTFT: true, HasTTFOT: true, HasTTST: true, ITL: 12500 * time.Microsecond,
			Duration: 110 * ms, InputTokens: 10, OutputTokens: 5, ReasoningTokens: 1, PinnedOutputTokens: 5, Good: true}},
		{Seq: 1, Scheduled: t0.Add(998 * ms), Sent: t0.Add(time.Second), Status: 200, Gaps: []float32{20}, Contribution: Contribution{HasLag: true, Lag: 2 * ms,
			TTFT: 200 * ms, TTFOT: 200 * ms, TTST: 20 * ms, HasTTFT: true, HasTTFOT: true, HasTTST: true, ITL: 10 * ms, Duration: time.Second,
			InputTokens: 20, OutputTokens: 3, PinnedOutputTokens: 4, Mismatch: true}},
		{Seq: 2, Scheduled: t0.Add(490 * ms), Sent: t0.Add(500 * ms), Status: 500, Err: "HTTP 500: boom", Contribution: Contribution{
			Outcome: record.OutcomeError, Reason: record.ReasonHTTP5xx, HasLag: true, CapWait: 10 * ms, Duration: 5 * ms}},
	}
	if !reflect.DeepEqual(got[:3], want) {
		t.Errorf("requests =\n %+v\nwant\n %+v", got[:3], want)
	}
	// A failed request keeps the timings it got but no lengths. Its
	// Duration still places it in time.
	if e := got[4]; e.TTFT != 30*time.Millisecond || e.Duration != 40*time.Millisecond || e.OutputTokens != 0 || e.Good {
		t.Errorf("truncated request = %+v", e)
	}
}

// TestSummaryJSON pins the snake_case names the burst API serialises.
func TestSummaryJSON(t *testing.T) {
	b, err := json.Marshal(Summary{Errors: map[record.Reason]int{record.ReasonTimeout: 2}, TTFT: stats.Stats{Count: 1, P99: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"time_to_first_token_seconds", "time_to_first_output_token_seconds", "concurrency_wait_seconds",
		"reasoning_tokens_total", "output_length_mismatches", "inter_token_latency_seconds", "request_latency_seconds",
		"output_token_throughput_per_user", "errors_by_reason", "goodput", "total_token_throughput", "duration_seconds"} {
		if _, ok := m[k]; !ok {
			t.Errorf("summary JSON lacks %q: %s", k, b)
		}
	}
	if p99 := m["time_to_first_token_seconds"].(map[string]any)["p99"]; p99 != 0.5 {
		t.Errorf("ttft p99 = %v, want 0.5", p99)
	}
	if _, ok := m["start"]; ok {
		t.Errorf("a zero start is omitted: %s", b)
	}
}

// TestConnectionRetriesAndCompression: the summary counts the requests sent
// again on a fresh connection, those kept off reused connections, and the
// compressed replies, whatever their outcome, as the daemon's counters do.
func TestConnectionRetriesAndCompression(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := NewReport()
	for _, rec := range []*record.Record{
		{Seq: 0, Sent: t0, Duration: time.Millisecond, FirstOutput: -1, Outcome: record.OutcomeOK, Status: 200, ConnRetried: true, Encoding: record.EncodingGzip},
		{Seq: 1, Sent: t0, Duration: time.Millisecond, FirstOutput: -1, Outcome: record.OutcomeError, Reason: record.ReasonTruncated, Status: 200, Encoding: record.EncodingGzip},
		{Seq: 2, Sent: t0, Duration: time.Millisecond, FirstOutput: -1, Outcome: record.OutcomeOK, Status: 200, Encoding: record.EncodingZstd},
		{Seq: 3, Sent: t0, Duration: time.Millisecond, FirstOutput: -1, Outcome: record.OutcomeOK, Status: 200, KeepAliveWithheld: true},
	} {
		r.Observe(rec)
	}
	s := r.Summary()
	if s.ConnectionRetries != 1 || s.KeepAliveWithheld != 1 {
		t.Errorf("%d connection retries and %d requests on a connection of their own, want 1 and 1", s.ConnectionRetries, s.KeepAliveWithheld)
	}
	if want := map[string]int{"gzip": 2, "zstd": 1}; !reflect.DeepEqual(s.CompressedResponses, want) {
		t.Errorf("compressed responses %v, want %v", s.CompressedResponses, want)
	}
}

// TestWorkerLostIsTheClients: a request lost with its worker is counted as
// the client's loss, apart from the failed requests and their reasons, so
// a run's error rate is the target's.
func TestWorkerLostIsTheClients(t *testing.T) {
	r := NewReport()
	at := time.Unix(1_700_000_000, 0)
	r.Observe(&record.Record{Seq: 0, Scheduled: at, Sent: at, Duration: time.Millisecond, Chunks: []time.Duration{time.Millisecond}, OutputTokens: 1})
	r.Observe(record.Unsent(1, record.RequestID{}, at, record.OutcomeError, record.ReasonWorkerLost, "worker exited"))
	r.Observe(&record.Record{Seq: 2, Scheduled: at, Sent: at, Duration: time.Millisecond, Outcome: record.OutcomeError, Reason: record.ReasonHTTP5xx, Status: 500})
	s := r.Summary()
	if s.OK != 1 || s.Failed != 1 || s.Lost != 1 || len(s.Errors) != 1 || s.Errors[record.ReasonHTTP5xx] != 1 || s.RequestErrorRate != 50 {
		t.Errorf("ok %d, failed %d, lost %d, errors %v, error rate %g%%; want 1, 1, 1, only the 5xx, 50%%", s.OK, s.Failed, s.Lost, s.Errors, s.RequestErrorRate)
	}
}
