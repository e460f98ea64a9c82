package prober

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/prober/internal/http1"
	"github.com/inferprobe/inferprobe/record"
)

// Client sends requests and times their responses. It is safe for concurrent use.
type Client struct {
	now func() time.Time
	// dial opens the connections, which the transports track (conn.go).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu      sync.Mutex
	clients map[connKey]*http.Client // one transport per connection policy
	// h1Routes and h1Pools are the one-goroutine HTTP/1.1 client's
	// (client_h1.go): a target URL's route under a policy (nil: net/http),
	// and the connections to a server under one.
	h1Routes map[h1RouteKey]*h1Route
	h1Pools  map[h1PoolKey]*http1.Pool
	peers    map[string]*peer       // by target URL: its server's keep-alive (conn.go)
	opened   map[string][]preopened // by dial address: connections opened ahead (preopen.go)
	// toppingUp holds the dial addresses whose spare connections are being
	// opened (topUp).
	toppingUp map[string]bool
}

// NewClient returns a client with connection reuse sized for many concurrent streams.
func NewClient() *Client {
	return &Client{
		now:      time.Now,
		dial:     (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		clients:  map[connKey]*http.Client{},
		h1Routes: map[h1RouteKey]*h1Route{},
		h1Pools:  map[h1PoolKey]*http1.Pool{},
		peers:    map[string]*peer{},
		opened:   map[string][]preopened{},

		toppingUp: map[string]bool{},
	}
}

// peerFor returns what is known of t's server's keep-alive; nil when t's
// connections are not reused.
func (c *Client) peerFor(t *Target) *peer {
	if !t.conn.reuse {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.peers[t.url]
	if p == nil {
		p = &peer{}
		c.peers[t.url] = p
	}
	return p
}

// clientFor returns the net/http client for a connection policy (TLS,
// HTTP/2, reuse), made on first use; targets with the same policy share it,
// and so their idle connections.
func (c *Client) clientFor(key connKey, tlsConfig *tls.Config) *http.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc, ok := c.clients[key]; ok {
		return hc
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         c.dialConn,
		TLSHandshakeTimeout: http1.TLSHandshakeTimeout,
		TLSClientConfig:     tlsConfig,
		MaxIdleConns:        http1.MaxIdleConns,
		MaxIdleConnsPerHost: http1.MaxIdleConns,
		IdleConnTimeout:     http1.IdleConnTimeout,
		// Go negotiates HTTP/2 over TLS only when asked to once a TLS config
		// is given; a non-nil empty TLSNextProto turns it off.
		ForceAttemptHTTP2: key.h2,
		DisableKeepAlives: !key.reuse,
		// Compressors buffer, which would distort chunk timing: ask for
		// identity (a compressed reply is still decoded: decodeBody).
		DisableCompression: true,
		ReadBufferSize:     http1.BufferBytes,
		WriteBufferSize:    http1.BufferBytes,
	}
	if !key.h2 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	hc := &http.Client{Transport: tr, CheckRedirect: noRedirect}
	c.clients[key] = hc
	return hc
}

// A benchmark must time the endpoint it was pointed at; following a redirect
// would silently time another one.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// errStall is the cancellation cause when a stream goes silent too long.
var errStall = errors.New("stream stalled")

// errGaveUp is the cancellation cause of a request the client cancels on
// purpose (dataset.cancel, a trace's cancellation flag).
var errGaveUp = errors.New("cancelled by the client")

// Do sends req to t and returns its record. It never returns an error: failures
// are classified into the record.
func (c *Client) Do(ctx context.Context, t *Target, req *Request) *record.Record {
	t = t.ForURL(req.URL)
	rec := &record.Record{
		Seq:                req.Seq,
		ID:                 req.ID,
		Scheduled:          req.Scheduled,
		FirstOutput:        -1,
		InputTokens:        req.InputTokens,
		PinnedOutputTokens: req.PinnedOutputTokens,
	}
	if req.PinnedOutputTokens > 0 {
		rec.Chunks = make([]time.Duration, 0, req.PinnedOutputTokens+1)
	}

	if !waitForSchedule(ctx, req.Scheduled) {
		// Never sent: no send time, so no schedule lag (now is before the
		// scheduled time, and would make it negative).
		failRecord(rec, classify(ctx, context.Cause(ctx), record.ReasonTimeout), 0, fmt.Errorf("not sent: %w", context.Cause(ctx)))
		return rec
	}

	ctx, cancelTimeout := context.WithTimeout(ctx, t.timeout)
	defer cancelTimeout()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	wrote := func() {}
	if req.Cancel {
		// Armed once the request is written, as AIPerf's delay counts: a
		// delay of 0 sends the whole request, then hangs up.
		giveUp := time.AfterFunc(time.Hour, func() { cancel(errGaveUp) })
		giveUp.Stop()
		defer giveUp.Stop()
		wrote = func() { giveUp.Reset(req.CancelAfter) }
		defer func() {
			if rec.Outcome == record.OutcomeCancelled && errors.Is(context.Cause(ctx), errGaveUp) {
				rec.Err = fmt.Sprintf("cancelled by the client %s after it was sent (request cancellation)", req.CancelAfter)
			}
		}()
	}

	resp, kept := c.sendHTTP(ctx, t, req, rec, wrote)
	if resp == nil {
		return rec
	}
	defer resp.Body.Close()
	rec.Ack = c.now().Sub(rec.Sent)
	if kept.peer != nil {
		defer func() { kept.peer.ended(kept.conn, rec.Outcome == record.OutcomeOK, c.now()) }()
	}
	rec.Status = resp.StatusCode
	what := streamSSE
	if t.stream {
		what = eventStreamType(resp.Header)
	}
	enc, encErr := contentEncoding(resp.Header)
	rec.Encoding = enc

	body, now := io.Reader(resp.Body), c.now
	if resp.StatusCode == http.StatusOK && what == streamSSE && t.stream && t.stallTimeout > 0 {
		stall := time.AfterFunc(t.stallTimeout, func() { cancel(errStall) })
		defer stall.Stop()
		body = &stallReader{r: body, timer: stall, d: t.stallTimeout}
	}
	if encErr == nil && enc != record.EncodingIdentity {
		// Events are stamped at the read that delivered their compressed
		// bytes, not when the decoder got round to them.
		arrived := &arrivalReader{r: body, now: c.now}
		body, now = decodeBody(enc, arrived), arrived.stamp
		defer releaseDecoder(body)
	}

	if resp.StatusCode != http.StatusOK {
		snippet, _ := io.ReadAll(io.LimitReader(body, 512))
		rec.Duration = c.now().Sub(rec.Sent)
		failRecord(rec, statusReason(resp.StatusCode), resp.StatusCode, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(snippet)))
		return rec
	}
	switch {
	case encErr != nil:
		rec.Duration = c.now().Sub(rec.Sent)
		failRecord(rec, record.ReasonProtocol, 0, encErr)
		return rec
	case !t.stream:
		readResponse(now, t, body, rec)
	case what == streamJSON:
		readUnstreamed(now, t, body, rec)
	case what != streamSSE:
		rec.Duration = c.now().Sub(rec.Sent)
		failRecord(rec, record.ReasonProtocol, 0, fmt.Errorf("streaming reply is not an event stream: %s", what))
		return rec
	default:
		readStream(now, t, body, rec, req)
	}
	if rec.Outcome == record.OutcomeError && ctx.Err() != nil {
		// A read failed because we cut it: say why, and end it when we gave
		// up, not at the last byte that came before the silence.
		setReason(rec, classify(ctx, ctx.Err(), rec.Reason))
		rec.Duration = c.now().Sub(rec.Sent)
	}
	return rec
}

