package prober

import (
	"crypto/tls"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// ConnOrigin says where a request's connection came from, and so whether
// its DNS lookup, connect and TLS handshake were this request's.
type ConnOrigin uint8

const (
	ConnNone        ConnOrigin = iota // no connection was had
	ConnDialled                       // dialled for this request: its setup is in Phases
	ConnReused                        // it had carried a request before: no setup for this one
	ConnOpenedAhead                   // opened ahead (preopen.go): no DNS or connect for this one; a TLS handshake still is

	// NumConnOrigins is how many origins there are; it stays last.
	NumConnOrigins = int(iota)
)

func (o ConnOrigin) String() string {
	switch o {
	case ConnDialled:
		return "dialled"
	case ConnReused:
		return "reused"
	case ConnOpenedAhead:
		return "opened_ahead"
	}
	return "none"
}

// Phases is the client's breakdown of one request on its way to the first
// token: the connection's setup, which comes before Sent (the time origin),
// and then offsets from Sent. The parts from Sent on add up to the TTFT:
// Written (sending), FirstByte−Written (waiting for the server),
// Record.Ack−FirstByte (the rest of the headers) and TTFT−Ack.
type Phases struct {
	Conn ConnOrigin
	// DNS, Connect and TLS are the time spent resolving the host, opening
	// the TCP connection and in the TLS handshake for this request; 0 when
	// the request did none of it (Conn says why; a literal IP has no DNS).
	// They are the network's, not the client's: not schedule lag.
	DNS, Connect, TLS time.Duration
	// Setup is the whole wait for the connection, from asking the transport
	// for one to having it (Sent): DNS, Connect and TLS and the client's own
	// work around them.
	Setup time.Duration
	// Written is when the whole request had been written, FirstByte when
	// the first byte of the response came; 0 when that did not happen.
	Written, FirstByte time.Duration
}

// Network is the part of the connection's setup spent on the network.
func (p *Phases) Network() time.Duration { return p.DNS + p.Connect + p.TLS }

// phaseTrace takes one attempt's Phases from the transport's trace events;
// any request path (net/http or another reader) fills Phases through it.
// The dial's events come from the transport's dialling goroutine, which may
// go on after the attempt took another connection (hence the lock), and
// its times are taken only when the attempt got a connection dialled for it.
type phaseTrace struct {
	now func() time.Time

	mu                                      sync.Mutex
	asked, dnsStart, connectStart, tlsStart time.Time
	dns, connect, tls                       time.Duration

	// begun is when the attempt began; the writer and reader goroutines
	// stamp written and firstByte as offsets from it (on the monotonic
	// clock, as the chunks are), the writer possibly after the response
	// came: a server may answer before it has read the body.
	begun              time.Time
	written, firstByte atomic.Int64 // 0 until then
}

// reset begins an attempt.
func (t *phaseTrace) reset() {
	t.mu.Lock()
	t.asked, t.dnsStart, t.connectStart, t.tlsStart = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	t.dns, t.connect, t.tls = 0, 0, 0
	t.begun = t.now()
	t.mu.Unlock()
	t.written.Store(0)
	t.firstByte.Store(0)
}

// sinceBegun is now as an offset from the attempt's beginning, never 0.
// (Locked: a failed attempt's writer may still report as the next begins.)
func (t *phaseTrace) sinceBegun() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return max(1, int64(t.now().Sub(t.begun)))
}

// hooks returns the trace hooks, calling got when the connection is had
// (the time origin) and wrote once the request is written.
func (t *phaseTrace) hooks(got func(httptrace.GotConnInfo), wrote func()) *httptrace.ClientTrace {
	stamp := func(at *time.Time) { t.mu.Lock(); *at = t.now(); t.mu.Unlock() }
	// A connect may be tried on several addresses: it counts from the
	// last one's start.
	since := func(d *time.Duration, start *time.Time) { t.mu.Lock(); *d = t.now().Sub(*start); t.mu.Unlock() }
	return &httptrace.ClientTrace{
		GetConn:           func(string) { stamp(&t.asked) },
		DNSStart:          func(httptrace.DNSStartInfo) { stamp(&t.dnsStart) },
		DNSDone:           func(httptrace.DNSDoneInfo) { since(&t.dns, &t.dnsStart) },
		ConnectStart:      func(string, string) { stamp(&t.connectStart) },
		ConnectDone:       func(string, string, error) { since(&t.connect, &t.connectStart) },
		TLSHandshakeStart: func() { stamp(&t.tlsStart) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { since(&t.tls, &t.tlsStart) },
		GotConn:           got,
		WroteRequest: func(httptrace.WroteRequestInfo) {
			t.written.Store(t.sinceBegun())
			wrote()
		},
		GotFirstResponseByte: func() { t.firstByte.Store(t.sinceBegun()) },
	}
}

// fill sets p from the attempt whose connection came from origin at sent;
// an attempt that got none has no phases.
func (t *phaseTrace) fill(p *Phases, origin ConnOrigin, sent time.Time) {
	*p = Phases{Conn: origin}
	if origin == ConnNone {
		return
	}
	t.mu.Lock()
	if !t.asked.IsZero() {
		p.Setup = sent.Sub(t.asked)
	}
	switch origin {
	case ConnDialled:
		p.DNS, p.Connect, p.TLS = t.dns, t.connect, t.tls
	case ConnOpenedAhead:
		p.TLS = t.tls
	}
	origin0 := sent.Sub(t.begun)
	t.mu.Unlock()
	offset := func(d int64) time.Duration {
		if d == 0 {
			return 0
		}
		return time.Duration(d) - origin0
	}
	p.Written, p.FirstByte = offset(t.written.Load()), offset(t.firstByte.Load())
}

// connOrigin classifies the connection an attempt got.
func connOrigin(info httptrace.GotConnInfo) ConnOrigin {
	if info.Reused {
		return ConnReused
	}
	c := info.Conn
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if tc, ok := c.(*trackedConn); ok && tc.openedAhead {
		return ConnOpenedAhead
	}
	return ConnDialled
}
