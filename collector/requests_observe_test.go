package collector_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/stats"
)

const ms = time.Millisecond

var (
	labelsA = collector.Labels{Target: "t", Model: "m", Scenario: "a", Phase: "probe"}
	labelsB = collector.Labels{Target: "t", Model: "m", Scenario: "b", Phase: "probe"}
)

// Histogram families and their classic bucket counts (collector/histogram.go:
// 8 a factor of two over 13, 12 and 15 octaves for the latencies).
var histograms = map[string]int{
	"inferprobe_time_to_first_token_seconds":        105,
	"inferprobe_time_to_first_output_token_seconds": 105,
	"inferprobe_time_to_second_token_seconds":       97,
	"inferprobe_inter_token_latency_seconds":        97,
	"inferprobe_inter_chunk_latency_seconds":        97,
	"inferprobe_request_duration_seconds":           121,
	"inferprobe_input_tokens":                       18,
	"inferprobe_output_tokens":                      18,
	"inferprobe_schedule_lag_seconds":               13,
	"inferprobe_concurrency_wait_seconds":           121,
	"inferprobe_request_stage_seconds":              21,
}

// okRecord is a complete 4-chunk stream: TTFT 100ms, chunks 10ms apart, 4
// tokens (so ITL = 30ms / (4·3/4) = 10ms), 140ms in all, held 3ms by the
// concurrency cap and sent 2ms late after that, plus the 0.8ms that the
// network took to set up the connection dialled for it.
func okRecord() *record.Record {
	sched := time.Unix(1_700_000_000, 0)
	return &record.Record{
		Seq: 1, Scheduled: sched, CapWait: 3 * ms, Sent: sched.Add(5*ms + 800*time.Microsecond),
		Phases: record.Phases{Conn: record.ConnDialled, DNS: 100 * time.Microsecond, Connect: 200 * time.Microsecond, TLS: 500 * time.Microsecond,
			Setup: ms, Written: 50 * time.Microsecond, FirstByte: 20 * ms},
		Chunks:      []time.Duration{100 * ms, 110 * ms, 120 * ms, 130 * ms},
		FirstOutput: 1, Duration: 140 * ms,
		InputTokens: 10, OutputTokens: 4, TokenSource: record.TokensFromUsage,
	}
}

func withRecord(mod func(*record.Record)) *record.Record {
	r := okRecord()
	mod(r)
	return r
}

// sample is what one label set shows for one family: counter/gauge value, or a
// histogram's sample count and sum.
type sample struct {
	value, count, sum float64
}

func gather(t *testing.T, reg *prometheus.Registry) []*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// scenarioSamples returns, for every family with a series of scenario,
// "family{extra labels}" -> sample; extra labels are outcome / reason.
func scenarioSamples(mfs []*dto.MetricFamily, scenario string) map[string]sample {
	out := map[string]sample{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var extra []string
			match := false
			for _, lp := range m.GetLabel() {
				switch lp.GetName() {
				case "scenario":
					match = lp.GetValue() == scenario
				case "outcome", "reason", "token_source", "encoding", "stage", "connection":
					extra = append(extra, lp.GetName()+"="+lp.GetValue())
				}
			}
			if !match {
				continue
			}
			key := mf.GetName()
			if len(extra) > 0 {
				key += "{" + strings.Join(extra, ",") + "}"
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = sample{value: m.GetCounter().GetValue()}
			case dto.MetricType_GAUGE:
				out[key] = sample{value: m.GetGauge().GetValue()}
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[key] = sample{count: float64(h.GetSampleCount()), sum: h.GetSampleSum()}
			}
		}
	}
	return out
}

// nonZero drops the series that exist but hold nothing (a resolved Series
// creates every counter and histogram at zero).
func nonZero(s map[string]sample) map[string]sample {
	out := map[string]sample{}
	for k, v := range s {
		if v != (sample{}) {
			out[k] = v
		}
	}
	return out
}

