package prober

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Stale keep-alive connections. Some servers (llama.cpp's among them) close
// the connection right after a response while advertising keep-alive; a
// request that reuses it before its FIN is seen fails at once, having never
// reached the server. Such a request is sent again, once, on a fresh
// connection — but only when that is provable, since a server that did
// receive a request must never get it twice (net/http itself does not resend
// a POST). It is provable when nothing of the request was written — and a
// reused connection whose peer has already closed is not written to — or
// when the server's FIN acknowledged none of it: a server that had received
// the request would have acknowledged it in its FIN, so it had ended the
// connection before the request arrived.

// errPeerClosed refuses a request on a reused connection whose peer has
// already closed it: nothing of the request is written.
var errPeerClosed = errors.New("the server had closed the connection")

// errNotReused refuses a request a reused connection, as its server is not
// yet known to keep connections open (peer): nothing of it is written.
var errNotReused = errors.New("connection not reused")

// trackedConn is a client connection that keeps what that proof needs: the
// bytes written on it, the peer's acknowledged byte count before a request
// is written and when the peer's FIN is read, and whether it was. It costs
// a counter per write and per read, and a system call per request on a
// reused connection.
type trackedConn struct {
	net.Conn
	raw     syscall.RawConn // for the TCP state; nil when the conn has no descriptor
	written atomic.Int64
	// check is set when a request is given the connection again: its first
	// write looks at the TCP state first, or refuses when refuse is set.
	check, refuse atomic.Bool
	// ackedBefore is the peer's acknowledged byte count when the latest
	// request began to be written; -1 when it cannot be read.
	ackedBefore atomic.Int64
	// ackedAtEnd is the count when the connection ended: when the peer's
	// FIN was read or, failing that, when it was closed; -1 until then.
	ackedAtEnd atomic.Int64
	sawEOF     atomic.Bool
	// read counts the bytes read, against the system's count of those
	// received (IdleState).
	read atomic.Int64
	// watch is the server whose keep-alive this connection tests (peer):
	// set on the first connection that carried a whole response to it.
	watch atomic.Pointer[peer]
	// openedAhead is set on a connection opened before its request
	// (preopen.go), whose setup was no request's.
	openedAhead bool
}

func newTrackedConn(c net.Conn) *trackedConn {
	t := &trackedConn{Conn: c}
	t.ackedBefore.Store(-1)
	t.ackedAtEnd.Store(-1)
	if sc, ok := c.(syscall.Conn); ok {
		t.raw, _ = sc.SyscallConn()
	}
	return t
}

func (c *trackedConn) Write(p []byte) (int, error) {
	if c.check.Swap(false) {
		if c.refuse.Load() {
			return 0, errNotReused
		}
		st, ok := c.tcp()
		if ok && st.peerClosed {
			return 0, errPeerClosed
		}
		c.ackedBefore.Store(st.acked(ok))
	}
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	if err == io.EOF {
		c.sawEOF.Store(true)
		c.noteEnd()
		if p := c.watch.Load(); p != nil {
			p.learn(peerCloses)
		}
	}
	return n, err
}

// Close notes the acknowledged count first when no FIN was read (a TLS
// close_notify ends the stream above it): the transport closes a connection
// as soon as a request on it fails, before the request returns.
func (c *trackedConn) Close() error {
	c.noteEnd()
	return c.Conn.Close()
}

func (c *trackedConn) noteEnd() {
	if st, ok := c.tcp(); ok {
		c.ackedAtEnd.CompareAndSwap(-1, st.ackedBytes)
	}
}

// IdleState is what the one-goroutine HTTP/1.1 client asks of an idle
// connection before it sends on it (http1.Conn).
func (c *trackedConn) IdleState() (unread int64, peerClosed, ok bool) {
	st, ok := c.tcp()
	unread = st.received - c.read.Load()
	if st.peerClosed {
		unread-- // the FIN counts as one received
	}
	return unread, st.peerClosed, ok
}

func (c *trackedConn) tcp() (tcpState, bool) {
	if c.raw == nil {
		return tcpState{}, false
	}
	return readTCPState(c.raw)
}

// tcpState is what the system says of a connection (readTCPState).
type tcpState struct {
	peerClosed bool  // the peer's FIN or reset has arrived
	ackedBytes int64 // bytes the peer has acknowledged
	received   int64 // bytes received from the peer, a FIN as one; 0 where unknown
}

func (s tcpState) acked(ok bool) int64 {
	if !ok {
		return -1
	}
	return s.ackedBytes
}

// reuse is what one attempt of a request knows about the connection it
// got: nil conn unless it was a reused HTTP/1 connection, the only kind a
// stale keep-alive concerns.
type reuse struct {
	conn    *trackedConn
	written int64
	got     *trackedConn // the HTTP/1 connection got, reused or not
	// peer is the server's keep-alive, while it is unknown; refused is set
	// when the connection got was reused before the server was seen to keep
	// one: nothing of the request is then written on it.
	peer    *peer
	refused bool
}

// note records the connection an attempt got (httptrace's GotConn).
func (r *reuse) note(info httptrace.GotConnInfo, now time.Time) {
	*r = reuse{peer: r.peer}
	c := info.Conn
	if tc, ok := c.(*tls.Conn); ok {
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			return // HTTP/2 retries unprocessed streams itself
		}
		c = tc.NetConn()
	}
	conn, ok := c.(*trackedConn)
	if !ok {
		return
	}
	r.got = conn
	if !info.Reused {
		return
	}
	r.conn, r.written = conn, conn.written.Load()
	conn.ackedBefore.Store(-1)
	r.refused = r.peer != nil && !r.peer.reuses(now, true)
	conn.refuse.Store(r.refused)
	conn.check.Store(true)
}