// sendHTTP writes req to t and returns the response, or nil with the failure
// recorded in rec. A first attempt that provably never reached the server
// (a stale keep-alive connection: see conn.go) is sent again, once, on a
// fresh connection, and the record says so.
// wrote is called each time the request has been written. A response on a
// connection that may be reused while its server's keep-alive is unknown
// comes with kept, whose peer Do tells when it has ended.
func (c *Client) sendHTTP(ctx context.Context, t *Target, req *Request, rec *record.Record, wrote func()) (_ *http.Response, kept keptResponse) {
	var conn reuse
	phases, origin := phaseTrace{now: c.now}, record.ConnNone
	defer func() { phases.fill(&rec.Phases, origin, rec.Sent) }()
	// The time origin: just before the request is written to the connection,
	// so connection setup is not billed to the server's TTFT.
	trace := phases.hooks(func(info httptrace.GotConnInfo) {
		rec.Sent = c.now()
		origin = connOrigin(info)
		conn.note(info, rec.Sent)
	}, wrote)
	ctx = httptrace.WithClientTrace(ctx, trace)
	// key is the attempt's connection policy: t's, or without reuse for a
	// request on a connection of its own.
	key, p := t.conn, c.peerFor(t)
	if p != nil && !p.reuses(c.now(), false) {
		key.reuse, rec.KeepAliveWithheld, p = false, p.closes(), nil
	}
	for {
		conn.peer = p
		route := c.h1RouteFor(t, key)
		var hreq *http.Request
		if route == nil {
			var err error
			if hreq, err = newHTTPRequest(ctx, t, req); err != nil {
				failRecord(rec, record.ReasonProtocol, 0, fmt.Errorf("building request: %w", err))
				return nil, kept
			}
		}

		rec.Sent, origin = time.Time{}, record.ConnNone
		phases.reset()
		var resp *http.Response
		var err error
		if route != nil {
			resp, err = c.h1RoundTrip(ctx, route, t, req, trace)
		} else {
			resp, err = c.clientFor(key, t.tls).Do(hreq)
		}
		if rec.Sent.IsZero() {
			// No connection was had: the attempt began when we asked for one.
			rec.Sent = phases.begun
		}
		if err == nil {
			if origin == record.ConnDialled || origin == record.ConnOpenedAhead {
				// A new connection was needed: have the next ones ready.
				c.topUp(t)
			}
			switch {
			case p != nil && conn.got == nil:
				// HTTP/2: a close does not race its streams.
				p.learn(peerKeeps)
			case p != nil:
				kept = keptResponse{p, conn.got}
			}
			return resp, kept
		}
		if conn.refused && conn.neverReached(err) && ctx.Err() == nil {
			// Not sent: a connection of its own, as if none had been idle.
			key.reuse, rec.KeepAliveWithheld, p = false, p.closes(), nil
			continue
		}
		if p != nil && conn.conn != nil && ctx.Err() == nil {
			p.learn(peerCloses) // a reused connection was found closed
		}
		if rec.ConnRetried || ctx.Err() != nil || !conn.neverReached(err) {
			if conn.conn != nil && ctx.Err() == nil {
				err = fmt.Errorf("%w (the server closed a kept-alive connection as this request went out on it; not sent again, as it may have been received: for a server that closes after each response, set keep_alive: false, or bench --no-keep-alive)", err)
			}
			rec.Duration = c.now().Sub(rec.Sent)
			failRecord(rec, classify(ctx, err, record.ReasonConnect), 0, err)
			return nil, kept
		}
		rec.ConnRetried, key.reuse, p = true, false, nil
	}
}

