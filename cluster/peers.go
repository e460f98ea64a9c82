// Package cluster is what the replicas of a sharded deployment need to run
// one burst together: where their peers are (a static list, or the DNS
// records of a StatefulSet's headless Service) and an authenticated client
// for the calls between them.
package cluster

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Peers is where a replica finds every replica of its deployment, itself
// included: a static list of host:port, or DNS names looked up at each use,
// so that a pod restarted with a new address is found again.
type Peers struct {
	static []string
	srv    string // dns+srv://NAME: SRV records give host and port
	a      string // dns+a://NAME:PORT: A/AAAA records give the hosts
	aPort  string
}

// Resolver is the part of *net.Resolver that discovery uses; tests fake it.
type Resolver interface {
	LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error)
	LookupHost(ctx context.Context, host string) ([]string, error)
}

const peersHelp = "; want host:port,host:port,…, dns+srv://_http._tcp.SERVICE.NAMESPACE.svc or dns+a://SERVICE.NAMESPACE.svc:PORT"

// ParsePeers parses --cluster.peers.
func ParsePeers(s string) (Peers, error) {
	switch {
	case s == "":
		return Peers{}, nil
	case strings.HasPrefix(s, "dns+srv://"):
		name := strings.TrimPrefix(s, "dns+srv://")
		if name == "" || strings.ContainsAny(name, ",:/") {
			return Peers{}, fmt.Errorf("cluster peers %q: a dns+srv name is one DNS name%s", s, peersHelp)
		}
		return Peers{srv: name}, nil
	case strings.HasPrefix(s, "dns+a://"):
		host, port, err := net.SplitHostPort(strings.TrimPrefix(s, "dns+a://"))
		if err != nil || host == "" || !validPort(port) {
			return Peers{}, fmt.Errorf("cluster peers %q: a dns+a name needs its port, NAME:PORT%s", s, peersHelp)
		}
		return Peers{a: host, aPort: port}, nil
	}
	var p Peers
	for addr := range strings.SplitSeq(s, ",") {
		addr = strings.TrimSpace(addr)
		host, port, err := net.SplitHostPort(addr)
		if err != nil || host == "" || !validPort(port) {
			return Peers{}, fmt.Errorf("cluster peers %q: %q is not host:port%s", s, addr, peersHelp)
		}
		if slices.Contains(p.static, addr) {
			return Peers{}, fmt.Errorf("cluster peers %q: %s is listed twice%s", s, addr, peersHelp)
		}
		p.static = append(p.static, addr)
	}
	return p, nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n < 65536
}

// Enabled says whether peers were configured at all.
func (p Peers) Enabled() bool { return len(p.static) > 0 || p.srv != "" || p.a != "" }

// Check says whether the peers can be the replicas of a deployment of
// shards: a static list must name every replica once; DNS is checked at
// each lookup, by asking the replicas found.
func (p Peers) Check(shards int) error {
	switch {
	case shards <= 1:
		return fmt.Errorf("--cluster.peers=%s needs --shard i/n with n > 1: the peers run shares of each burst", p)
	case len(p.static) > 0 && len(p.static) != shards:
		return fmt.Errorf("--cluster.peers lists %d replicas but --shard says %d: list every replica, this one included, once", len(p.static), shards)
	}
	return nil
}

// Static says whether the peers are a static list, which must name this
// replica too.
func (p Peers) Static() bool { return len(p.static) > 0 }

func (p Peers) String() string {
	switch {
	case p.srv != "":
		return "dns+srv://" + p.srv
	case p.a != "":
		return "dns+a://" + net.JoinHostPort(p.a, p.aPort)
	}
	return strings.Join(p.static, ",")
}

// Resolve lists the replicas' addresses (host:port), sorted.
func (p Peers) Resolve(ctx context.Context, r Resolver) ([]string, error) {
	var out []string
	switch {
	case p.srv != "":
		_, srvs, err := r.LookupSRV(ctx, "", "", p.srv)
		if err != nil {
			return nil, fmt.Errorf("looking up the SRV records of %s: %w; check that the headless Service exists and names its port", p.srv, err)
		}
		for _, s := range srvs {
			out = append(out, net.JoinHostPort(strings.TrimSuffix(s.Target, "."), strconv.Itoa(int(s.Port))))
		}
	case p.a != "":
		hosts, err := r.LookupHost(ctx, p.a)
		if err != nil {
			return nil, fmt.Errorf("looking up %s: %w; check that the headless Service exists", p.a, err)
		}
		for _, h := range hosts {
			out = append(out, net.JoinHostPort(h, p.aPort))
		}
	default:
		out = slices.Clone(p.static)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
