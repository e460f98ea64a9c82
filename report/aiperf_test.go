package report

import (
	"math"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// TestAIPerfMetrics pins the per-request metrics to AIPerf 0.13's
// definitions (its docstrings' worked examples where it gives them).
func TestAIPerfMetrics(t *testing.T) {
	ms := time.Millisecond
	ok := Contribution{Outcome: record.OutcomeOK, HasTTFT: true, TTFT: 100 * ms, Duration: 740 * ms,
		InputTokens: 105, PromptTokens: 100, UsagePromptTokens: 105, OutputTokens: 64, ReasoningTokens: 4, PinnedOutputTokens: 64}
	if d, has := ok.UsagePromptDiffPct(); !has || d != 5 {
		t.Errorf("prompt diff = %v %v, want 5%% (AIPerf: abs((105-100)/100)*100)", d, has)
	}
	if ok.UsageDiscrepancy() {
		t.Error("5% is within AIPerf's 10% threshold")
	}
	if d, has := ok.DecodeDuration(); !has || d != 640*ms {
		t.Errorf("decode = %v, want latency - TTFT = 640ms", d)
	}
	if v, _ := ok.E2EOutputThroughput(); v != 64/0.74 {
		t.Errorf("e2e output throughput = %v, want 64 tokens / 0.74 s", v)
	}
	if v, _ := ok.PrefillThroughputPerUser(); v != 1000 {
		t.Errorf("prefill per user = %v, want the client's 100 tokens / 0.1 s", v)
	}
	if n, has := ok.UsageTotalTokens(); !has || n != 169 {
		t.Errorf("usage total = %v %v, want 105 + 64", n, has)
	}
	if ok.OutputTokenCount() != 60 {
		t.Errorf("output token count = %d, want 64 less 4 reasoning", ok.OutputTokenCount())
	}

	far := ok
	far.UsagePromptTokens = 155 // llama.cpp's chat template on a 128-token prompt
	far.PromptTokens = 128
	if d, _ := far.UsagePromptDiffPct(); !far.UsageDiscrepancy() || d < 21 || d > 22 {
		t.Errorf("155 against 128: diff %v, discrepancy %v; want 21.1%%, a discrepancy", d, far.UsageDiscrepancy())
	}
	if _, has := ok.UsageCompletionDiffPct(); has {
		t.Error("without a tokenizer's count of the output there is no completion diff")
	}
	counted := ok
	counted.ClientOutputTokens = 50 // usage says 64
	if d, has := counted.UsageCompletionDiffPct(); !has || math.Abs(d-28) > 1e-9 || !counted.UsageDiscrepancy() {
		t.Errorf("completion diff = %v %v, discrepancy %v; want abs((64-50)/50)*100 = 28%%, a discrepancy", d, has, counted.UsageDiscrepancy())
	}
	noUsage := ok
	noUsage.UsagePromptTokens = 0
	if _, has := noUsage.UsagePromptDiffPct(); has {
		t.Error("a server that gave no prompt count has no diff, not 0%")
	}
	if noUsage.ClientInputTokens() != 100 {
		t.Errorf("client count = %d, want 100", noUsage.ClientInputTokens())
	}

	// AIPerf's OSL threshold: min(5 % of the request, 50 tokens).
	for _, tc := range []struct {
		pinned, got int
		mismatch    bool
	}{{100, 105, false}, {100, 106, true}, {2000, 2050, false}, {2000, 2051, true}, {100, 50, true}} {
		c := ok
		c.PinnedOutputTokens, c.OutputTokens = tc.pinned, tc.got
		if c.OSLMismatch() != tc.mismatch {
			t.Errorf("pinned %d, got %d: mismatch %v, want %v", tc.pinned, tc.got, c.OSLMismatch(), tc.mismatch)
		}
	}
	short := Contribution{Outcome: record.OutcomeOK, PinnedOutputTokens: 100, OutputTokens: 50}
	if d, _ := short.OSLMismatchDiffPct(); d != -50 {
		t.Errorf("OSL diff = %v, want -50%% (AIPerf: (50-100)/100*100)", d)
	}
	failed := ok
	failed.Outcome = record.OutcomeError
	if _, has := failed.DecodeDuration(); has {
		t.Error("a failure has no decode duration")
	}
}

// TestDetailsBudget: past the report's budget for per-request details, a
// request is kept without its gaps and body, and counted; its statistics
// still count.
func TestDetailsBudget(t *testing.T) {
	t0 := time.Unix(1000, 0)
	rec := func(seq uint64) *record.Record {
		return &record.Record{Seq: seq, Scheduled: t0, Sent: t0, Chunks: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond},
			FirstOutput: 0, Duration: 30 * time.Millisecond, OutputTokens: 2, Body: []byte(`{"model":"m"}`)}
	}
	r := NewReport()
	r.Observe(rec(0))
	r.kept = MaxKeptBytes - 10 // the next body (13 bytes) and gap do not fit
	r.Observe(rec(1))
	reqs, s := r.Requests(), r.Summary()
	if reqs[0].Body == nil || len(reqs[0].Gaps) != 1 || reqs[1].Body != nil || reqs[1].Gaps != nil {
		t.Errorf("details kept: %q %v, then %q %v; want the first request's only", reqs[0].Body, reqs[0].Gaps, reqs[1].Body, reqs[1].Gaps)
	}
	if s.DetailsDropped != 1 || s.InterChunk.Count != 2 || s.OK != 2 {
		t.Errorf("dropped %d, inter-chunk samples %d, ok %d; want 1, 2, 2", s.DetailsDropped, s.InterChunk.Count, s.OK)
	}
}