// newHTTPRequest builds req for net/http.
func newHTTPRequest(ctx context.Context, t *Target, req *Request) (*http.Request, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(req.Body))
	if err != nil {
		return nil, err
	}
	// Without GetBody the transport never resends the request itself:
	// every resend is ours, proven safe, and counted.
	hreq.GetBody = nil
	hreq.Header = t.header.Clone()
	if req.Session != "" {
		hreq.Header.Set(t.sessionHeader, req.Session)
	}
	t.setIDHeaders(hreq.Header, req.ID)
	return hreq, nil
}

// keptResponse is a response on a connection that may be reused, while its
// server's keep-alive is unknown.
type keptResponse struct {
	peer *peer
	conn *trackedConn
}

// maxLead is how far ahead of its scheduled time a request may reach Do and
// still be held until that time. An executor may be handed requests early —
// a scheduler that sends credits to a worker process ahead of time, so that
// the hops on the way (goroutines, the pipe, the worker's reader) are not
// billed as schedule lag — and then Do itself sends at the scheduled instant.
// A request further ahead than maxLead is sent at once: a wall clock stepped
// back between the scheduler's process and this one must not hold requests.
const maxLead = time.Second

// waitForSchedule waits until at when it is ahead, by at most maxLead, and
// reports false if ctx ended first. A request that reaches Do late (the
// usual case: the scheduler calls Do at the scheduled time) does not wait.
func waitForSchedule(ctx context.Context, at time.Time) bool {
	if d := time.Until(at); d <= 0 || d > maxLead {
		return true
	}
	return sleepUntil(ctx, at)
}