func TestObserve(t *testing.T) {
	lag := sample{count: 1, sum: 0.002}
	capWait := sample{count: 1, sum: 0.003}
	// The stages up to the first byte count whatever the outcome, as the
	// lag does: they are the network's health and the client's.
	stagesWant := map[string]sample{
		"inferprobe_requests_by_connection_total{connection=dialled}": {value: 1},
		"inferprobe_request_stage_seconds{stage=dns}":                 {count: 1, sum: 0.0001},
		"inferprobe_request_stage_seconds{stage=connect}":             {count: 1, sum: 0.0002},
		"inferprobe_request_stage_seconds{stage=tls}":                 {count: 1, sum: 0.0005},
		"inferprobe_request_stage_seconds{stage=setup}":               {count: 1, sum: 0.001},
		"inferprobe_request_stage_seconds{stage=sending}":             {count: 1, sum: 0.00005},
		"inferprobe_request_stage_seconds{stage=waiting}":             {count: 1, sum: 0.01995},
	}
	firstToken := map[string]sample{"inferprobe_request_stage_seconds{stage=first_token}": {count: 1, sum: 0.080}}
	okWant := merge(stagesWant, firstToken, map[string]sample{
		"inferprobe_requests_total{outcome=ok}":                         {value: 1},
		"inferprobe_time_to_first_token_seconds":                        {count: 1, sum: 0.100},
		"inferprobe_time_to_first_output_token_seconds":                 {count: 1, sum: 0.110},
		"inferprobe_time_to_second_token_seconds":                       {count: 1, sum: 0.010},
		"inferprobe_inter_chunk_latency_seconds":                        {count: 3, sum: 0.030},
		"inferprobe_inter_token_latency_seconds":                        {count: 1, sum: 0.010},
		"inferprobe_request_duration_seconds":                           {count: 1, sum: 0.140},
		"inferprobe_input_tokens":                                       {count: 1, sum: 10},
		"inferprobe_output_tokens":                                      {count: 1, sum: 4},
		"inferprobe_input_tokens_total":                                 {value: 10},
		"inferprobe_output_tokens_total":                                {value: 4},
		"inferprobe_good_requests_total":                                {value: 1},
		"inferprobe_schedule_lag_seconds":                               lag,
		"inferprobe_concurrency_wait_seconds":                           capWait,
		"inferprobe_requests_by_token_source_total{token_source=usage}": {value: 1},
	})
	for _, tc := range []struct {
		name string
		rec  *record.Record
		want map[string]sample
	}{
		{"ok", okRecord(), okWant},
		{
			// A stream that stalled after three chunks had a real TTFT and
			// real gaps, but no length, duration or ITL worth recording.
			"error after chunks",
			withRecord(func(r *record.Record) {
				r.Chunks = r.Chunks[:3]
				r.Outcome, r.Reason, r.Duration = record.OutcomeError, record.ReasonStall, 5*time.Second
			}),
			merge(stagesWant, firstToken, map[string]sample{
				"inferprobe_requests_total{outcome=error}":      {value: 1},
				"inferprobe_request_errors_total{reason=stall}": {value: 1},
				"inferprobe_time_to_first_token_seconds":        {count: 1, sum: 0.100},
				"inferprobe_time_to_first_output_token_seconds": {count: 1, sum: 0.110},
				"inferprobe_time_to_second_token_seconds":       {count: 1, sum: 0.010},
				"inferprobe_inter_chunk_latency_seconds":        {count: 2, sum: 0.020},
				"inferprobe_schedule_lag_seconds":               lag,
				"inferprobe_concurrency_wait_seconds":           capWait,
			}),
		},
		{
			"error without chunks",
			withRecord(func(r *record.Record) {
				r.Chunks, r.FirstOutput, r.OutputTokens = nil, -1, 0
				r.Outcome, r.Reason, r.Status = record.OutcomeError, record.ReasonHTTP5xx, 503
			}),
			merge(stagesWant, map[string]sample{
				"inferprobe_requests_total{outcome=error}":         {value: 1},
				"inferprobe_request_errors_total{reason=http_5xx}": {value: 1},
				"inferprobe_schedule_lag_seconds":                  lag,
				"inferprobe_concurrency_wait_seconds":              capWait,
			}),
		},
		{
			// Cancelled by us (shutdown): counted as such and nothing else,
			// not even the chunks it got. The schedule lag is still observed:
			// the request was sent, and lag is client health (docs/metrics.md,
			// Failed and cancelled requests).
			"cancelled",
			withRecord(func(r *record.Record) { r.Outcome = record.OutcomeCancelled }),
			merge(stagesWant, map[string]sample{
				"inferprobe_requests_total{outcome=cancelled}": {value: 1},
				"inferprobe_schedule_lag_seconds":              lag,
				"inferprobe_concurrency_wait_seconds":          capWait,
			}),
		},
		{
			// Cancelled before its send: no send time to be late by. The cap
			// still held it.
			"never sent",
			&record.Record{Seq: 1, Scheduled: time.Unix(1_700_000_000, 0), CapWait: 3 * ms, FirstOutput: -1, Outcome: record.OutcomeCancelled},
			map[string]sample{
				"inferprobe_requests_total{outcome=cancelled}": {value: 1},
				"inferprobe_concurrency_wait_seconds":          capWait,
			},
		},
		{
			// Chunks that came in one read show no token timing.
			"chunks in one read: no ITL",
			withRecord(func(r *record.Record) { r.Chunks = []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms} }),
			merge(without(okWant, "inferprobe_inter_token_latency_seconds"), map[string]sample{
				"inferprobe_time_to_first_output_token_seconds": {count: 1, sum: 0.100},
				"inferprobe_time_to_second_token_seconds":       {count: 1},
				"inferprobe_inter_chunk_latency_seconds":        {count: 3},
			}),
		},
		{
			"sent again after a stale keep-alive connection",
			withRecord(func(r *record.Record) { r.ConnRetried = true }),
			merge(okWant, map[string]sample{"inferprobe_connection_retries_total": {value: 1}}),
		},
		{
			"on a connection of its own although keep-alive is on",
			withRecord(func(r *record.Record) { r.KeepAliveWithheld = true }),
			merge(okWant, map[string]sample{"inferprobe_keep_alive_withheld_total": {value: 1}}),
		},
		{
			// A retry happened whatever became of the request.
			"cancelled after a retry",
			withRecord(func(r *record.Record) { r.ConnRetried, r.Outcome = true, record.OutcomeCancelled }),
			merge(stagesWant, map[string]sample{
				"inferprobe_requests_total{outcome=cancelled}": {value: 1},
				"inferprobe_connection_retries_total":          {value: 1},
				"inferprobe_schedule_lag_seconds":              lag,
				"inferprobe_concurrency_wait_seconds":          capWait,
			}),
		},
		{
			"compressed reply",
			withRecord(func(r *record.Record) { r.Encoding = record.EncodingZstd }),
			merge(okWant, map[string]sample{"inferprobe_compressed_responses_total{encoding=zstd}": {value: 1}}),
		},
		{
			"reasoning tokens from usage",
			withRecord(func(r *record.Record) { r.ReasoningTokens = 3 }),
			merge(okWant, map[string]sample{"inferprobe_reasoning_tokens_total": {value: 3}}),
		},
		{
			// A server that stops sending usage changes how tokens are
			// counted: the source says so.
			"counted by the tokenizer",
			withRecord(func(r *record.Record) { r.TokenSource = record.TokensFromTokenizer }),
			merge(without(okWant, "inferprobe_requests_by_token_source_total{token_source=usage}"), map[string]sample{
				"inferprobe_requests_by_token_source_total{token_source=tokenizer}": {value: 1},
			}),
		},
		{
			"counted by chunks",
			withRecord(func(r *record.Record) { r.TokenSource = record.TokensFromChunks }),
			merge(without(okWant, "inferprobe_requests_by_token_source_total{token_source=usage}"), map[string]sample{
				"inferprobe_requests_by_token_source_total{token_source=chunks}": {value: 1},
			}),
		},
		{
			"reasoning only: no first output token",
			withRecord(func(r *record.Record) { r.FirstOutput = -1 }),
			without(okWant, "inferprobe_time_to_first_output_token_seconds"),
		},
		{
			"one chunk: no second token, gaps or ITL",
			withRecord(func(r *record.Record) { r.Chunks, r.FirstOutput, r.OutputTokens = r.Chunks[:1], 0, 1 }),
			merge(without(okWant, "inferprobe_time_to_second_token_seconds", "inferprobe_inter_chunk_latency_seconds",
				"inferprobe_inter_token_latency_seconds"), map[string]sample{
				"inferprobe_time_to_first_output_token_seconds": {count: 1, sum: 0.100},
				"inferprobe_output_tokens":                      {count: 1, sum: 1},
				"inferprobe_output_tokens_total":                {value: 1},
			}),
		},
		{
			"non-streamed: no chunks, so no TTFT",
			withRecord(func(r *record.Record) { r.Chunks, r.FirstOutput = nil, -1 }),
			without(okWant, "inferprobe_time_to_first_token_seconds", "inferprobe_time_to_first_output_token_seconds",
				"inferprobe_time_to_second_token_seconds", "inferprobe_inter_chunk_latency_seconds",
				"inferprobe_inter_token_latency_seconds", "inferprobe_request_stage_seconds{stage=first_token}"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			s := collector.NewRequests(reg).Series(labelsA, report.SLO{})
			s.Started()
			s.Observe(tc.rec)
			got := nonZero(scenarioSamples(gather(t, reg), "a"))
			if !equalSamples(got, tc.want) {
				t.Errorf("after Observe:\n%s", diff(got, tc.want))
			}
		})
	}
}

