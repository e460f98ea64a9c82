package daemon_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/simulator"
)

// waitEnded waits up to within for run id to end on d.
func waitEnded(t *testing.T, d *daemon.Daemon, id string, within time.Duration) daemon.RunInfo {
	t.Helper()
	var ri daemon.RunInfo
	for deadline := time.Now().Add(within); ri.Ended.IsZero(); time.Sleep(10 * time.Millisecond) {
		if ri, _ = d.BurstRun(id); time.Now().After(deadline) {
			t.Fatalf("run %s did not end within %s: %+v", id, within, ri)
		}
	}
	return ri
}

// TestClusterSearchAgainstSimulator: a search burst triggered on one of two
// replicas runs as one cluster run: each step is split across both, judged
// on both replicas' records merged, and finds the simulator's known
// capacity within one step; the coordinator alone exports the capacity
// gauges, and both replicas show the whole search.
func TestClusterSearchAgainstSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a search against the simulator")
	}
	// The single-replica search test's profile and SLO (each side of the
	// SLO is 250ms from it), with six slots: the answer lies inside the
	// steps' bounds, and a step whose load were not split (twice the
	// concurrency) would break the SLO at the lowest.
	cfg := simulator.Config{MaxConcurrency: 6, Profile: simulator.Profile{TTFT: 300 * time.Millisecond, ITL: 50 * time.Millisecond}}
	const isl, osl, slo, requests = 16, 5, 550 * time.Millisecond, 18
	want := cfg.Capacity(slo, 0.95, isl, osl)
	sim, err := simulator.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	yml := strings.ReplaceAll(fmt.Sprintf(`
targets:
  sim: {url: URL/v1, model: inferprobe-simulator}
bursts:
  capacity:
    target: sim
    on_demand: true
    requests: %d
    arrival: {pattern: concurrency, concurrency: 1}
    dataset: {synthetic: {input_tokens: {mean: %d}, output_tokens: {mean: %d}}}
    params: {ignore_eos: true}
    search: {recipe: max-concurrency-under-sla, ttft_sla: %s, concurrency_min: 4, concurrency_max: 16, sla_warmup: 0s}
`, requests, isl, osl, slo), "URL", srv.URL)
	rs := startClusterOn(t, yml, 2, []int{0, 1}, sameToken, func(int) []daemon.Option { return nil }, func() prober.Executor { return prober.NewClient() })
	started := trigger(t, rs[0].d, "capacity", daemon.BurstOverrides{})
	ri := waitEnded(t, rs[0].d, started.ID, time.Minute)
	if ri.State != daemon.RunSucceeded || ri.Cluster == nil || !ri.Cluster.Merged || ri.Cluster.Partial {
		t.Fatalf("the cluster search ended %s (%s), cluster part %+v; want succeeded, merged and whole", ri.State, ri.Error, ri.Cluster)
	}
	s := ri.Search
	if s == nil || len(s.Steps) == 0 || s.FirstInfeasible != 0 && s.FirstInfeasible <= s.Capacity {
		t.Fatalf("search %+v", s)
	}
	t.Logf("cluster search: capacity %d (the model's %d), %s, steps %+v", s.Capacity, want, s.Reason, s.Steps)
	// As in the single-replica test, under -race the answer is the
	// machine's: only what holds whatever the timing is checked.
	if !raceEnabled && (s.Capacity < want-1 || s.Capacity > want+1 || len(s.Steps) < 3) {
		t.Errorf("cluster search %+v, want capacity %d within one", s, want)
	}
	// The answer's report is the step's across both replicas: every
	// request of the step, not one replica's half.
	if ri.Report.Summary.OK != requests {
		t.Errorf("the answer step's report counts %d requests, want the whole step's %d", ri.Report.Summary.OK, requests)
	}
	for _, st := range s.Steps {
		if st.Concurrency < 4 || st.Concurrency > 16 {
			t.Errorf("a step at %d, outside 4..16", st.Concurrency)
		}
	}
	peer := waitMerged(t, rs[1].d, started.ID)
	if peer.Search == nil || peer.Search.Capacity != s.Capacity || peer.Report.Summary.OK != requests {
		t.Errorf("the peer shows search %+v with %d requests, want the coordinator's %+v", peer.Search, peer.Report.Summary.OK, s)
	}
	labels := map[string]string{"burst": "capacity", "target": "sim"}
	if v, ok := metric(t, rs[0].d, "inferprobe_capacity_concurrency", labels); !ok || v != float64(s.Capacity) {
		t.Errorf("the coordinator's inferprobe_capacity_concurrency = %v (exported %v), want %d", v, ok, s.Capacity)
	}
	if v, ok := metric(t, rs[1].d, "inferprobe_capacity_concurrency", labels); ok {
		t.Errorf("the peer exports inferprobe_capacity_concurrency %v: the gauges are the coordinator's", v)
	}
	if v, ok := metric(t, rs[0].d, "inferprobe_cluster_call_errors_total", map[string]string{"call": "step"}); !ok || v != 0 {
		t.Errorf("inferprobe_cluster_call_errors_total{call=step} = %v (exported %v), want 0", v, ok)
	}
}

const clusterSearchBurst = "s: {target: tb, on_demand: true, requests: 8, arrival: {pattern: concurrency, concurrency: 1}, dataset: {synthetic: {input_tokens: {mean: 8}, output_tokens: {mean: 2}}}, search: {recipe: max-concurrency-under-sla, ttft_sla: 1s, concurrency_min: %d, concurrency_max: 8, sla_warmup: 0s}}"

