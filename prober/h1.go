package prober

// The one-goroutine HTTP/1.1 request path. net/http's transport runs three
// goroutines for each request in flight — the caller, and the connection's
// readLoop and writeLoop — whose stacks hold 16–20 KiB a stream, and it
// hands every read from its readLoop to the caller through a channel, a
// goroutine switch per streamed chunk (BENCHMARKS.md, "Memory per in-flight
// stream" and "Client CPU per chunk against a bare reader"). Here the
// caller's goroutine writes the request and reads the response itself,
// through one small read buffer per connection (h1_write.go, h1_read.go,
// h1_body.go). It fires the same trace events (phases.go), keeps conn.go's
// stale keep-alive proof, and takes the connections opened ahead
// (preopen.go) as the transports' dial does. h1Eligible says which requests
// take it; net/http keeps the rest.

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"
)

// Connection limits, the same for the net/http transports (clientFor).
const (
	maxIdleConns        = 4096 // per server and policy
	idleConnTimeout     = 90 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
)

// idleCheckAfter is how long a connection may sit idle before it is looked
// at when taken: see take.
const idleCheckAfter = time.Second

// h1Eligible reports whether a request to u under connection policy key
// takes the one-goroutine path: plain HTTP, or HTTPS without HTTP/2 asked
// for (net/http negotiates HTTP/2), when proxy, the transports' proxy
// function, names none for u (net/http speaks to proxies, CONNECT
// included). A user in the URL (net/http sends it as basic auth) or a host
// name that is not ASCII (net/http converts it to Punycode) also keeps
// net/http.
func h1Eligible(u *url.URL, key connKey, proxy func(*http.Request) (*url.URL, error)) bool {
	switch {
	case u.Scheme != "http" && u.Scheme != "https", u.Scheme == "https" && key.h2:
		return false
	case u.Hostname() == "", u.User != nil, !isASCII(u.Host):
		return false
	}
	p, err := proxy(&http.Request{URL: u})
	return p == nil && err == nil
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// h1Route is how the requests to one target URL go out on this path.
type h1Route struct {
	pool *h1Pool
	host string // the Host header
	path string // the request target
}

type h1RouteKey struct {
	url string
	key connKey
}

type h1PoolKey struct {
	key    connKey
	scheme string
	addr   string
}

// h1RouteFor returns the route of t's requests under policy key, made on
// first use; nil when they take net/http (h1Eligible). The pools are shared
// as the transports are: the first target's TLS settings serve every target
// with the same policy.
func (c *Client) h1RouteFor(t *Target, key connKey) *h1Route {
	c.mu.Lock()
	defer c.mu.Unlock()
	rk := h1RouteKey{t.url, key}
	if r, ok := c.h1Routes[rk]; ok {
		return r
	}
	var r *h1Route
	if u, err := url.Parse(t.url); err == nil && h1Eligible(u, key, http.ProxyFromEnvironment) {
		pk := h1PoolKey{key, u.Scheme, dialAddr(u)}
		p := c.h1Pools[pk]
		if p == nil {
			p = &h1Pool{addr: pk.addr, reuse: key.reuse}
			if u.Scheme == "https" {
				p.tls = h1TLSConfig(t.tls, u.Hostname())
			}
			c.h1Pools[pk] = p
		}
		r = &h1Route{pool: p, host: u.Host, path: u.RequestURI()}
	}
	c.h1Routes[rk] = r
	return r
}

// h1TLSConfig is the target's TLS settings for host, offering HTTP/1.1
// alone, as the transport would set them.
func h1TLSConfig(base *tls.Config, host string) *tls.Config {
	cfg := &tls.Config{}
	if base != nil {
		cfg = base.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	return cfg
}

// h1Pool is the connections to one server (scheme and address) under one
// connection policy.
type h1Pool struct {
	addr  string
	tls   *tls.Config // nil for plain HTTP
	reuse bool

	mu sync.Mutex
	// idle holds the idle connections, the most recently used last: taken
	// from the end, as net/http does, and so in the order they went idle.
	idle     []*h1Conn
	sweeping bool // a sweep is due
}

// take returns an idle connection, or nil, looking at the system's TCP
// state first. One the server has sent bytes on since its last response
// is dropped, as net/http's reader drops it. One idle for under
// idleCheckAfter goes out even if its server has closed it, as net/http's
// would before its reader had seen a FIN that came meanwhile: the first
// write's check (conn.go) then refuses it, and the request is sent again.
// One idle longer that its server closed (its idle timeout), which
// net/http's reader would have seen long since, is dropped, and nothing is
// counted.
func (p *h1Pool) take() *h1Conn {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			return nil
		}
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		idle := time.Since(c.idleAt)
		st, ok := c.raw.tcp()
		unread := st.received - c.raw.read.Load()
		if st.peerClosed {
			unread-- // the FIN counts as one received
		}
		switch {
		case ok && unread > 0:
		case idle >= idleConnTimeout:
		case idle >= idleCheckAfter && ok && st.peerClosed:
		default:
			return c
		}
		c.close()
	}
}

// put makes c idle, or closes it when the pool does not reuse connections
// or holds maxIdleConns.
func (p *h1Pool) put(c *h1Conn) {
	p.mu.Lock()
	if !p.reuse || len(p.idle) >= maxIdleConns {
		p.mu.Unlock()
		c.close()
		return
	}
	c.idleAt = time.Now()
	p.idle = append(p.idle, c)
	if !p.sweeping {
		p.sweeping = true
		time.AfterFunc(idleConnTimeout, p.sweep)
	}
	p.mu.Unlock()
}

