package export_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/report/export"
)

// TestAgreementCalibration measures the multi-run verdict on seeded
// synthetic runs of 500 requests (those of TestCompareCalibration): three
// runs drawn alike must agree in at least 9 of 10 multi-runs, and a third
// run 10 % slower to the first token must make them differ in TTFT in 10
// of 10.
func TestAgreementCalibration(t *testing.T) {
	// A statistical calibration, not a test of concurrency, as
	// TestCompareCalibration.
	if testing.Short() || raceEnabled {
		t.Skip("20 multi-runs of three runs of 500 requests")
	}
	const multiRuns = 10
	type verdict struct {
		Metadata struct {
			Inferprobe struct {
				Agree     bool `json:"runs_agree"`
				Agreement map[string]struct {
					Significant bool `json:"significant"`
				} `json:"agreement"`
			} `json:"inferprobe"`
		} `json:"metadata"`
	}
	judge := func(runs ...export.Run) verdict {
		m := export.MultiRun{Level: .95}
		for i, r := range runs {
			tr, err := export.NewTrial(i, export.TrialDir(i, "", ""), r, "")
			if err != nil {
				t.Fatal(err)
			}
			m.Trials = append(m.Trials, tr)
		}
		b, err := export.AggregateJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		var v verdict
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	agreed, caught := 0, 0
	for i := range uint64(multiRuns) {
		a, b := syntheticRun(3*i+1, 20*time.Millisecond), syntheticRun(3*i+2, 20*time.Millisecond)
		if v := judge(a, b, syntheticRun(3*i+3, 20*time.Millisecond)); v.Metadata.Inferprobe.Agree {
			agreed++
		} else {
			t.Logf("multi-run %d, alike, judged to differ: %+v", i, v.Metadata.Inferprobe.Agreement)
		}
		if v := judge(a, b, syntheticRun(3*i+3, 22*time.Millisecond)); !v.Metadata.Inferprobe.Agree && v.Metadata.Inferprobe.Agreement["time_to_first_token"].Significant {
			caught++
		} else {
			t.Logf("multi-run %d, a run 10 %% slower, not caught: %+v", i, v.Metadata.Inferprobe.Agreement)
		}
	}
	t.Logf("alike: agree in %d of %d multi-runs; a run 10 %% slower in TTFT: differ in TTFT in %d of %d", agreed, multiRuns, caught, multiRuns)
	if agreed < multiRuns-1 || caught < multiRuns {
		t.Errorf("alike: agree in %d of %d (want ≥ %d); a run 10 %% slower: caught in %d of %d (want all)", agreed, multiRuns, multiRuns-1, caught, multiRuns)
	}
}
