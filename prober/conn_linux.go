package prober

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// TCP states of Linux's include/net/tcp_states.h in which the peer has
// closed its side (FIN) or reset the connection.
const (
	tcpClose     = 7
	tcpCloseWait = 8
	tcpLastAck   = 9
)

// readTCPState reads the kernel's TCP state of a connection (tcpi_state,
// and tcpi_bytes_acked and tcpi_bytes_received from Linux 4.1). It
// consumes nothing, so it may run while another goroutine reads the socket.
func readTCPState(raw syscall.RawConn) (tcpState, bool) {
	var info *unix.TCPInfo
	var err error
	if cerr := raw.Control(func(fd uintptr) {
		info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); cerr != nil || err != nil {
		return tcpState{}, false
	}
	closed := info.State == tcpClose || info.State == tcpCloseWait || info.State == tcpLastAck
	return tcpState{peerClosed: closed, ackedBytes: int64(info.Bytes_acked), received: int64(info.Bytes_received)}, true
}
