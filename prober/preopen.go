package prober

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/prober/internal/http1"
)

// Connections opened ahead. A probe's first requests would each dial their
// own connection, and the dial would be billed to them as schedule lag; so
// before its timeline starts, an executor opens as many as the probe keeps in
// flight (Preparer), and the transports' dials take from those first. A
// connection that has carried nothing is safe to send on once whatever the
// server's keep-alive (conn.go): the transport takes it as a new one. Only
// for targets whose connections are reused, and not to a server known to
// close after every response: there the connections opened are the
// requests' own, and opening them ahead buys nothing the next request keeps.

// preopenMaxAge is how long a connection opened ahead waits to be used
// before it is closed: a server may close a connection that sends nothing
// (an idle or header timeout), and a request must not race that close.
const preopenMaxAge = time.Second

type preopened struct {
	conn   *trackedConn
	opened time.Time
}

// Prepare opens conns connections to t's server (Preopen): the in-process
// executor has nothing else to get ready.
func (c *Client) Prepare(ctx context.Context, t *Target, conns int) (release func()) {
	c.Preopen(ctx, t, conns)
	return func() {}
}

// Preopen opens up to n connections to t's server for its next requests to
// take, and returns how many it opened; a target of several URLs shares
// them out, as its sessions take turns among them. A dial that fails is
// left to the request that would have made it, which then reports it.
func (c *Client) Preopen(ctx context.Context, t *Target, n int) int {
	if k := t.URLs(); k > 1 {
		opened := 0
		for i := range k {
			opened += c.Preopen(ctx, t.ForURL(i), (n+k-1-i)/k)
		}
		return opened
	}
	addr, ok := preopenAddr(t)
	if n <= 0 || !ok || peerState(c.peerFor(t).state.Load()) == peerCloses {
		return 0
	}
	var wg sync.WaitGroup
	conns := make([]net.Conn, n)
	for i := range conns {
		wg.Go(func() { conns[i], _ = c.dial(ctx, "tcp", addr) })
	}
	wg.Wait()
	now, opened := time.Now(), 0
	c.mu.Lock()
	for _, conn := range conns {
		if conn != nil {
			tc := newTrackedConn(conn)
			tc.openedAhead = true
			c.opened[addr] = append(c.opened[addr], preopened{tc, now})
			opened++
		}
	}
	c.mu.Unlock()
	if opened > 0 {
		time.AfterFunc(preopenMaxAge, c.closeStaleOpened)
	}
	return opened
}

// spareConns is how many connections opened ahead a client keeps ready
// for a target once its requests had to have new connections: the number in
// flight is rising (an open loop's starts, or a Poisson burst), and the
// next requests' connections are then opened off their schedule, not on
// it. A spare unused for preopenMaxAge is closed.
const spareConns = 4

// topUp opens connections to t's server in the background until spareConns
// wait there; one top-up at a time per address.
func (c *Client) topUp(t *Target) {
	addr, ok := preopenAddr(t)
	if !ok {
		return
	}
	c.mu.Lock()
	need := spareConns - len(c.opened[addr])
	if need <= 0 || c.toppingUp[addr] {
		c.mu.Unlock()
		return
	}
	c.toppingUp[addr] = true
	c.mu.Unlock()
	go func() {
		c.Preopen(context.Background(), t, need)
		c.mu.Lock()
		delete(c.toppingUp, addr)
		c.mu.Unlock()
	}()
}

// preopenAddr is the address the transport dials for t, and false when
// connections to it are not opened ahead: not reused, or through a proxy.
func preopenAddr(t *Target) (string, bool) {
	if !t.conn.reuse {
		return "", false
	}
	u, err := url.Parse(t.url)
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	if proxy, err := http.ProxyFromEnvironment(&http.Request{URL: u}); proxy != nil || err != nil {
		return "", false
	}
	return http1.DialAddr(u), true
}

// dialConn is the net/http transports' dial (dialTracked).
func (c *Client) dialConn(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := c.dialTracked(ctx, network, addr)
	if err != nil {
		return nil, err // not a nil *trackedConn in a non-nil net.Conn
	}
	return conn, nil
}

// dialTracked is the transports' dial: a connection opened ahead to addr
// that is still open, or a new one; either is tracked (conn.go).
func (c *Client) dialTracked(ctx context.Context, network, addr string) (*trackedConn, error) {
	if conn := c.takeOpened(addr); conn != nil {
		return conn, nil
	}
	conn, err := c.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return newTrackedConn(conn), nil
}

// takeOpened returns a connection opened ahead to addr, young enough and
// still open by the system's TCP state (one whose state cannot be read is
// not used); nil when there is none.
func (c *Client) takeOpened(addr string) *trackedConn {
	for {
		c.mu.Lock()
		list := c.opened[addr]
		if len(list) == 0 {
			c.mu.Unlock()
			return nil
		}
		p := list[len(list)-1]
		c.opened[addr] = list[:len(list)-1]
		c.mu.Unlock()
		if st, ok := p.conn.tcp(); ok && !st.peerClosed && time.Since(p.opened) < preopenMaxAge {
			return p.conn
		}
		p.conn.Close()
	}
}

// closeStaleOpened closes the connections opened ahead that have waited
// preopenMaxAge unused.
func (c *Client) closeStaleOpened() {
	var stale []*trackedConn
	c.mu.Lock()
	for addr, list := range c.opened {
		kept := list[:0]
		for _, p := range list {
			if time.Since(p.opened) >= preopenMaxAge {
				stale = append(stale, p.conn)
			} else {
				kept = append(kept, p)
			}
		}
		c.opened[addr] = kept
	}
	c.mu.Unlock()
	for _, conn := range stale {
		conn.Close()
	}
}