// stallReader rearms the stall timer whenever bytes arrive, including SSE
// comments, which servers send as keep-alives.
type stallReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.d)
	}
	return n, err
}

// classify names why a request's context or transport failed. fallback is
// used when neither a deadline nor a stall nor cancellation explains err.
func classify(ctx context.Context, err error, fallback record.Reason) record.Reason {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errStall):
		return record.ReasonStall
	case errors.Is(cause, context.DeadlineExceeded):
		return record.ReasonTimeout
	case errors.Is(cause, context.Canceled), errors.Is(cause, errGaveUp):
		return reasonCancelled
	}
	var tlsErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	if errors.As(err, &tlsErr) || errors.As(err, &recErr) {
		return record.ReasonConnect
	}
	return fallback
}

// reasonCancelled marks a request we cancelled ourselves (shutdown); failRecord turns
// it into the cancelled outcome rather than an error.
const reasonCancelled record.Reason = "cancelled"

func statusReason(code int) record.Reason {
	switch {
	case code == http.StatusTooManyRequests:
		return record.ReasonHTTP429
	case code >= 500:
		return record.ReasonHTTP5xx
	case code >= 400:
		return record.ReasonHTTP4xx
	}
	return record.ReasonProtocol // 1xx/2xx other than 200, or a 3xx we did not follow
}

// failRecord marks r failed with reason; the first failure wins.
func failRecord(r *record.Record, reason record.Reason, status int, err error) {
	if r.Outcome != record.OutcomeOK {
		return
	}
	setReason(r, reason)
	if status != 0 {
		r.Status = status
	}
	if err != nil {
		r.Err = err.Error()
	}
}

func setReason(r *record.Record, reason record.Reason) {
	r.Outcome, r.Reason = record.OutcomeError, reason
	if reason == reasonCancelled {
		r.Outcome, r.Reason = record.OutcomeCancelled, record.ReasonNone
	}
}

// What a 200 reply to a streaming request carries, by its headers.
const (
	streamSSE  = "event stream"
	streamJSON = "one JSON body"
)

// eventStreamType says whether a 200 reply to a streaming request may be read
// as an event stream (streamSSE), is a single JSON body (streamJSON), or is
// something else, which it describes. Content types that servers send by
// mistake for an event stream (none, text/plain, octet-stream) are read as
// one.
func eventStreamType(h http.Header) string {
	ct := h.Get("Content-Type")
	if ct == "" {
		return streamSSE
	}
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err != nil:
		return "Content-Type " + ct
	case mt == "text/event-stream", mt == "text/plain", mt == "application/octet-stream":
		return streamSSE
	case mt == "application/json", strings.HasSuffix(mt, "+json"):
		return streamJSON
	}
	return "Content-Type " + mt
}