// TestSeriesAgreesWithReport: a stream's histograms and counters and a
// run's exact report count the same requests by the same rules.
func TestSeriesAgreesWithReport(t *testing.T) {
	recs := []*record.Record{
		okRecord(),
		withRecord(func(r *record.Record) { r.ReasoningTokens, r.PinnedOutputTokens = 2, 5 }),
		withRecord(func(r *record.Record) { r.FirstOutput, r.Chunks = -1, r.Chunks[:2] }),
		withRecord(func(r *record.Record) {
			r.Chunks, r.Outcome, r.Reason, r.Duration = r.Chunks[:3], record.OutcomeError, record.ReasonStall, 5*time.Second
		}),
		withRecord(func(r *record.Record) { r.Outcome = record.OutcomeCancelled }),
		{Seq: 9, Scheduled: time.Unix(1_700_000_000, 0), CapWait: 7 * ms, FirstOutput: -1, Outcome: record.OutcomeCancelled},
		withRecord(func(r *record.Record) { r.Chunks = []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms} }),
	}
	slo := report.SLO{TTFT: 100 * ms, TTFOT: 109 * ms}
	reg := prometheus.NewRegistry()
	series := collector.NewRequests(reg).Series(labelsA, slo)
	rep := report.NewReport(report.WithSLO(slo))
	tee := prober.Tee(series, rep)
	for _, rec := range recs {
		tee.Started()
		tee.Observe(rec)
	}
	got, sum := scenarioSamples(gather(t, reg), "a"), rep.Summary()
	for family, st := range map[string]stats.Stats{
		"inferprobe_time_to_first_token_seconds":        sum.TTFT,
		"inferprobe_time_to_first_output_token_seconds": sum.TTFOT,
		"inferprobe_time_to_second_token_seconds":       sum.TTST,
		"inferprobe_inter_token_latency_seconds":        sum.ITL,
		"inferprobe_inter_chunk_latency_seconds":        sum.InterChunk,
		"inferprobe_request_duration_seconds":           sum.Latency,
		"inferprobe_input_tokens":                       sum.InputTokens,
		"inferprobe_output_tokens":                      sum.OutputTokens,
		"inferprobe_schedule_lag_seconds":               sum.ScheduleLag,
		"inferprobe_concurrency_wait_seconds":           sum.CapWait,
	} {
		if h := got[family]; h.count != float64(st.Count) || !approx(h.sum, st.Avg*float64(st.Count)) {
			t.Errorf("%s: %v samples summing to %v; the report has %d averaging %v", family, h.count, h.sum, st.Count, st.Avg)
		}
	}
	for family, want := range map[string]float64{
		"inferprobe_requests_total{outcome=ok}":         float64(sum.OK),
		"inferprobe_requests_total{outcome=error}":      float64(sum.Failed),
		"inferprobe_requests_total{outcome=cancelled}":  float64(sum.Cancelled),
		"inferprobe_good_requests_total":                float64(sum.Good),
		"inferprobe_output_length_mismatches_total":     float64(sum.OutputLengthMismatches),
		"inferprobe_reasoning_tokens_total":             sum.ReasoningTokensTotal,
		"inferprobe_input_tokens_total":                 sum.InputTokensTotal,
		"inferprobe_output_tokens_total":                sum.OutputTokensTotal,
		"inferprobe_request_errors_total{reason=stall}": float64(sum.Errors[record.ReasonStall]),
	} {
		if got[family].value != want {
			t.Errorf("%s = %v; the report has %v", family, got[family].value, want)
		}
	}
	if sum.Good == 0 || sum.Good == sum.OK || sum.OutputLengthMismatches != 1 || sum.ScheduleLag.Count != len(recs)-1 {
		t.Errorf("the records do not exercise the rules: %+v", sum)
	}
}

