package daemon

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/inferprobe/inferprobe/report"
)

// TestEarlierRunsJudge: the first run has no verdict; a run drawn like the
// earlier ones is not a regression; one 10 % slower to the first token is,
// in TTFT alone; and no more than keptRuns runs of keptSamples are kept.
func TestEarlierRunsJudge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	run := func(ttftScale float64) report.Samples {
		var s report.Samples
		for range 500 {
			s.TTFT = append(s.TTFT, ttftScale*0.02*math.Exp(0.3*rng.NormFloat64()))
			s.ITL = append(s.ITL, 0.01*math.Exp(0.3*rng.NormFloat64()))
			s.Latency = append(s.Latency, 0.1*math.Exp(0.1*rng.NormFloat64()))
		}
		return s
	}
	e := newEarlierRuns()
	if v := e.judge("nightly", "a", run(1)); v != nil {
		t.Fatalf("first run judged: %+v", v)
	}
	for range 2 {
		v := e.judge("nightly", "a", run(1))
		if v == nil || len(v.Metrics) != 3 {
			t.Fatalf("verdict %+v", v)
		}
		for _, m := range v.Metrics {
			if m.Regressed {
				t.Errorf("a run like the earlier ones regressed: %+v", m)
			}
		}
	}
	v := e.judge("nightly", "a", run(1.1))
	for _, m := range v.Metrics {
		if want := m.Metric == "time_to_first_token"; m.Regressed != want {
			t.Errorf("10 %% slower TTFT: %s regressed %v (%+v)", m.Metric, m.Regressed, m)
		}
	}
	if v.EarlierRuns != 3 {
		t.Errorf("judged against %d earlier runs, want 3", v.EarlierRuns)
	}

	for range keptRuns {
		e.judge("nightly", "a", run(1))
	}
	big := run(1)
	big.TTFT = append(big.TTFT, make([]float64, keptSamples)...)
	e.judge("nightly", "a", big)
	kept := e.runs[[2]string{"nightly", "a"}]
	if newest := kept[len(kept)-1]; len(kept) != keptRuns || len(newest.TTFT) != keptSamples {
		t.Errorf("kept %d runs, the newest with %d TTFT samples; want %d of at most %d", len(kept), len(newest.TTFT), keptRuns, keptSamples)
	}
	e.forget("nightly", "a")
	if len(e.runs) != 0 {
		t.Error("forget kept the runs")
	}
}
