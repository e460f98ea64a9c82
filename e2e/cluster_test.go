package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// clusterRun is a burst run as the API returns it, with its cluster part.
type clusterRun struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Report *struct {
		Digest  string `json:"sequence_digest"`
		Summary struct {
			OK, Failed, Cancelled int
			Latency               struct{ Count int } `json:"request_latency_seconds"`
		} `json:"summary"`
	} `json:"report"`
	Cluster *struct {
		Shards   int
		Gatherer int
		Merged   bool
		Partial  bool
		Missing  []struct {
			Shard int
			Peer  string
			Error string
		}
	} `json:"cluster"`
}

func (r clusterRun) requests() int {
	if r.Report == nil {
		return -1
	}
	s := r.Report.Summary
	return s.OK + s.Failed + s.Cancelled
}

// triggerAndWait starts burst load on base and waits for the run's whole
// report there.
func triggerAndWait(t *testing.T, base, body string, cluster bool, auth http.Header, during func()) clusterRun {
	t.Helper()
	var started struct{ ID string }
	if status, _, out := apiCall(t, "POST", base+"/api/v1/bursts/load", body, auth, &started); status != http.StatusAccepted {
		t.Fatalf("POST %s/api/v1/bursts/load: %d %s", base, status, out)
	}
	if during != nil {
		during()
	}
	return waitMerged(t, base, started.ID, cluster, auth)
}

// waitMerged polls run id on base until it has ended and, in a cluster,
// until the report there is the gathered one.
func waitMerged(t *testing.T, base, id string, cluster bool, auth http.Header) clusterRun {
	t.Helper()
	var run clusterRun
	eventually(t, 90*time.Second, "run "+id+" on "+base+" ends with its whole report", func() error {
		run = clusterRun{}
		if status, _, out := apiCall(t, "GET", base+"/api/v1/bursts/runs/"+id, "", auth, &run); status != http.StatusOK {
			return fmt.Errorf("%d %s", status, out)
		}
		switch {
		case run.State == "queued" || run.State == "running":
			return fmt.Errorf("state %s", run.State)
		case cluster && (run.Cluster == nil || !run.Cluster.Merged):
			return fmt.Errorf("state %s, its own share only", run.State)
		}
		return nil
	})
	return run
}

// TestClusterBurst runs one burst unsharded, then across three replicas on
// loopback (--shard i/3, --cluster.peers): triggered on one, every replica
// serves one report with the unsharded run's request count and digest.
// Killing a replica mid-run gives a report marked partial that names it.
// The replicas' calls to each other carry the burst API's token.
func TestClusterBurst(t *testing.T) {
	dir := t.TempDir()
	sim := freeAddr(t)
	startSimulator(t, sim)
	config := filepath.Join(dir, "scenario.yml")
	if err := os.WriteFile(config, fmt.Appendf(nil, `targets:
  sim: {url: http://%s/v1, model: inferprobe-simulator}
bursts:
  load:
    target: sim
    on_demand: true
    requests: 60
    arrival: {pattern: poisson, rate: 30}
    dataset: {synthetic: {input_tokens: {mean: 16, stddev: 4}, output_tokens: {mean: 8, stddev: 2}}}
`, sim), 0o644); err != nil {
		t.Fatal(err)
	}
	serve := func(name string, args ...string) (*process, string) {
		addr := freeAddr(t)
		p := inferprobe(t, name, dir, append([]string{"serve", "--workers=1", "--config.file=" + config,
			"--web.listen-address=" + addr, "--web.enable-burst-api"}, args...)...)
		base := "http://" + addr
		waitHealthy(t, p, base+"/-/ready", 10*time.Second)
		return p, base
	}

	single, singleBase := serve("unsharded")
	want := triggerAndWait(t, singleBase, "", false, nil, nil)
	single.kill()
	if want.State != "succeeded" || want.requests() != 60 || want.Report.Digest == "" {
		t.Fatalf("unsharded run: %+v, want 60 requests and a digest", want)
	}

	// The replicas authenticate their calls to each other with the burst
	// API's token.
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("cluster-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auth := http.Header{"Authorization": {"Bearer cluster-token"}}
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	peers := "--cluster.peers=" + strings.Join(addrs, ",")
	var replicas []*process
	var bases []string
	for i, addr := range addrs {
		p := inferprobe(t, fmt.Sprintf("replica %d", i), dir, "serve", "--workers=1", "--config.file="+config,
			"--web.listen-address="+addr, "--web.enable-burst-api", "--web.burst-api.token-file="+tokenFile, fmt.Sprintf("--shard=%d/3", i), peers)
		replicas, bases = append(replicas, p), append(bases, "http://"+addr)
	}
	for i, p := range replicas {
		waitHealthy(t, p, bases[i]+"/-/ready", 10*time.Second)
	}

	got := triggerAndWait(t, bases[1], "", true, auth, nil)
	if got.State != "succeeded" || got.Cluster == nil || got.Cluster.Partial || got.Cluster.Gatherer != 1 || got.Cluster.Shards != 3 {
		t.Fatalf("cluster run on replica 1: %+v (cluster %+v), want succeeded, gathered by shard 1 of 3, whole", got, got.Cluster)
	}
	for i, base := range bases {
		run := waitMerged(t, base, got.ID, true, auth)
		if run.requests() != want.requests() || run.Report.Digest != want.Report.Digest || run.Report.Summary.Latency.Count != want.Report.Summary.Latency.Count {
			t.Errorf("replica %d's report of the cluster run: %d requests, %d latencies, digest %s; the unsharded run's: %d, %d, %s",
				i, run.requests(), run.Report.Summary.Latency.Count, run.Report.Digest, want.requests(), want.Report.Summary.Latency.Count, want.Report.Digest)
		}
	}

	// A longer run, so that replica 2 dies in the middle of its share.
	partial := triggerAndWait(t, bases[0], `{"requests":150}`, true, auth, func() {
		time.Sleep(3500 * time.Millisecond) // the 2 s lead, then 1.5 s of sending
		replicas[2].signal(t, syscall.SIGKILL)
	})
	if partial.Cluster == nil || !partial.Cluster.Partial || len(partial.Cluster.Missing) != 1 ||
		partial.Cluster.Missing[0].Shard != 2 || partial.Cluster.Missing[0].Peer != addrs[2] {
		t.Fatalf("run with replica 2 killed: %+v, want partial, naming shard 2 at %s", partial.Cluster, addrs[2])
	}
	if n := partial.requests(); n <= 0 || n >= 150 {
		t.Errorf("partial run reports %d requests, want some but fewer than 150", n)
	}
	if other := waitMerged(t, bases[1], partial.ID, true, auth); !other.Cluster.Partial {
		t.Errorf("replica 1 shows the partial run as whole: %+v", other.Cluster)
	}
}
