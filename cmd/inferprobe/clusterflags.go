package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/cluster"
	"github.com/inferprobe/inferprobe/daemon"
	"github.com/inferprobe/inferprobe/record"
)

// clusterFlags make sharded replicas run each burst together (serve).
type clusterFlags struct {
	peers cluster.Peers
	lead  time.Duration
}

func addClusterFlags(cmd *kingpin.CmdClause) *clusterFlags {
	f := &clusterFlags{}
	var peers string
	cmd.Flag("cluster.peers", "Every replica of this sharded deployment, this one included, so that a burst triggered on any replica (or due on its schedule) runs on all of them and one replica gathers one exact report: host:port,host:port,… or, in Kubernetes, the StatefulSet's headless Service: dns+srv://_http._tcp.SERVICE.NAMESPACE.svc (SRV records) or dns+a://SERVICE.NAMESPACE.svc:PORT (A records). Needs --shard i/n; the calls between replicas authenticate as the burst API does (--web.burst-api.token-file, or mutual TLS from --web.config.file).").
		Action(func(*kingpin.ParseContext) error {
			var err error
			f.peers, err = cluster.ParsePeers(peers)
			return err
		}).StringVar(&peers)
	cmd.Flag("cluster.start-lead", "How far ahead a cluster burst's agreed start is set, so that every replica hears of the run and plans it before it starts.").
		Default("2s").DurationVar(&f.lead)
	return f
}

// check refuses cluster flags that cannot work with shard, before anything starts.
func (f *clusterFlags) check(shard record.Shard) error {
	if !f.peers.Enabled() {
		return nil
	}
	if err := f.peers.Check(shard.Count); err != nil {
		return err
	}
	if f.lead <= 0 {
		return fmt.Errorf("--cluster.start-lead=%s: must be positive, e.g. 2s", f.lead)
	}
	return nil
}

// option is the daemon's cluster option, nil without --cluster.peers; check
// has passed.
func (f *clusterFlags) option(logger *slog.Logger, token, webConfigFile string) (daemon.Option, error) {
	if !f.peers.Enabled() {
		return nil, nil
	}
	tlsConfig, mutual, err := cluster.ClientTLS(webConfigFile)
	if err != nil {
		return nil, err
	}
	if token == "" && !mutual {
		// A peer's call starts a share of any configured burst.
		logger.Warn("the calls between replicas are not authenticated: whoever reaches this port can start any configured burst; give every replica the same --web.burst-api.token-file, or mutual TLS in --web.config.file (client_ca_file with client_auth_type: RequireAndVerifyClientCert)")
	}
	return daemon.WithCluster(daemon.ClusterOptions{Peers: f.peers, Client: cluster.NewClient(token, tlsConfig), Lead: f.lead}), nil
}
