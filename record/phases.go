package record

import "time"

// ConnOrigin says where a request's connection came from, and so whether
// its DNS lookup, connect and TLS handshake were this request's.
type ConnOrigin uint8

const (
	ConnNone        ConnOrigin = iota // no connection was had
	ConnDialled                       // dialled for this request: its setup is in Phases
	ConnReused                        // it had carried a request before: no setup for this one
	ConnOpenedAhead                   // opened ahead (prober/preopen.go): no DNS or connect for this one; a TLS handshake still is

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
