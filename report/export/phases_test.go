package export

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/report"
)

// TestPhasesUserCentricPrefill: input_config's phases say a user-centric
// rate and a prefill cap as AIPerf 0.13 writes them (its run of
// --user-centric-rate 20 --num-users 3, and of --concurrency 6
// --prefill-concurrency 2 with a warmup).
func TestPhasesUserCentricPrefill(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{RequestCount: 12, RequestRate: 20, Users: 3},
			`[{"name":"profiling","kind":"profiling","type":"user_centric","requests":12,"rate":20,"users":3}]`},
		{Config{RequestCount: 12, Concurrency: 6, PrefillConcurrency: 2, WarmupRequests: 4},
			`[{"name":"warmup","kind":"warmup","type":"concurrency","requests":4,"concurrency":6,"prefill_concurrency":2},{"name":"profiling","kind":"profiling","type":"concurrency","requests":12,"concurrency":6,"prefill_concurrency":2}]`},
	} {
		b, err := json.Marshal(tc.c.inputConfig(report.SLO{}, nil))
		if err != nil {
			t.Fatal(err)
		}
		var in struct{ Phases json.RawMessage }
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(strings.Fields(string(in.Phases)), ""); got != tc.want {
			t.Errorf("phases\n%s\nwant\n%s", got, tc.want)
		}
	}
}
