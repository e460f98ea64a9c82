// Package http1 is the prober's one-goroutine HTTP/1.1 client. net/http's
// transport runs three goroutines for each request in flight — the caller,
// and the connection's readLoop and writeLoop — whose stacks hold 16–20 KiB
// a stream, and it hands every read from its readLoop to the caller through
// a channel, a goroutine switch per streamed chunk (BENCHMARKS.md, "Memory
// per in-flight stream" and "Client CPU per chunk against a bare reader").
// Here the caller's goroutine writes the request and reads the response
// itself, through one small read buffer per connection (write.go, read.go,
// body.go), and fires the same trace events as net/http.
//
// The prober decides which requests take it (Eligible), writes their header
// lines (Head.Header) and dials the connections (Conn): those it opened
// ahead, and those whose stale keep-alive it proves.
package http1

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

// Connection limits, which the prober's net/http transports share.
const (
	MaxIdleConns        = 4096 // per server and policy
	IdleConnTimeout     = 90 * time.Second
	TLSHandshakeTimeout = 10 * time.Second
)

// BufferBytes sizes a connection's read buffer and its request's write
// buffer, as the prober's net/http transports size theirs: every
// connection holds them for its life, and at net/http's 4 KiB they were a
// fifth of a worker's memory per open stream. A streamed chunk with its
// HTTP framing is a few hundred bytes, and longer reads, header lines and
// writes pass through or span the buffer: only a burst of queued chunks
// takes more read calls.
const BufferBytes = 1 << 10

// IdleCheckAfter is how long a connection may sit idle before it is looked
// at when taken: see Pool.take.
const IdleCheckAfter = time.Second

// Eligible reports whether a request to u takes this client: plain HTTP,
// or HTTPS without HTTP/2 asked for (h2; net/http negotiates HTTP/2), when
// proxy, the transports' proxy function, names none for u (net/http speaks
// to proxies, CONNECT included). A user in the URL (net/http sends it as
// basic auth) or a host name that is not ASCII (net/http converts it to
// Punycode) also keeps net/http.
func Eligible(u *url.URL, h2 bool, proxy func(*http.Request) (*url.URL, error)) bool {
	switch {
	case u.Scheme != "http" && u.Scheme != "https", u.Scheme == "https" && h2:
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

// Conn is a connection as the client dials it: it asks the system, before
// sending on an idle one, what its peer did meanwhile.
type Conn interface {
	net.Conn
	// IdleState reports the bytes the peer sent that were not read, its
	// FIN not counted, and whether it closed the connection; ok is false
	// when the system does not say.
	IdleState() (unread int64, peerClosed, ok bool)
}

// Dial opens a TCP connection to addr.
type Dial func(ctx context.Context, addr string) (Conn, error)

// Pool is the connections to one server (scheme and address) under one
// connection policy.
type Pool struct {
	addr  string
	tls   *tls.Config // nil for plain HTTP
	reuse bool
	dial  Dial

	mu sync.Mutex
	// idle holds the idle connections, the most recently used last: taken
	// from the end, as net/http does, and so in the order they went idle.
	idle     []*conn
	sweeping bool // a sweep is due
}

// NewPool returns the pool of connections to u's server, dialled by dial.
// The pool keeps idle connections when reuse is set. An https URL's
// connections are TLS with tlsConfig's settings (nil: Go's defaults),
// offering HTTP/1.1 alone, as net/http's transport would set them.
func NewPool(u *url.URL, tlsConfig *tls.Config, reuse bool, dial Dial) *Pool {
	p := &Pool{addr: DialAddr(u), reuse: reuse, dial: dial}
	if u.Scheme == "https" {
		cfg := &tls.Config{}
		if tlsConfig != nil {
			cfg = tlsConfig.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		cfg.NextProtos = []string{"http/1.1"}
		p.tls = cfg
	}
	return p
}

// DialAddr is the address dialled for u: its host and port, or the
// scheme's port.
func DialAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// take returns an idle connection, or nil, looking at the system's TCP
// state first. One the server has sent bytes on since its last response
// is dropped, as net/http's reader drops it. One idle for under
// IdleCheckAfter goes out even if its server has closed it, as net/http's
// would before its reader had seen a FIN that came meanwhile: the first
// write's check (the prober's stale keep-alive proof) then refuses it, and
// the request is sent again. One idle longer that its server closed (its
// idle timeout), which net/http's reader would have seen long since, is
// dropped, and nothing is counted.
func (p *Pool) take() *conn {
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
		unread, closed, ok := c.raw.IdleState()
		switch {
		case ok && unread > 0:
		case idle >= IdleConnTimeout:
		case idle >= IdleCheckAfter && ok && closed:
		default:
			return c
		}
		c.close()
	}
}

// put makes c idle, or closes it when the pool does not reuse connections
// or holds MaxIdleConns.
func (p *Pool) put(c *conn) {
	p.mu.Lock()
	if !p.reuse || len(p.idle) >= MaxIdleConns {
		p.mu.Unlock()
		c.close()
		return
	}
	c.idleAt = time.Now()
	p.idle = append(p.idle, c)
	if !p.sweeping {
		p.sweeping = true
		time.AfterFunc(IdleConnTimeout, p.sweep)
	}
	p.mu.Unlock()
}

// sweep closes the connections idle for IdleConnTimeout, and comes again
// when the oldest of the others will have been.
func (p *Pool) sweep() {
	now := time.Now()
	p.mu.Lock()
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].idleAt) >= IdleConnTimeout {
		n++
	}
	stale := append([]*conn(nil), p.idle[:n]...)
	p.idle = append(p.idle[:0], p.idle[n:]...)
	clear(p.idle[len(p.idle):cap(p.idle)])
	p.sweeping = len(p.idle) > 0
	if p.sweeping {
		time.AfterFunc(IdleConnTimeout-now.Sub(p.idle[0].idleAt), p.sweep)
	}
	p.mu.Unlock()
	for _, c := range stale {
		c.close()
	}
}

