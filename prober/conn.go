package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http/httptrace"
	"sync/atomic"
	"syscall"
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

// trackedConn is a client connection that keeps what that proof needs: the
// bytes written on it, the peer's acknowledged byte count before a request
// is written and when the peer's FIN is read, and whether it was. It costs
// a counter per write, a system call per request on a reused connection,
// and nothing per read but an error check.
type trackedConn struct {
	net.Conn
	raw     syscall.RawConn // for the TCP state; nil when the conn has no descriptor
	written atomic.Int64
	// check is set when a request is given the connection again: its first
	// write looks at the TCP state first.
	check atomic.Bool
	// ackedBefore is the peer's acknowledged byte count when the latest
	// request began to be written; -1 when it cannot be read.
	ackedBefore atomic.Int64
	// ackedAtEnd is the count when the connection ended: when the peer's
	// FIN was read or, failing that, when it was closed; -1 until then.
	ackedAtEnd atomic.Int64
	sawEOF     atomic.Bool
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
	if err == io.EOF {
		c.sawEOF.Store(true)
		c.noteEnd()
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
}

func (s tcpState) acked(ok bool) int64 {
	if !ok {
		return -1
	}
	return s.ackedBytes
}

// dialTracked returns a dial function that tracks the connections dial makes.
func dialTracked(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return newTrackedConn(c), nil
	}
}

// reuse is what one attempt of a request knows about the connection it
// got: nil conn unless it was a reused HTTP/1 connection, the only kind a
// stale keep-alive concerns.
type reuse struct {
	conn    *trackedConn
	written int64
}

// note records the connection an attempt got (httptrace's GotConn).
func (r *reuse) note(info httptrace.GotConnInfo) {
	*r = reuse{}
	if !info.Reused {
		return
	}
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
	r.conn, r.written = conn, conn.written.Load()
	conn.ackedBefore.Store(-1)
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