// sweep closes the connections idle for idleConnTimeout, and comes again
// when the oldest of the others will have been.
func (p *h1Pool) sweep() {
	now := time.Now()
	p.mu.Lock()
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].idleAt) >= idleConnTimeout {
		n++
	}
	stale := append([]*h1Conn(nil), p.idle[:n]...)
	p.idle = append(p.idle[:0], p.idle[n:]...)
	clear(p.idle[len(p.idle):cap(p.idle)])
	p.sweeping = len(p.idle) > 0
	if p.sweeping {
		time.AfterFunc(idleConnTimeout-now.Sub(p.idle[0].idleAt), p.sweep)
	}
	p.mu.Unlock()
	for _, c := range stale {
		c.close()
	}
}

// h1Conn is one connection of this path, carrying one request at a time.
type h1Conn struct {
	raw  *trackedConn
	rw   net.Conn // raw, or the TLS client over it
	pool *h1Pool
	// buf holds what was read and not yet consumed, buf[r:w]; rerr is the
	// read error that came after those bytes.
	buf    []byte
	r, w   int
	rerr   error
	idleAt time.Time
	// stop detaches the request's context, whose end closes the connection
	// (h1RoundTrip); it reports false once that close has begun.
	stop func() bool
}

// close closes the connection; the request's context is left to end.
func (c *h1Conn) close() { _ = c.rw.Close() }

// abort ends the connection's request and closes it.
func (c *h1Conn) abort() {
	c.stop()
	c.close()
}

// release ends the connection's request: the connection goes idle when
// keep is set, nothing is left unread, and the request's context had not
// begun to close it; else it is closed.
func (c *h1Conn) release(keep bool) {
	if c.stop() && keep && c.r == c.w && c.rerr == nil {
		c.pool.put(c)
		return
	}
	c.close()
}

var errTLSHandshakeTimeout = errors.New("TLS handshake timeout")

// h1RoundTrip sends req to t on route and returns the response, whose body
// is read in the caller's goroutine. A failure is a *url.Error, as
// net/http's are, whose Err is the cause of ctx when ctx ended.
func (c *Client) h1RoundTrip(ctx context.Context, route *h1Route, t *Target, req *Request, trace *httptrace.ClientTrace) (*http.Response, error) {
	resp, err := c.h1Exchange(ctx, route, t, req, trace)
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return nil, &url.Error{Op: "Post", URL: t.url, Err: err}
	}
	return resp, nil
}

func (c *Client) h1Exchange(ctx context.Context, route *h1Route, t *Target, req *Request, trace *httptrace.ClientTrace) (*http.Response, error) {
	trace.GetConn(route.pool.addr)
	conn, reused := route.pool.take(), true
	if conn == nil {
		reused = false
		var err error
		if conn, err = c.h1Dial(ctx, route.pool, trace); err != nil {
			return nil, err
		}
	}
	trace.GotConn(httptrace.GotConnInfo{Conn: conn.rw, Reused: reused, WasIdle: reused})
	// The context's end closes the connection: a blocked write or read
	// then returns, and the stall timer and cancellation still work.
	conn.stop = context.AfterFunc(ctx, func() { _ = conn.raw.Close() })
	err := conn.writeRequest(route, t, req)
	trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
	if err != nil {
		conn.abort()
		return nil, err
	}
	resp, err := conn.readResponse(ctx, route.pool.reuse, trace.GotFirstResponseByte)
	if err != nil {
		conn.abort()
		return nil, err
	}
	return resp, nil
}

// h1Dial opens a connection for pool: one opened ahead, or one dialled, as
// the transports' dial does (dialConn), with TLS over it for https. It runs
// in a goroutine of its own, as the transports' dials do: dialling and the
// handshake are deep calls, and the stack they grow would stay with the
// request's goroutine for as long as its stream lasts.
func (c *Client) h1Dial(ctx context.Context, p *h1Pool, trace *httptrace.ClientTrace) (*h1Conn, error) {
	type dialled struct {
		conn *h1Conn
		err  error
	}
	done := make(chan dialled, 1)
	go func() {
		conn, err := c.h1DialHere(ctx, p, trace)
		done <- dialled{conn, err}
	}()
	d := <-done
	return d.conn, d.err
}

func (c *Client) h1DialHere(ctx context.Context, p *h1Pool, trace *httptrace.ClientTrace) (*h1Conn, error) {
	nc, err := c.dialConn(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	raw := nc.(*trackedConn)
	conn := &h1Conn{raw: raw, rw: raw, pool: p, buf: make([]byte, connBufferBytes)}
	if p.tls == nil {
		return conn, nil
	}
	tc := tls.Client(raw, p.tls)
	hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
	defer cancel()
	trace.TLSHandshakeStart()
	err = tc.HandshakeContext(hctx)
	trace.TLSHandshakeDone(tc.ConnectionState(), err)
	if err != nil {
		_ = raw.Close()
		if hctx.Err() != nil && ctx.Err() == nil {
			err = errTLSHandshakeTimeout
		}
		return nil, err
	}
	conn.rw = tc
	return conn, nil
}