func without(m map[string]sample, keys ...string) map[string]sample {
	out := maps.Clone(m)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func merge(a map[string]sample, more ...map[string]sample) map[string]sample {
	out := maps.Clone(a)
	for _, b := range more {
		maps.Copy(out, b)
	}
	return out
}

func equalSamples(got, want map[string]sample) bool {
	return maps.EqualFunc(got, want, func(g, w sample) bool {
		return g.value == w.value && g.count == w.count && approx(g.sum, w.sum)
	})
}

func approx(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}

func diff(got, want map[string]sample) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(merge(got, want))) {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !wok:
			b.WriteString("  unexpected ")
		case !gok:
			b.WriteString("  missing    ")
		case !equalSamples(map[string]sample{k: g}, map[string]sample{k: w}):
			b.WriteString("  differs    ")
		default:
			continue
		}
		b.WriteString(k)
		b.WriteString(": got ")
		b.WriteString(fmtSample(g, gok))
		b.WriteString(", want ")
		b.WriteString(fmtSample(w, wok))
		b.WriteByte('\n')
	}
	return b.String()
}

func fmtSample(s sample, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%+v", s)
}

// TestObserveNativeHistograms checks the exposed form: every histogram the ok
// record touches is native (schema 5, with spans and deltas) and classic (the
// configured buckets, cumulative up to the sample count).
func TestObserveNativeHistograms(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := collector.NewRequests(reg).Series(labelsA, report.SLO{})
	s.Started()
	s.Observe(okRecord())
	seen := map[string]bool{}
	for _, mf := range gather(t, reg) {
		classic, ok := histograms[mf.GetName()]
		if !ok {
			if mf.GetType() == dto.MetricType_HISTOGRAM {
				t.Errorf("%s: histogram not in the test's list", mf.GetName())
			}
			continue
		}
		seen[mf.GetName()] = true
		if mf.GetType() != dto.MetricType_HISTOGRAM || len(mf.GetMetric()) == 0 {
			t.Errorf("%s: type %v with %d series, want histograms", mf.GetName(), mf.GetType(), len(mf.GetMetric()))
			continue
		}
		for _, m := range mf.GetMetric() {
			checkNative(t, mf.GetName(), m.GetHistogram(), classic)
		}
	}
	if len(seen) != len(histograms) {
		t.Errorf("histograms exposed %v, want all of %v", slices.Sorted(maps.Keys(seen)), slices.Sorted(maps.Keys(histograms)))
	}
}

