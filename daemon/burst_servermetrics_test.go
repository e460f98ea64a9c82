package daemon_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/simulator"
)

// TestBurstServerMetrics: a burst's report carries what the target's own
// metrics said over the run (the simulator's vLLM-style /metrics), and the
// daemon does not serve the engine's series itself; a target with
// server_metrics: off has none.
func TestBurstServerMetrics(t *testing.T) {
	sim, err := simulator.New(simulator.Config{Profile: simulator.Profile{TTFT: 5 * time.Millisecond, ITL: time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	simSrv := httptest.NewServer(sim.Handler())
	defer simSrv.Close()
	d, _, _ := startBursts(t, strings.ReplaceAll(`
targets:
  sim: {url: URL/v1, model: inferprobe-simulator}
  quiet: {url: URL/v1, model: inferprobe-simulator, server_metrics: "off"}
bursts:
  off:
    target: quiet
    on_demand: true
    requests: 2
    arrival: {pattern: concurrency, concurrency: 1}
    dataset: {synthetic: {input_tokens: {mean: 8}, output_tokens: {mean: 4}}}
  load:
    target: sim
    on_demand: true
    requests: 12
    arrival: {pattern: concurrency, concurrency: 3}
    dataset: {synthetic: {input_tokens: {mean: 8}, output_tokens: {mean: 4}}}
`, "URL", simSrv.URL), prober.NewClient())
	ri := waitRun(t, d, trigger(t, d, "load", daemon.BurstOverrides{}).ID, daemon.RunSucceeded)
	sm := ri.Report.ServerMetrics
	if sm == nil || len(sm.Engines) != 1 {
		t.Fatalf("report's server metrics = %+v, want the simulator's", sm)
	}
	e := sm.Engines[0]
	if e.Engine != "vllm" || e.Endpoint != simSrv.URL+"/metrics" || e.Running == nil || e.KVCache == nil ||
		e.TTFT == nil || e.TTFT.Count != 12 || e.ClientTTFT == nil || e.TTFTGap == nil {
		t.Errorf("server side = %+v", e)
	}
	if off := waitRun(t, d, trigger(t, d, "off", daemon.BurstOverrides{}).ID, daemon.RunSucceeded); off.Report.ServerMetrics != nil {
		t.Errorf("a target with server_metrics: off has server metrics: %+v", off.Report.ServerMetrics)
	}
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "vllm") {
			t.Errorf("the daemon serves the engine's %s", mf.GetName())
		}
	}
}
