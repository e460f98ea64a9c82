package http1

import (
	"io"
	"net"
	"sync"
	"testing"
)

// TestIdleSwept: connections idle for IdleConnTimeout are closed.
func TestIdleSwept(t *testing.T) {
	p := &Pool{reuse: true}
	old, young := newScriptConn(p), newScriptConn(p)
	p.put(old.conn)
	p.put(young.conn)
	p.mu.Lock()
	old.conn.idleAt = old.conn.idleAt.Add(-IdleConnTimeout)
	p.mu.Unlock()
	p.sweep()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) != 1 || p.idle[0] != young.conn || !old.isClosed() || young.isClosed() {
		t.Errorf("after the sweep: %d idle, the old one closed %v, the young one %v; want the young one idle", len(p.idle), old.isClosed(), young.isClosed())
	}
}

// scriptConn is a connection that reads a script, then EOF (or err).
type scriptConn struct {
	net.Conn // nil: only Read, Write and Close are used
	conn     *conn
	mu       sync.Mutex
	reads    []string
	err      error
	closed   bool
}

func newScriptConn(p *Pool, reads ...string) *scriptConn {
	s := &scriptConn{reads: reads, err: io.EOF}
	s.conn = &conn{raw: s, rw: s, pool: p, buf: make([]byte, BufferBytes), stop: func() bool { return true }}
	return s
}

func (s *scriptConn) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reads) == 0 {
		return 0, s.err
	}
	n := copy(p, s.reads[0])
	if s.reads[0] = s.reads[0][n:]; s.reads[0] == "" {
		s.reads = s.reads[1:]
	}
	return n, nil
}

func (s *scriptConn) Write(p []byte) (int, error) { return len(p), nil }

func (s *scriptConn) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// IdleState says nothing, as on a system whose TCP state is not read.
func (s *scriptConn) IdleState() (int64, bool, bool) { return 0, false, false }

func (s *scriptConn) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
