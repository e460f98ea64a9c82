package prober

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"net/url"

	"github.com/inferprobe/inferprobe/prober/internal/http1"
)

// The requests that take the one-goroutine HTTP/1.1 client
// (prober/internal/http1, where the reasons are) instead of net/http: it
// fires the same trace events (phases.go), keeps conn.go's stale keep-alive
// proof, and takes the connections opened ahead (preopen.go) as the
// transports' dial does.

// h1Route is how the requests to one target URL go out on that client.
type h1Route struct {
	pool *http1.Pool
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
// first use; nil when they take net/http (http1.Eligible). The pools are
// shared as the transports are: the first target's TLS settings serve
// every target with the same policy.
func (c *Client) h1RouteFor(t *Target, key connKey) *h1Route {
	c.mu.Lock()
	defer c.mu.Unlock()
	rk := h1RouteKey{t.url, key}
	if r, ok := c.h1Routes[rk]; ok {
		return r
	}
	var r *h1Route
	if u, err := url.Parse(t.url); err == nil && http1.Eligible(u, key.h2, http.ProxyFromEnvironment) {
		pk := h1PoolKey{key, u.Scheme, http1.DialAddr(u)}
		p := c.h1Pools[pk]
		if p == nil {
			p = http1.NewPool(u, t.tls, key.reuse, c.dialH1)
			c.h1Pools[pk] = p
		}
		r = &h1Route{pool: p, host: u.Host, path: u.RequestURI()}
	}
	c.h1Routes[rk] = r
	return r
}

// dialH1 is the one-goroutine client's dial (dialTracked).
func (c *Client) dialH1(ctx context.Context, addr string) (http1.Conn, error) {
	conn, err := c.dialTracked(ctx, "tcp", addr)
	if err != nil {
		return nil, err // not a nil *trackedConn in a non-nil http1.Conn
	}
	return conn, nil
}

// h1RoundTrip sends req to t on route and returns the response, whose body
// is read in the caller's goroutine. A failure is a *url.Error, as
// net/http's are, whose Err is the cause of ctx when ctx ended.
func (c *Client) h1RoundTrip(ctx context.Context, route *h1Route, t *Target, req *Request, trace *httptrace.ClientTrace) (*http.Response, error) {
	head := http1.Head{
		Host:   route.host,
		Path:   route.path,
		Header: func(b []byte) ([]byte, error) { return t.appendHeader(b, req) },
	}
	resp, err := route.pool.RoundTrip(ctx, &head, req.Body, trace)
	if err != nil {
		return nil, &url.Error{Op: "Post", URL: t.url, Err: err}
	}
	return resp, nil
}

// appendHeader appends req's header lines as net/http writes them: a
// User-Agent unless the target sets one, the target's headers, the
// session's and the ID headers.
func (t *Target) appendHeader(b []byte, req *Request) ([]byte, error) {
	if _, ok := t.header["User-Agent"]; !ok {
		b = append(b, "User-Agent: Go-http-client/1.1\r\n"...)
	}
	var err error
	for k, vs := range t.header {
		switch {
		case k == "Host", k == "Content-Length", k == "Transfer-Encoding", k == "Trailer":
			continue // net/http writes its own
		case req.Session != "" && k == t.sessionHeader:
			continue
		}
		for _, v := range vs {
			if b, err = http1.AppendField(b, k, v); err != nil {
				return b, err
			}
		}
	}
	if req.Session != "" {
		if b, err = http1.AppendField(b, t.sessionHeader, req.Session); err != nil {
			return b, err
		}
	}
	return t.appendIDHeaders(b, req.ID), nil
}