// checkNative checks that h, of family name, is native and classic both.
func checkNative(t *testing.T, name string, h *dto.Histogram, classic int) {
	t.Helper()
	if h.GetSchema() != 5 {
		t.Errorf("%s: schema %d, want 5 (native, bucket factor 1.03)", name, h.GetSchema())
	}
	if h.GetSampleCount() == 0 {
		t.Errorf("%s: no samples", name)
	}
	if len(h.GetPositiveSpan()) == 0 || len(h.GetPositiveDelta()) == 0 {
		t.Errorf("%s: no native buckets (spans %v, deltas %v)", name, h.GetPositiveSpan(), h.GetPositiveDelta())
	}
	var native int64
	var n int64
	for _, d := range h.GetPositiveDelta() {
		n += d
		native += n
	}
	if uint64(native)+h.GetZeroCount() != h.GetSampleCount() {
		t.Errorf("%s: native buckets hold %d + zero %d, want sample count %d", name, native, h.GetZeroCount(), h.GetSampleCount())
	}
	b := h.GetBucket()
	if len(b) != classic {
		t.Errorf("%s: %d classic buckets, want %d", name, len(b), classic)
	} else if last := b[len(b)-1]; last.GetCumulativeCount() != h.GetSampleCount() {
		t.Errorf("%s: last classic bucket (le %g) holds %d of %d samples", name, last.GetUpperBound(), last.GetCumulativeCount(), h.GetSampleCount())
	}
}

