package collector

import "github.com/prometheus/client_golang/prometheus"

// Cluster holds the self-metrics of the calls between the replicas of a
// sharded deployment that run bursts together.
type Cluster struct {
	peerUp     *prometheus.GaugeVec
	callErrors *prometheus.CounterVec
}

// Cluster calls, the call label of inferprobe_cluster_call_errors_total.
const (
	ClusterCallInfo   = "info"   // asking a peer for its shard
	ClusterCallStart  = "start"  // starting a peer's share of a run
	ClusterCallShare  = "share"  // gathering a peer's records
	ClusterCallReport = "report" // handing a peer the gathered report
	ClusterCallCancel = "cancel" // cancelling a peer's share
	ClusterCallStep   = "step"   // starting a peer's share of a search step, or ending its search
)

// NewCluster registers the cluster metrics with reg.
func NewCluster(reg prometheus.Registerer) *Cluster {
	c := &Cluster{
		peerUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "cluster_peer_up",
			Help: "1 when the peer replica answered the last cluster call, 0 when it did not; by the peer's address, as --cluster.peers lists or resolves it."}, []string{"peer"}),
		callErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "cluster_call_errors_total",
			Help: "Calls to peer replicas that failed (unreachable, refused, or an answer that did not decode), by call: info, start, share, report, cancel, step."}, []string{"call"}),
	}
	for _, call := range []string{ClusterCallInfo, ClusterCallStart, ClusterCallShare, ClusterCallReport, ClusterCallCancel, ClusterCallStep} {
		c.callErrors.WithLabelValues(call)
	}
	reg.MustRegister(c.peerUp, c.callErrors)
	return c
}

// Peers replaces the known peers with addrs, all up until a call says otherwise.
func (c *Cluster) Peers(addrs []string) {
	c.peerUp.Reset()
	for _, a := range addrs {
		c.peerUp.WithLabelValues(a).Set(1)
	}
}

// Called records the result of one call to peer.
func (c *Cluster) Called(peer, call string, err error) {
	if err != nil {
		c.callErrors.WithLabelValues(call).Inc()
		c.peerUp.WithLabelValues(peer).Set(0)
		return
	}
	c.peerUp.WithLabelValues(peer).Set(1)
}
