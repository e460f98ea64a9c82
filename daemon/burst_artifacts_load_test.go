package daemon

import (
	"testing"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/scenarios"
)

// TestBurstExportUserCentricPrefill: a burst's input_config says its
// user-centric rate and prefill cap as bench's does (AIPerf's phase type
// user_centric with users, and prefill_concurrency).
func TestBurstExportUserCentricPrefill(t *testing.T) {
	probe := &scenarios.Probe{Arrival: scenarios.Arrival{Pattern: scenarios.ArrivalUserCentric, Rate: 4, Users: 8, MaxConcurrency: 6, MaxPrefillConcurrency: 2}}
	c := burstExportConfig(&burstSpec{}, &finite.Plan{Probe: probe})
	if c.Users != 8 || c.RequestRate != 4 || c.Concurrency != 6 || c.PrefillConcurrency != 2 {
		t.Errorf("export config %+v; want 8 users sharing 4/s, capped at 6 in flight and 2 waiting for a first token", c)
	}
}