// neverReached reports whether the attempt, which failed with err before
// any response, provably never reached the server: nothing of it was
// written, or the FIN that ended the connection acknowledged none of it.
// A reset proves nothing: a server may reset after reading a request, and
// a reset's acknowledgement is not counted.
func (r *reuse) neverReached(err error) bool {
	if r.conn == nil {
		return false
	}
	if r.conn.written.Load() == r.written {
		return true
	}
	clean := r.conn.sawEOF.Load() || errors.Is(err, io.EOF)
	before, end := r.conn.ackedBefore.Load(), r.conn.ackedAtEnd.Load()
	return clean && before >= 0 && end == before
}

// A server that closes every connection right after its response, while
// advertising keep-alive (llama.cpp's), races each request that reuses one:
// the request may reach it after its last byte but before its close, and is
// then reset — possibly received, so never sent again, and a failure. That
// race is avoided, not resolved: until a server has been seen to keep a
// connection open for keepAliveProbation after a response, a request to it
// is not written on a connection that carried one (it opens its own), and
// once the server has been seen to close one — that first connection's FIN,
// or a reused connection found closed — none is. Nothing is resent on a
// guess: the choice is only whether to reuse.

// keepAliveProbation is how long the first connection that carried a whole
// response is watched for the server's close before connections are reused:
// such a server closes as it sends its last byte, and its FIN follows that
// byte on the wire, whatever the network's delay. A server that closes later
// than this still races; a request that then fails is a connect error, and
// the close is learnt.
const keepAliveProbation = 20 * time.Millisecond

type peerState int32

const (
	peerUnknown peerState = iota
	peerKeeps
	peerCloses
)

// peer is what a client has learnt of one server's keep-alive.
type peer struct {
	state atomic.Int32 // a peerState
	mu    sync.Mutex
	// probe is the first connection that carried a whole response, at
	// probeEnd; nil until one has.
	probe    *trackedConn
	probeEnd time.Time
}

func (p *peer) learn(s peerState) {
	p.state.CompareAndSwap(int32(peerUnknown), int32(s))
}

// reuses reports whether a request at now may go out on a transport that
// reuses connections (idle false) or, handed a connection that carried a
// response (idle true), on that one.
func (p *peer) reuses(now time.Time, idle bool) bool {
	switch peerState(p.state.Load()) {
	case peerKeeps:
		return true
	case peerCloses:
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.probe == nil {
		// No response has been heard to end, so none is idle to be raced —
		// but one handed out now ended before Do heard of it.
		return !idle
	}
	// A close already seen is learnt at once, not after the probation.
	if st, ok := p.probe.tcp(); p.probe.sawEOF.Load() || ok && st.peerClosed {
		p.learn(peerCloses)
		return false
	}
	if now.Sub(p.probeEnd) < keepAliveProbation {
		return false
	}
	p.learn(peerKeeps)
	return true
}

// closes reports whether the server has been seen to close connections
// right after its responses: a request kept off reused connections for
// that, rather than while the server's keep-alive was still being learnt,
// is counted (record.Record.KeepAliveWithheld).
func (p *peer) closes() bool { return peerState(p.state.Load()) == peerCloses }

// ended notes that a response on connection c ended, whole or not, while
// the server's keep-alive is unknown.
func (p *peer) ended(c *trackedConn, whole bool, now time.Time) {
	if !whole || peerState(p.state.Load()) != peerUnknown {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.probe == nil {
		p.probe, p.probeEnd = c, now
		c.watch.Store(p)
		if c.sawEOF.Load() {
			p.learn(peerCloses)
		}
	}
}