// TestHTTPTraceAndEffectiveLatencySummaries: the summary has AIPerf's HTTP
// trace metrics over the successful requests (k6's definitions from the
// timing breakdown) and its effective latency, scheduled send → end, over
// every request sent, failures included.
func TestHTTPTraceAndEffectiveLatencySummaries(t *testing.T) {
	us := time.Microsecond
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := NewReport()
	for _, rec := range []*record.Record{
		// Dialled: 100 µs DNS, 300 µs connect, 600 µs TLS in a 1.2 ms setup.
		{Seq: 0, Scheduled: t0, Sent: t0.Add(1200 * us), Duration: 10000 * us, Outcome: record.OutcomeOK, OutputTokens: 1,
			Phases: record.Phases{Conn: record.ConnDialled, DNS: 100 * us, Connect: 300 * us, TLS: 600 * us, Setup: 1200 * us, Written: 50 * us, FirstByte: 2000 * us}},
		// Reused, sent 3 ms late.
		{Seq: 1, Scheduled: t0, Sent: t0.Add(3000 * us), Duration: 20000 * us, Outcome: record.OutcomeOK, OutputTokens: 1,
			Phases: record.Phases{Conn: record.ConnReused, Setup: 20 * us, Written: 30 * us, FirstByte: 1030 * us}},
		// A failure: in the effective latency, not in the HTTP trace.
		{Seq: 2, Scheduled: t0, Sent: t0, Duration: 5000 * us, Outcome: record.OutcomeError, Reason: record.ReasonHTTP5xx, Status: 500,
			Phases: record.Phases{Conn: record.ConnReused, Setup: 20 * us, Written: 30 * us, FirstByte: 4000 * us}},
		// Cancelled before its send: in neither.
		{Seq: 3, Scheduled: t0, Outcome: record.OutcomeCancelled},
	} {
		r.Observe(rec)
	}
	s := r.Summary()
	h := s.HTTP
	for _, c := range []struct {
		name       string
		got        float64
		count      int
		sum, wantN float64
	}{
		{"blocked", h.Blocked.Sum, h.Blocked.Count, 200e-6 + 20e-6, 2},  // setup less DNS, connect and TLS
		{"dns_lookup", h.DNSLookup.Sum, h.DNSLookup.Count, 100e-6, 2},   // 0 on the reused connection
		{"connecting", h.Connecting.Sum, h.Connecting.Count, 900e-6, 2}, // TCP and TLS
		{"connection_reused", h.Reused.Sum, h.Reused.Count, 1, 2},       // one of two
		{"connection_overhead", h.ConnectionOverhead.Sum, h.ConnectionOverhead.Count, 1220e-6, 2},
		{"sending", h.Sending.Sum, h.Sending.Count, 80e-6, 2},
		{"waiting", h.Waiting.Sum, h.Waiting.Count, 1950e-6 + 1000e-6, 2},        // written → first byte
		{"receiving", h.Receiving.Sum, h.Receiving.Count, 8000e-6 + 18970e-6, 2}, // first byte → end
		{"duration", h.Duration.Sum, h.Duration.Count, 30000e-6, 2},
		{"total", h.Total.Sum, h.Total.Count, 31220e-6, 2},
		{"effective_latency", s.EffectiveLatency.Sum, s.EffectiveLatency.Count, (1200 + 10000 + 3000 + 20000 + 5000) * 1e-6, 3},
	} {
		if math.Abs(c.got-c.sum) > 1e-12 || float64(c.count) != c.wantN {
			t.Errorf("%s: sum %v over %d requests, want %v over %v", c.name, c.got, c.count, c.sum, c.wantN)
		}
	}
}