func TestGoodput(t *testing.T) {
	// okRecord: TTFT 100ms, TTFOT 110ms, ITL 10ms (100 tokens/s per user),
	// duration 140ms. A threshold equal to the measured value is met.
	for _, tc := range []struct {
		name string
		slo  report.SLO
		rec  *record.Record
		good float64
	}{
		{"no SLO", report.SLO{}, okRecord(), 1},
		{"ttft met", report.SLO{TTFT: 100 * ms}, okRecord(), 1},
		{"ttft missed", report.SLO{TTFT: 99 * ms}, okRecord(), 0},
		{"itl met", report.SLO{ITL: 10 * ms}, okRecord(), 1},
		{"itl missed", report.SLO{ITL: 9 * ms}, okRecord(), 0},
		{"latency met", report.SLO{RequestLatency: 140 * ms}, okRecord(), 1},
		{"latency missed", report.SLO{RequestLatency: 139 * ms}, okRecord(), 0},
		{"ttfot met", report.SLO{TTFOT: 110 * ms}, okRecord(), 1},
		{"ttfot missed", report.SLO{TTFOT: 109 * ms}, okRecord(), 0},
		{"ttfot set, reasoning only", report.SLO{TTFOT: time.Second},
			withRecord(func(r *record.Record) { r.FirstOutput = -1 }), 0},
		{"tokens per user met", report.SLO{MinTokensPerUser: 99.9}, okRecord(), 1},
		{"tokens per user missed", report.SLO{MinTokensPerUser: 100.1}, okRecord(), 0},
		{"tokens per user set, one chunk (ITL undefined)", report.SLO{MinTokensPerUser: 1e6},
			withRecord(func(r *record.Record) { r.Chunks, r.OutputTokens = r.Chunks[:1], 1 }), 1},
		{"tokens per user missed, itl met", report.SLO{ITL: 50 * ms, MinTokensPerUser: 200}, okRecord(), 0},
		{"all met", report.SLO{TTFT: time.Second, ITL: 50 * ms, RequestLatency: time.Second}, okRecord(), 1},
		{"ttft missed, others met", report.SLO{TTFT: 50 * ms, ITL: 50 * ms, RequestLatency: time.Second}, okRecord(), 0},
		{"itl missed, others met", report.SLO{TTFT: time.Second, ITL: 5 * ms, RequestLatency: time.Second}, okRecord(), 0},
		{"latency missed, others met", report.SLO{TTFT: time.Second, ITL: 50 * ms, RequestLatency: 100 * ms}, okRecord(), 0},
		{"ttft set, no chunks", report.SLO{TTFT: time.Second},
			withRecord(func(r *record.Record) { r.Chunks, r.FirstOutput = nil, -1 }), 0},
		{"itl set, one chunk (ITL undefined)", report.SLO{ITL: time.Millisecond},
			withRecord(func(r *record.Record) { r.Chunks, r.OutputTokens = r.Chunks[:1], 1 }), 1},
		{"error is never good", report.SLO{},
			withRecord(func(r *record.Record) { r.Outcome, r.Reason = record.OutcomeError, record.ReasonTruncated }), 0},
		{"cancelled is never good", report.SLO{},
			withRecord(func(r *record.Record) { r.Outcome = record.OutcomeCancelled }), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			s := collector.NewRequests(reg).Series(labelsA, tc.slo)
			s.Started()
			s.Observe(tc.rec)
			if got := scenarioSamples(gather(t, reg), "a")["inferprobe_good_requests_total"].value; got != tc.good {
				t.Errorf("good_requests_total = %v, want %v", got, tc.good)
			}
		})
	}
}

