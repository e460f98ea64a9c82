package report

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
)

// TestContribute pins the counting rules every sink shares.
func TestContribute(t *testing.T) {
	ms := time.Millisecond
	sched := time.Unix(1_700_000_000, 0)
	stream := func() *prober.Record {
		return &prober.Record{Scheduled: sched, CapWait: 3 * ms, Sent: sched.Add(5 * ms),
			Chunks: []time.Duration{100 * ms, 110 * ms, 130 * ms}, FirstOutput: 1, Duration: 140 * ms,
			InputTokens: 10, OutputTokens: 3, ReasoningTokens: 1, PinnedOutputTokens: 4, Outcome: prober.OutcomeOK}
	}
	for _, tc := range []struct {
		name string
		mod  func(*prober.Record)
		want Contribution
		gaps []time.Duration
	}{
		{"success", func(*prober.Record) {}, Contribution{HasLag: true, Lag: 2 * ms, CapWait: 3 * ms,
			TTFT: 100 * ms, TTFOT: 110 * ms, TTST: 10 * ms, HasTTFT: true, HasTTFOT: true, HasTTST: true,
			Duration: 140 * ms, ITL: 15 * ms, InputTokens: 10, OutputTokens: 3, ReasoningTokens: 1, PinnedOutputTokens: 4, Mismatch: true, Good: true},
			[]time.Duration{10 * ms, 20 * ms}},
		{"a pinned length counted in chunks is not judged", func(r *prober.Record) { r.TokenSource = prober.TokensFromChunks },
			Contribution{HasLag: true, Lag: 2 * ms, CapWait: 3 * ms,
				TTFT: 100 * ms, TTFOT: 110 * ms, TTST: 10 * ms, HasTTFT: true, HasTTFOT: true, HasTTST: true,
				Duration: 140 * ms, ITL: 15 * ms, InputTokens: 10, OutputTokens: 3, ReasoningTokens: 1, TokenSource: prober.TokensFromChunks, PinnedOutputTokens: 4, Good: true},
			[]time.Duration{10 * ms, 20 * ms}},
		{"failure keeps its timings, not its lengths", func(r *prober.Record) {
			r.Outcome, r.Reason = prober.OutcomeError, prober.ReasonStall
		}, Contribution{Outcome: prober.OutcomeError, Reason: prober.ReasonStall, HasLag: true, Lag: 2 * ms, CapWait: 3 * ms,
			TTFT: 100 * ms, TTFOT: 110 * ms, TTST: 10 * ms, HasTTFT: true, HasTTFOT: true, HasTTST: true, Duration: 140 * ms},
			[]time.Duration{10 * ms, 20 * ms}},
		{"cancelled keeps only its lag and cap wait", func(r *prober.Record) { r.Outcome = prober.OutcomeCancelled },
			Contribution{Outcome: prober.OutcomeCancelled, HasLag: true, Lag: 2 * ms, CapWait: 3 * ms, Duration: 140 * ms}, nil},
		{"never sent: no lag", func(r *prober.Record) {
			*r = prober.Record{Scheduled: sched, CapWait: 3 * ms, FirstOutput: -1, Outcome: prober.OutcomeCancelled}
		}, Contribution{Outcome: prober.OutcomeCancelled, CapWait: 3 * ms}, nil},
		{"chunks in one read: no ITL", func(r *prober.Record) { r.Chunks = []time.Duration{100 * ms, 100 * ms, 100 * ms} },
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
