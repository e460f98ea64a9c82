package daemon_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/cluster"
	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
)

const clusterToken = "cluster-secret"

// replica is one daemon of a test cluster, served on loopback.
type replica struct {
	d    *daemon.Daemon
	exec *fakeExec
	addr string
	stop func() error // drains the daemon and waits for Run to return
}

// startCluster runs a daemon for each shard of n listed in up on its own
// loopback port, all with a --cluster.peers of every shard's address; a
// shard not in up has an address where nothing listens. token, per shard,
// is the bearer token its API takes and its cluster calls send.
func startCluster(t *testing.T, yml string, n int, up []int, token func(shard int) string) []*replica {
	t.Helper()
	return startClusterWith(t, yml, n, up, token, func(int) []daemon.Option { return nil })
}

// startClusterWith is startCluster with further options for each shard.
func startClusterWith(t *testing.T, yml string, n int, up []int, token func(shard int) string, opts func(shard int) []daemon.Option) []*replica {
	t.Helper()
	return startClusterOn(t, yml, n, up, token, opts, func() prober.Executor { return newFakeExec() })
}

// startClusterOn is startClusterWith with each replica's executor made by
// newExec; a replica's exec is nil when it is not a fake.
func startClusterOn(t *testing.T, yml string, n int, up []int, token func(shard int) string, opts func(shard int) []daemon.Option, newExec func() prober.Executor) []*replica {
	t.Helper()
	listeners := make([]net.Listener, n)
	addrs := make([]string, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listeners[i], addrs[i] = l, l.Addr().String()
		if !slices.Contains(up, i) {
			l.Close() // down: nothing answers there
		}
	}
	peers, err := cluster.ParsePeers(strings.Join(addrs, ","))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*replica, n)
	for _, i := range up {
		exec := newExec()
		d, _, stop := startBursts(t, yml, exec, append(opts(i), daemon.WithShard(record.Shard{Index: i, Count: n}),
			daemon.WithCluster(daemon.ClusterOptions{Peers: peers, Client: cluster.NewClient(token(i), nil), Lead: 500 * time.Millisecond}))...)
		h, err := d.Handler(false, daemon.BurstAPIOptions{Enabled: true, Token: token(i)})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(h)
		srv.Listener.Close()
		srv.Listener = listeners[i]
		srv.Start()
		t.Cleanup(srv.Close)
		fake, _ := exec.(*fakeExec)
		out[i] = &replica{d: d, exec: fake, addr: addrs[i], stop: stop}
	}
	return out
}

func sameToken(int) string { return clusterToken }

// waitMerged waits until d shows run id with the gathered report.
func waitMerged(t *testing.T, d *daemon.Daemon, id string) daemon.RunInfo {
	t.Helper()
	var ri daemon.RunInfo
	waitFor(t, "run "+id+" to show its gathered report", func() bool {
		var ok bool
		ri, ok = d.BurstRun(id)
		return ok && ri.Cluster != nil && ri.Cluster.Merged
	})
	return ri
}

const clusterBurst = "s: {target: tb, on_demand: true, requests: 30, arrival: {pattern: poisson, rate: 200}, dataset: {synthetic: {input_tokens: {mean: 8, stddev: 3}, output_tokens: {mean: 2}}}}"