func TestOutputLengthMismatch(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pinned, out int
		outcome     record.Outcome
		want        float64
	}{
		{"not pinned", 0, 5, record.OutcomeOK, 0},
		{"pinned and met", 4, 4, record.OutcomeOK, 0},
		{"pinned, fewer", 4, 3, record.OutcomeOK, 1},
		{"pinned, more", 4, 5, record.OutcomeOK, 1},
		{"pinned, failed request", 4, 3, record.OutcomeError, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			s := collector.NewRequests(reg).Series(labelsA, report.SLO{})
			rec := withRecord(func(r *record.Record) {
				r.PinnedOutputTokens, r.OutputTokens, r.Outcome = tc.pinned, tc.out, tc.outcome
				if tc.outcome == record.OutcomeError {
					r.Reason = record.ReasonTruncated
				}
			})
			s.Started()
			s.Observe(rec)
			if got := scenarioSamples(gather(t, reg), "a")["inferprobe_output_length_mismatches_total"].value; got != tc.want {
				t.Errorf("output_length_mismatches_total = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestInFlight(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := collector.NewRequests(reg).Series(labelsA, report.SLO{})
	inFlight := func() float64 {
		return scenarioSamples(gather(t, reg), "a")["inferprobe_in_flight_requests"].value
	}
	steps := []struct {
		name string
		do   func()
		want float64
	}{
		{"start", s.Started, 1},
		{"start again", s.Started, 2},
		{"ok ends", func() { s.Observe(okRecord()) }, 1},
		{"start", s.Started, 2},
		{"error ends", func() {
			s.Observe(withRecord(func(r *record.Record) { r.Outcome, r.Reason = record.OutcomeError, record.ReasonConnect }))
		}, 1},
		{"cancelled ends", func() { s.Observe(withRecord(func(r *record.Record) { r.Outcome = record.OutcomeCancelled })) }, 0},
	}
	for _, st := range steps {
		st.do()
		if got := inFlight(); got != st.want {
			t.Fatalf("after %s: in_flight_requests = %v, want %v", st.name, got, st.want)
		}
	}
}

// TestForget: forgetting one stream removes its series from every family and
// leaves a stream that shares target, model and phase alone.
func TestForget(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := collector.NewRequests(reg)
	for _, l := range []collector.Labels{labelsA, labelsB} {
		s := r.Series(l, report.SLO{})
		for _, rec := range []*record.Record{
			okRecord(),
			withRecord(func(r *record.Record) { r.Outcome, r.Reason = record.OutcomeError, record.ReasonStall }),
			withRecord(func(r *record.Record) { r.Outcome = record.OutcomeCancelled }),
			withRecord(func(r *record.Record) { r.Encoding = record.EncodingGzip }),
		} {
			s.Started()
			s.Observe(rec)
		}
	}
	families := func() (a, b map[string]bool) {
		a, b = map[string]bool{}, map[string]bool{}
		for k := range scenarioSamples(gather(t, reg), "a") {
			a[k] = true
		}
		for k := range scenarioSamples(gather(t, reg), "b") {
			b[k] = true
		}
		return a, b
	}
	beforeA, beforeB := families()
	// Every request family: 10 histograms and 7 stages, 4 outcomes, every
	// reason but worker_lost (a loss, not an error), 3 token sources, 3
	// connection origins, 8 counters, every encoding, 1 gauge.
	if len(beforeA) != 36+len(record.Encodings)+len(record.Reasons)-1 || !maps.Equal(beforeA, beforeB) {
		t.Fatalf("before Forget: a has %d series %v, b has %v", len(beforeA), slices.Sorted(maps.Keys(beforeA)), slices.Sorted(maps.Keys(beforeB)))
	}

	r.Forget(labelsA)
	afterA, afterB := families()
	if len(afterA) != 0 {
		t.Errorf("after Forget(a), a still has %v", slices.Sorted(maps.Keys(afterA)))
	}
	if !maps.Equal(afterB, beforeB) {
		t.Errorf("after Forget(a), b has %v, want %v", slices.Sorted(maps.Keys(afterB)), slices.Sorted(maps.Keys(beforeB)))
	}

	// Forgetting a stream that was never seen is harmless.
	r.Forget(collector.Labels{Target: "x", Model: "m", Scenario: "a", Phase: "probe"})
	if _, b := families(); !maps.Equal(b, beforeB) {
		t.Errorf("Forget of an unknown stream changed b to %v", slices.Sorted(maps.Keys(b)))
	}
}

// TestTokenSourceSeries: each stream exports every token source from its
// start, so that a server that stops sending usage shows as a source rising
// from 0 rather than a series appearing.
func TestTokenSourceSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := collector.NewRequests(reg).Series(labelsA, report.SLO{})
	got := scenarioSamples(gather(t, reg), "a")
	for _, src := range []string{"usage", "tokenizer", "chunks"} {
		if _, ok := got["inferprobe_requests_by_token_source_total{token_source="+src+"}"]; !ok {
			t.Errorf("no %s series before any request: %v", src, slices.Sorted(maps.Keys(got)))
		}
	}
	for _, src := range []record.TokenSource{record.TokensFromUsage, record.TokensFromUsage, record.TokensFromChunks} {
		s.Started()
		s.Observe(withRecord(func(r *record.Record) { r.TokenSource = src }))
	}
	got = scenarioSamples(gather(t, reg), "a")
	for src, want := range map[string]float64{"usage": 2, "tokenizer": 0, "chunks": 1} {
		if v := got["inferprobe_requests_by_token_source_total{token_source="+src+"}"].value; v != want {
			t.Errorf("requests counted by %s = %v, want %v", src, v, want)
		}
	}
}

// TestErrorReasonsStartAtZero: every failure reason is exported at 0 from a stream's start, so
// that increase() over a window holding a series' first failure counts it (a series born at 1
// counts 0), and the error-ratio alert sees the first failures of a target.
func TestErrorReasonsStartAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	collector.NewRequests(reg).Series(labelsA, report.SLO{})
	got := map[string]bool{}
	for k, v := range scenarioSamples(gather(t, reg), "a") {
		if strings.HasPrefix(k, "inferprobe_request_errors_total{") {
			if v.value != 0 {
				t.Errorf("%s = %v before any request", k, v.value)
			}
			got[k] = true
		}
	}
	for _, r := range record.Reasons {
		if k := "inferprobe_request_errors_total{reason=" + string(r) + "}"; got[k] == r.ClientLoss() {
			t.Errorf("%s exported: %v, want %v (the client's losses are not errors)", k, got[k], !r.ClientLoss())
		}
	}
}

// TestCountersStartAtZero: every counter of a stream whose label values are known in
// advance (outcome, reason, token source, connection, encoding, none) is exported at 0
// from the stream's start, so that increase() over a window holding its first count sees it.
func TestCountersStartAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	collector.NewRequests(reg).Series(labelsA, report.SLO{})
	got := scenarioSamples(gather(t, reg), "a")
	want := []string{
		"inferprobe_input_tokens_total", "inferprobe_output_tokens_total", "inferprobe_reasoning_tokens_total",
		"inferprobe_good_requests_total", "inferprobe_output_length_mismatches_total", "inferprobe_connection_retries_total",
		"inferprobe_keep_alive_withheld_total", "inferprobe_client_paused_requests_total",
	}
	for _, o := range []string{"ok", "error", "cancelled", "lost"} {
		want = append(want, "inferprobe_requests_total{outcome="+o+"}")
	}
	for _, e := range []string{"gzip", "deflate", "br", "zstd"} {
		want = append(want, "inferprobe_compressed_responses_total{encoding="+e+"}")
	}
	for _, c := range []string{"dialled", "reused", "opened_ahead"} {
		want = append(want, "inferprobe_requests_by_connection_total{connection="+c+"}")
	}
	for _, k := range want {
		if v, ok := got[k]; !ok || v.value != 0 {
			t.Errorf("%s before any request: exported %v, value %v; want exported at 0", k, ok, v.value)
		}
	}
}

