package report

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// TestContribute pins the counting rules every sink shares.
func TestContribute(t *testing.T) {
	ms := time.Millisecond
	sched := time.Unix(1_700_000_000, 0)
	stream := func() *record.Record {
		return &record.Record{Scheduled: sched, CapWait: 3 * ms, Sent: sched.Add(5 * ms),
			Chunks: []time.Duration{100 * ms, 110 * ms, 130 * ms}, FirstOutput: 1, Duration: 140 * ms,
			InputTokens: 10, OutputTokens: 3, ReasoningTokens: 1, PinnedOutputTokens: 4, Outcome: record.OutcomeOK}
	}
	for _, tc := range []struct {
		name string
		mod  func(*record.Record)
		want Contribution
		gaps []time.Duration
	}{
		{"success", func(*record.Record) {}, Contribution{HasLag: true, Lag: 2 * ms, CapWait: 3 * ms,
			TTFT: 100 * ms, TTFOT: 110 * ms, TTST: 10 * ms, HasTTFT: true, HasTTFOT: true, HasTTST: true,
			Duration: 140 * ms, ITL: 15 * ms, InputTokens: 10, OutputTokens: 3, ReasoningTokens: 1, PinnedOutputTokens: 4, Mismatch: true, Good: true},
			[]time.Duration{10 * ms, 20 * ms}},
		{"a pinned length counted in chunks is not judged", func(r *record.Record) { r.TokenSource = record.TokensFromChunks },
			Contribution{HasLag: true, Lag: 2 * ms, CapWait: 3 * ms,
				TTFT: 100 * ms, TTFOT: 110 * ms, TTST: 10 * ms, HasTTFT: true, HasTTFOT: true, HasTTST: true,
				Duration: 140 * ms, ITL: 15 * ms, InputTokens: 10, OutputTokens: 3, ReasoningTokens: 1, TokenSource: record.TokensFromChunks, PinnedOutputTokens: 4, Good: true},
			[]time.Duration{10 * ms, 20 * ms}},
		{"failure keeps its timings, not its lengths", func(r *record.Record) {
			r.Outcome, r.Reason = record.OutcomeError, record.ReasonStall
		}, Contribution{Outcome: record.OutcomeError, Reason: record.ReasonStall, HasLag: true, Lag: 2 * ms, CapWait: 3 * ms,
			TTFT: 100 * ms, TTFOT: 110 * ms, TTST: 10 * ms, HasTTFT: true, HasTTFOT: true, HasTTST: true, Duration: 140 * ms},
			[]time.Duration{10 * ms, 20 * ms}},
		{"cancelled keeps only its lag and cap wait", func(r *record.Record) { r.Outcome = record.OutcomeCancelled },
			Contribution{Outcome: record.OutcomeCancelled, HasLag: true, Lag: 2 * ms, CapWait: 3 * ms, Duration: 140 * ms}, nil},
		{"never sent: no lag", func(r *record.Record) {
			*r = record.Record{Scheduled: sched, CapWait: 3 * ms, FirstOutput: -1, Outcome: record.OutcomeCancelled}
		}, Contribution{Outcome: record.OutcomeCancelled, CapWait: 3 * ms}, nil},
		{"chunks in one read: no ITL", func(r *record.Record) { r.Chunks = []time.Duration{100 * ms, 100 * ms, 100 * ms} },
			Contribution{HasLag: true, Lag: 2 * ms, CapWait: 3 * ms,
				TTFT: 100 * ms, TTFOT: 100 * ms, HasTTFT: true, HasTTFOT: true, HasTTST: true,
				Duration: 140 * ms, InputTokens: 10, OutputTokens: 3, ReasoningTokens: 1, PinnedOutputTokens: 4, Mismatch: true, Good: true},
			[]time.Duration{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := stream()
			tc.mod(rec)
			got := Contribute(rec, SLO{})
			if gaps := slices.Collect(got.Gaps()); !slices.Equal(gaps, tc.gaps) {
				t.Errorf("gaps %v, want %v", gaps, tc.gaps)
			}
			got.chunks = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Contribute =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}