// TestClusterSearchCancelOnPeer: a cancel on the replica that does not
// coordinate a cluster search stops the whole search, on both replicas,
// during its first step.
func TestClusterSearchCancelOnPeer(t *testing.T) {
	rs := startCluster(t, burstYAML(fmt.Sprintf(clusterSearchBurst, 2)), 2, []int{0, 1}, sameToken)
	for _, r := range rs {
		t.Cleanup(r.exec.gate("tb")) // no step ends by itself
	}
	id := trigger(t, rs[0].d, "s", daemon.BurstOverrides{}).ID
	waitFor(t, "both replicas to send their share of the first step", func() bool {
		return rs[0].exec.running() > 0 && rs[1].exec.running() > 0
	})
	if _, err := rs[1].d.CancelBurst(id); err != nil {
		t.Fatalf("cancel on the peer: %v", err)
	}
	for i, r := range rs {
		if ri := waitEnded(t, r.d, id, patience); ri.State != daemon.RunCancelled {
			t.Errorf("replica %d: the search ended %s (%s), want cancelled", i, ri.State, ri.Error)
		}
	}
	// Each replica sent its own share of the step's sequence.
	for i, r := range rs {
		for _, seq := range r.exec.sent("tb") {
			if seq%2 != uint64(i) {
				t.Errorf("replica %d sent request %d, shard %d's", i, seq, seq%2)
			}
		}
	}
	sent := len(rs[0].exec.sent("tb")) + len(rs[1].exec.sent("tb"))
	time.Sleep(200 * time.Millisecond)
	if now := len(rs[0].exec.sent("tb")) + len(rs[1].exec.sent("tb")); now != sent {
		t.Errorf("%d requests sent after the search was cancelled", now-sent)
	}
}

// TestClusterSearchRefused: a cluster search whose lowest step cannot be
// split across the replicas fails, saying what to set, and the peer's
// share ends with it rather than holding its target; one with a replica
// down fails naming it, since no step would carry the concurrency asked.
func TestClusterSearchRefused(t *testing.T) {
	down := startCluster(t, burstYAML(fmt.Sprintf(clusterSearchBurst, 2)), 2, []int{0}, sameToken)
	ri := waitEnded(t, down[0].d, trigger(t, down[0].d, "s", daemon.BurstOverrides{}).ID, patience)
	if ri.State != daemon.RunFailed || !strings.Contains(ri.Error, "needs every replica") || !strings.Contains(ri.Error, "shard 1") {
		t.Errorf("a cluster search with shard 1 down ended %s: %q", ri.State, ri.Error)
	}
	if n := len(down[0].exec.sent("tb")); n != 0 {
		t.Errorf("the search with a replica down sent %d requests", n)
	}

	rs := startCluster(t, burstYAML(fmt.Sprintf(clusterSearchBurst, 1)), 2, []int{0, 1}, sameToken)
	id := trigger(t, rs[0].d, "s", daemon.BurstOverrides{}).ID
	if ri := waitEnded(t, rs[0].d, id, patience); ri.State != daemon.RunFailed || !strings.Contains(ri.Error, "concurrency_min to at least 2") {
		t.Errorf("a cluster search from concurrency 1 across 2 replicas ended %s: %q", ri.State, ri.Error)
	}
	if ri := waitEnded(t, rs[1].d, id, patience); ri.State != daemon.RunFailed {
		t.Errorf("the peer's share ended %s (%s), want failed", ri.State, ri.Error)
	}
	// The peer's target is free again: a run started there goes ahead.
	if _, err := rs[1].d.TriggerBurst("s", daemon.BurstOverrides{}); err != nil {
		t.Errorf("a run on the peer after the refused search: %v", err)
	}
}

// TestClusterSearchPeerLeaves: a replica that leaves after the first step
// (drained between steps) ends the search: the next step, which it cannot
// carry its share of, is not judged, and the run keeps the first step's
// answer, partial, naming the shard.
func TestClusterSearchPeerLeaves(t *testing.T) {
	rs := startCluster(t, burstYAML(fmt.Sprintf(clusterSearchBurst, 2)), 2, []int{0, 1}, sameToken)
	id := trigger(t, rs[0].d, "s", daemon.BurstOverrides{}).ID
	// Each step starts --cluster.start-lead (500ms) after the last one's
	// gather. The peer's share of the second step is held, and the peer
	// leaves once the coordinator has started that step, so after the
	// first step was gathered (the peer's own requests ending is not
	// enough: its share may not have been gathered yet) and before the
	// second can end whole.
	waitFor(t, "the peer to send its share of the first step", func() bool {
		return len(rs[1].exec.sent("tb")) >= 4 && rs[1].exec.running() == 0
	})
	release := rs[1].exec.gate("tb")
	defer release()
	waitFor(t, "the coordinator to start the second step", func() bool { return len(rs[0].exec.sent("tb")) > 4 })
	if err := rs[1].stop(); err != nil {
		t.Fatal(err)
	}
	ri := waitEnded(t, rs[0].d, id, patience)
	switch {
	case ri.Search == nil || len(ri.Search.Steps) == 0:
		t.Fatalf("the search ended %s (%s) without steps, want the first step's", ri.State, ri.Error)
	case ri.Cluster == nil || !ri.Cluster.Partial || len(ri.Cluster.Missing) != 1 || ri.Cluster.Missing[0].Shard != 1:
		t.Errorf("the search's cluster part %+v, want partial, missing shard 1", ri.Cluster)
	}
	t.Logf("ended %s; missing %+v", ri.State, ri.Cluster.Missing)
	if n := len(ri.Search.Steps); n > 1 {
		t.Errorf("the search judged %d steps, want only the first, before the peer left: %+v", n, ri.Search.Steps)
	}
}