// TestWorkerLostIsTheClients: a request whose worker died is counted as
// lost, neither as an error of the target nor in any timing.
func TestWorkerLostIsTheClients(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := collector.NewRequests(reg).Series(labelsA, report.SLO{})
	s.Started()
	s.Observe(record.Unsent(1, record.RequestID{}, time.Unix(1_700_000_000, 0), record.OutcomeError, record.ReasonWorkerLost, "worker exited"))
	got := nonZero(scenarioSamples(gather(t, reg), "a"))
	want := map[string]sample{"inferprobe_requests_total{outcome=lost}": {value: 1}, "inferprobe_concurrency_wait_seconds": {count: 1}}
	if !equalSamples(got, want) {
		t.Errorf("a request lost with its worker: %s", diff(got, want))
	}
}

// TestClientPausedLeftOut: a request that overlapped a pause of the client
// is counted in client_paused_requests_total and in nothing else, so its
// timings, which are the client's, reach no histogram.
func TestClientPausedLeftOut(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := collector.NewRequests(reg).Series(labelsA, report.SLO{})
	s.Started()
	s.Observe(withRecord(func(r *record.Record) { r.ClientPaused = 2 * time.Second }))
	got := nonZero(scenarioSamples(gather(t, reg), "a"))
	want := map[string]sample{"inferprobe_client_paused_requests_total": {value: 1}}
	if !equalSamples(got, want) {
		t.Errorf("a client-paused request: %s", diff(got, want))
	}
}
