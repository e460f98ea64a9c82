package cluster

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
)

type fakeResolver struct {
	srv   map[string][]*net.SRV
	hosts map[string][]string
}

func (f fakeResolver) LookupSRV(_ context.Context, service, proto, name string) (string, []*net.SRV, error) {
	if service != "" || proto != "" {
		return "", nil, errors.New("the name must be looked up as given")
	}
	if s, ok := f.srv[name]; ok {
		return name, s, nil
	}
	return "", nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

func (f fakeResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	if h, ok := f.hosts[host]; ok {
		return h, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestParsePeers(t *testing.T) {
	for _, bad := range []string{"a", "a:b", "a:0", "a:1,a:1", "dns+srv://", "dns+srv://a:80", "dns+a://svc", "dns+a://svc:x", ":80"} {
		if _, err := ParsePeers(bad); err == nil || !strings.Contains(err.Error(), "want host:port") {
			t.Errorf("ParsePeers(%q) = %v, want an error saying what to write", bad, err)
		}
	}
	for s, static := range map[string]int{"a:1, b:2,c:3": 3, "dns+srv://_http._tcp.ip.ns.svc": 0, "dns+a://ip.ns.svc:9464": 0} {
		p, err := ParsePeers(s)
		if err != nil || !p.Enabled() || p.Static() != (static > 0) {
			t.Errorf("ParsePeers(%q) = %+v, %v; want enabled with %d static peers", s, p, err, static)
		}
		if err := p.Check(3); err != nil {
			t.Errorf("%s as the peers of 3 shards: %v", s, err)
		}
		if err := p.Check(1); err == nil || !strings.Contains(err.Error(), "needs --shard") {
			t.Errorf("%s without --shard: %v, want an error asking for it", s, err)
		}
	}
	if p, _ := ParsePeers("a:1,b:2"); p.Check(3) == nil || !strings.Contains(p.Check(3).Error(), "lists 2 replicas but --shard says 3") {
		t.Errorf("two peers for three shards: %v, want the disagreement", p.Check(3))
	}
	if p, _ := ParsePeers(""); p.Enabled() {
		t.Error("no --cluster.peers enables the cluster")
	}
}

// TestResolve: the headless Service's SRV records give each pod's name and
// port, its A records the pods' addresses; a failed lookup says what to check.
func TestResolve(t *testing.T) {
	r := fakeResolver{
		srv: map[string][]*net.SRV{"_http._tcp.ip.ns.svc": {
			{Target: "ip-1.ip.ns.svc.cluster.local.", Port: 9464}, {Target: "ip-0.ip.ns.svc.cluster.local.", Port: 9464},
		}},
		hosts: map[string][]string{"ip.ns.svc": {"10.0.0.2", "10.0.0.1", "fd00::1"}},
	}
	for in, want := range map[string][]string{
		"dns+srv://_http._tcp.ip.ns.svc": {"ip-0.ip.ns.svc.cluster.local:9464", "ip-1.ip.ns.svc.cluster.local:9464"},
		"dns+a://ip.ns.svc:9464":         {"10.0.0.1:9464", "10.0.0.2:9464", "[fd00::1]:9464"},
		"b:2,a:1":                        {"a:1", "b:2"},
	} {
		p, err := ParsePeers(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Resolve(context.Background(), r)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Resolve(%s) = %v, %v; want %v", in, got, err, want)
		}
	}
	p, _ := ParsePeers("dns+srv://_http._tcp.missing.ns.svc")
	if _, err := p.Resolve(context.Background(), r); err == nil || !strings.Contains(err.Error(), "headless Service") {
		t.Errorf("Resolve of a missing name: %v, want an error pointing at the headless Service", err)
	}
}
