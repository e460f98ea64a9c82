package prober

import (
	"crypto/tls"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

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
func (t *phaseTrace) fill(p *record.Phases, origin record.ConnOrigin, sent time.Time) {
	*p = record.Phases{Conn: origin}
	if origin == record.ConnNone {
		return
	}
	t.mu.Lock()
	if !t.asked.IsZero() {
		p.Setup = sent.Sub(t.asked)
	}
	switch origin {
	case record.ConnDialled:
		p.DNS, p.Connect, p.TLS = t.dns, t.connect, t.tls
	case record.ConnOpenedAhead:
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
func connOrigin(info httptrace.GotConnInfo) record.ConnOrigin {
	if info.Reused {
		return record.ConnReused
	}
	c := info.Conn
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if tc, ok := c.(*trackedConn); ok && tc.openedAhead {
		return record.ConnOpenedAhead
	}
	return record.ConnDialled
}