// Idle is how many idle connections the pool holds.
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// conn is one connection of a pool, carrying one request at a time.
type conn struct {
	raw  Conn
	rw   net.Conn // raw, or the TLS client over it
	pool *Pool
	// buf holds what was read and not yet consumed, buf[r:w]; rerr is the
	// read error that came after those bytes.
	buf    []byte
	r, w   int
	rerr   error
	idleAt time.Time
	// stop detaches the request's context, whose end closes the connection
	// (RoundTrip); it reports false once that close has begun.
	stop func() bool
}

// close closes the connection; the request's context is left to end.
func (c *conn) close() { _ = c.rw.Close() }

// abort ends the connection's request and closes it.
func (c *conn) abort() {
	c.stop()
	c.close()
}

// release ends the connection's request: the connection goes idle when
// keep is set, nothing is left unread, and the request's context had not
// begun to close it; else it is closed.
func (c *conn) release(keep bool) {
	if c.stop() && keep && c.r == c.w && c.rerr == nil {
		c.pool.put(c)
		return
	}
	c.close()
}

var errTLSHandshakeTimeout = errors.New("TLS handshake timeout")

// RoundTrip sends a POST of head and body on one of the pool's connections
// and returns the response, whose body is read in the caller's goroutine. trace's hooks
// are called as net/http's transport calls them. When ctx ended, a failure
// is the cause of ctx.
func (p *Pool) RoundTrip(ctx context.Context, head *Head, body []byte, trace *httptrace.ClientTrace) (*http.Response, error) {
	resp, err := p.exchange(ctx, head, body, trace)
	if err != nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	return resp, err
}

func (p *Pool) exchange(ctx context.Context, head *Head, body []byte, trace *httptrace.ClientTrace) (*http.Response, error) {
	trace.GetConn(p.addr)
	conn, reused := p.take(), true
	if conn == nil {
		reused = false
		var err error
		if conn, err = p.open(ctx, trace); err != nil {
			return nil, err
		}
	}
	trace.GotConn(httptrace.GotConnInfo{Conn: conn.rw, Reused: reused, WasIdle: reused})
	// The context's end closes the connection: a blocked write or read
	// then returns, and the stall timer and cancellation still work.
	conn.stop = context.AfterFunc(ctx, func() { _ = conn.raw.Close() })
	err := conn.writeRequest(head, body, p.reuse)
	trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
	if err != nil {
		conn.abort()
		return nil, err
	}
	resp, err := conn.readHTTPResponse(ctx, p.reuse, trace.GotFirstResponseByte)
	if err != nil {
		conn.abort()
		return nil, err
	}
	return resp, nil
}

// open opens a connection, with TLS over it for https. It runs in a
// goroutine of its own, as the transports' dials do: dialling and the
// handshake are deep calls, and the stack they grow would stay with the
// request's goroutine for as long as its stream lasts.
func (p *Pool) open(ctx context.Context, trace *httptrace.ClientTrace) (*conn, error) {
	type opened struct {
		conn *conn
		err  error
	}
	done := make(chan opened, 1)
	go func() {
		conn, err := p.openHere(ctx, trace)
		done <- opened{conn, err}
	}()
	o := <-done
	return o.conn, o.err
}

func (p *Pool) openHere(ctx context.Context, trace *httptrace.ClientTrace) (*conn, error) {
	raw, err := p.dial(ctx, p.addr)
	if err != nil {
		return nil, err
	}
	c := &conn{raw: raw, rw: raw, pool: p, buf: make([]byte, BufferBytes)}
	if p.tls == nil {
		return c, nil
	}
	tc := tls.Client(raw, p.tls)
	hctx, cancel := context.WithTimeout(ctx, TLSHandshakeTimeout)
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
	c.rw = tc
	return c, nil
}