// TestClusterGather: a run triggered on one replica runs on all three from
// the agreed start, each sending its share, and every replica serves one
// report with the request count, digest and samples of the run unsharded.
func TestClusterGather(t *testing.T) {
	yml := burstYAML(clusterBurst)
	alone, _, _ := startBursts(t, yml, newFakeExec())
	want := waitRun(t, alone, trigger(t, alone, "s", daemon.BurstOverrides{}).ID, daemon.RunSucceeded)

	rs := startCluster(t, yml, 3, []int{0, 1, 2}, sameToken)
	started := trigger(t, rs[1].d, "s", daemon.BurstOverrides{})
	if started.Cluster == nil || started.Cluster.Gatherer != 1 || started.Cluster.Shards != 3 {
		t.Fatalf("triggered run's cluster part: %+v, want gathered by shard 1 of 3", started.Cluster)
	}
	got := waitMerged(t, rs[1].d, started.ID)
	if got.State != daemon.RunSucceeded || got.Cluster.Partial {
		t.Fatalf("cluster run: %s, %+v; want succeeded and whole", got.State, got.Cluster)
	}
	for i, r := range rs {
		ri := waitMerged(t, r.d, started.ID)
		s, w := ri.Report.Summary, want.Report.Summary
		if ri.Report.Digest != want.Report.Digest || s.OK != w.OK || !reflect.DeepEqual(s.InputTokens, w.InputTokens) || s.TTFT.Count != w.TTFT.Count {
			t.Errorf("replica %d: digest %s, %d ok, input lengths %+v; unsharded: %s, %d, %+v", i, ri.Report.Digest, s.OK, s.InputTokens, want.Report.Digest, w.OK, w.InputTokens)
		}
		if !s.Start.After(started.Cluster.StartAt) && !s.Start.Equal(started.Cluster.StartAt) {
			t.Errorf("replica %d: first request sent at %s, before the agreed start %s", i, s.Start, started.Cluster.StartAt)
		}
		for _, seq := range r.exec.sent("tb") {
			if seq%3 != uint64(i) {
				t.Errorf("replica %d sent request %d, shard %d's", i, seq, seq%3)
			}
		}
	}
	if v, _ := metric(t, rs[1].d, "inferprobe_burst_last_request_throughput", nil); v == 0 {
		t.Error("the gatherer's last-run gauges do not describe the run")
	}
	if _, ok := metric(t, rs[0].d, "inferprobe_burst_last_request_throughput", map[string]string{"burst": "s"}); ok {
		t.Error("a replica that did not gather shows its share on the last-run gauges")
	}
	// The gatherer keeps the whole run's artifacts, one JSONL line per request of every
	// share; the other replicas, whose shares are parts of it, keep none.
	for i, r := range rs {
		a, err := r.d.BurstArtifact(started.ID, "profile_export.jsonl")
		if i != 1 {
			if !errors.Is(err, daemon.ErrNoArtifact) {
				t.Errorf("replica %d, not the gatherer: artifacts %v, want ErrNoArtifact", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("the gatherer's artifacts: %v", err)
		}
		b, _ := io.ReadAll(a.Content)
		a.Close()
		if n := bytes.Count(b, []byte("\n")); n != want.Report.Summary.OK {
			t.Errorf("the gatherer's profile_export.jsonl has %d lines, want the whole run's %d requests", n, want.Report.Summary.OK)
		}
	}
}

// TestClusterPeerDown: with one replica of three down, a run goes ahead on
// the other two and its report is marked partial, naming the missing shard
// and the peer that did not answer; a peer with another token counts as
// one that did not start.
func TestClusterPeerDown(t *testing.T) {
	yml := burstYAML(clusterBurst)
	token := func(shard int) string {
		if shard == 1 {
			return "another"
		}
		return clusterToken
	}
	rs := startCluster(t, yml, 3, []int{0, 1}, token)
	ri := waitMerged(t, rs[0].d, trigger(t, rs[0].d, "s", daemon.BurstOverrides{}).ID)
	c := ri.Cluster
	if !c.Partial || len(c.Missing) != 2 {
		t.Fatalf("run with shard 2 down and shard 1 refusing the token: %+v, want partial naming both", c)
	}
	// Neither peer answered, so neither said which shard it is: each
	// missing shard names both, and why each did not answer.
	for i, p := range c.Missing {
		if p.Shard != i+1 || !strings.Contains(p.Peer, rs[1].addr) || !strings.Contains(p.Error, "401") || !strings.Contains(p.Error, "refused") {
			t.Errorf("missing shard %d is named %+v, want shard %d naming %s's 401 and the refused connection", i+1, p, i+1, rs[1].addr)
		}
	}
	if ri.Report.Summary.OK != 10 { // shard 0's share of 30
		t.Errorf("partial report counts %d requests, want shard 0's 10", ri.Report.Summary.OK)
	}
	if v, _ := metric(t, rs[0].d, "inferprobe_cluster_peer_up", map[string]string{"peer": rs[1].addr}); v != 0 {
		t.Errorf("inferprobe_cluster_peer_up of the refusing peer = %v, want 0", v)
	}
	if v, _ := metric(t, rs[0].d, "inferprobe_cluster_call_errors_total", map[string]string{"call": "info"}); v < 2 {
		t.Errorf("inferprobe_cluster_call_errors_total{call=info} = %v, want the two failed calls", v)
	}
}

// TestClusterGathererDrains: a gatherer shut down while it waits for a
// peer's share stops waiting once its grace period is over, rather than
// after the gather's slack, and its report is the partial one.
func TestClusterGathererDrains(t *testing.T) {
	const grace = 200 * time.Millisecond
	rs := startClusterWith(t, burstYAML(clusterBurst), 2, []int{0, 1}, sameToken, func(shard int) []daemon.Option {
		return []daemon.Option{daemon.WithGracePeriod(grace)}
	})
	open := rs[1].exec.gate("tb") // shard 1's share never ends
	t.Cleanup(open)
	id := trigger(t, rs[0].d, "s", daemon.BurstOverrides{}).ID
	waitFor(t, "shard 0 to send its share and shard 1 to start", func() bool {
		return len(rs[0].exec.sent("tb")) == 15 && rs[0].exec.running() == 0 && rs[1].exec.running() > 0
	})
	began := time.Now()
	if err := rs[0].stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > grace+5*time.Second {
		t.Errorf("the gatherer took %v to shut down with a grace period of %v", took, grace)
	}
	ri, ok := rs[0].d.BurstRun(id)
	switch {
	case !ok || ri.Cluster == nil || !ri.Cluster.Merged:
		t.Fatalf("run %s after the drain: %+v, want its gathered report", id, ri)
	case !ri.Cluster.Partial || len(ri.Cluster.Missing) != 1 || ri.Cluster.Missing[0].Shard != 1 || !strings.Contains(ri.Cluster.Missing[0].Error, "grace period"):
		t.Errorf("report after the drain: %+v, want partial, missing shard 1 for the grace period's end", ri.Cluster)
	}
}

// TestClusterStartAgreement: a replica refuses a share whose agreed start
// has passed (it would start late), a share of a burst configured
// otherwise, and a caller without the token; and a cluster whose replicas
// disagree with --shard refuses to start.
func TestClusterStartAgreement(t *testing.T) {
	rs := startCluster(t, burstYAML(clusterBurst), 2, []int{0, 1}, sameToken)
	call := func(token, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPut, "http://"+rs[1].addr+"/api/v1/cluster/runs/r1", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Error
	}
	late, _ := json.Marshal(map[string]any{"burst": "s", "trigger": "api", "spec": "x",
		"cluster": map[string]any{"shards": 2, "gatherer": 0, "start_at": time.Now().Add(-time.Second)}})
	if status, msg := call(clusterToken, string(late)); status != http.StatusConflict || !strings.Contains(msg, "configured differently") {
		t.Errorf("share of another spec: %d %q, want 409 saying the burst differs", status, msg)
	}
	if status, _ := call("wrong", string(late)); status != http.StatusUnauthorized {
		t.Errorf("cluster call with a wrong token: %d, want 401", status)
	}
	started := trigger(t, rs[0].d, "s", daemon.BurstOverrides{})
	waitMerged(t, rs[0].d, started.ID)
	share, _ := rs[1].d.BurstRun(started.ID)
	if share.Cluster == nil || !share.Cluster.StartAt.Equal(started.Cluster.StartAt) {
		t.Fatalf("peer's share starts at %+v, the gatherer's at %s", share.Cluster, started.Cluster.StartAt)
	}

	// Replica 1 of a 2-shard cluster asked by one that thinks there are 3.
	peers, _ := cluster.ParsePeers(rs[1].addr + ",127.0.0.1:1,127.0.0.1:2")
	odd, _, _ := startBursts(t, burstYAML(clusterBurst), newFakeExec(), daemon.WithShard(record.Shard{Index: 2, Count: 3}),
		daemon.WithCluster(daemon.ClusterOptions{Peers: peers, Client: cluster.NewClient(clusterToken, nil), Lead: time.Second}))
	if _, err := odd.TriggerBurst("s", daemon.BurstOverrides{}); err == nil || !strings.Contains(err.Error(), "same --shard count") {
		t.Errorf("trigger in a cluster that disagrees on the shard count: %v, want an error saying so", err)
	}
	if st := odd.Status().Cluster; st == nil || !strings.Contains(st.Error, "same --shard count") || st.Shard != "2/3" {
		t.Errorf("status after the refused trigger: %+v, want the disagreement", st)
	}
}

// TestClusterCancelFromAnyReplica: cancelling a cluster run on a replica
// that did not start it cancels every share, and the gatherer's report
// says it was cancelled, not that the peers went missing.
func TestClusterCancelFromAnyReplica(t *testing.T) {
	rs := startCluster(t, burstYAML(clusterBurst), 3, []int{0, 1, 2}, sameToken)
	for _, r := range rs {
		t.Cleanup(r.exec.gate("tb"))
	}
	started := trigger(t, rs[0].d, "s", daemon.BurstOverrides{})
	waitFor(t, "every share to have requests in flight", func() bool {
		return rs[0].exec.running() > 0 && rs[1].exec.running() > 0 && rs[2].exec.running() > 0
	})
	if _, err := rs[2].d.CancelBurst(started.ID); err != nil {
		t.Fatalf("CancelBurst on replica 2: %v", err)
	}
	ri := waitMerged(t, rs[0].d, started.ID)
	if ri.State != daemon.RunCancelled || ri.Cluster.Partial {
		t.Errorf("gathered run after a cancel on replica 2: %s, %+v; want cancelled and whole", ri.State, ri.Cluster)
	}
	for i, r := range rs {
		if n := r.exec.running(); n != 0 {
			t.Errorf("replica %d still has %d requests in flight", i, n)
		}
	}
}

// TestClusterSchedule: a scheduled burst fires on every replica, but only
// the lowest shard that answers starts and gathers it: one report per
// scheduled run, not one per replica.
func TestClusterSchedule(t *testing.T) {
	rs := startCluster(t, burstYAML("s: {target: tb, every: 1500ms, requests: 6, "+fast+"}"), 3, []int{0, 1, 2}, sameToken)
	var first daemon.RunInfo
	waitFor(t, "a scheduled run gathered on shard 0", func() bool {
		for _, ri := range runsOf(rs[0].d, "s") {
			if ri.Cluster != nil && ri.Cluster.Merged {
				first = ri
				return true
			}
		}
		return false
	})
	if first.Trigger != daemon.TriggerSchedule || first.Cluster.Gatherer != 0 || first.Cluster.Partial || first.Report.Summary.OK != 6 {
		t.Errorf("scheduled cluster run: %+v, %+v, %d ok; want one of 6 requests gathered by shard 0", first, first.Cluster, first.Report.Summary.OK)
	}
	for i, r := range rs {
		for _, ri := range runsOf(r.d, "s") {
			if ri.Cluster == nil || ri.Cluster.Gatherer != 0 {
				t.Errorf("replica %d has run %s gathered by %+v; only shard 0 should start scheduled runs", i, ri.ID, ri.Cluster)
			}
		}
	}
}

// TestClusterGaugesAfterRestart: restarted on its history, a replica shows
// a cluster run on its last-run gauges only if it gathered it, as it did
// before the restart: never a share, nor another replica's gathered run.
func TestClusterGaugesAfterRestart(t *testing.T) {
	yml := burstYAML(clusterBurst)
	dirs := []string{t.TempDir(), t.TempDir()}
	history := func(shard int) []daemon.Option { return []daemon.Option{daemon.WithHistory(dirs[shard], 10)} }
	rs := startClusterWith(t, yml, 2, []int{0, 1}, sameToken, history)
	id := trigger(t, rs[1].d, "s", daemon.BurstOverrides{}).ID
	waitMerged(t, rs[0].d, id)
	waitMerged(t, rs[1].d, id)
	for shard, gathered := range []bool{false, true} {
		d, _, _ := startBursts(t, yml, newFakeExec(), append(history(shard), daemon.WithShard(record.Shard{Index: shard, Count: 2}))...)
		if _, ok := metric(t, d, "inferprobe_burst_last_request_throughput", map[string]string{"burst": "s"}); ok != gathered {
			t.Errorf("shard %d restarted: last-run gauges shown %v, want %v (it gathered the run: %v)", shard, ok, gathered, gathered)
		}
	}
}
