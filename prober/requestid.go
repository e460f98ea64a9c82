package prober

import (
	"net/http"

	"github.com/inferprobe/inferprobe/record"
)

// Header names of a request's identity: X-Request-ID, which engines and
// proxies log, and W3C Trace Context's traceparent, which an engine's
// OpenTelemetry traces join.
const (
	RequestIDHeader   = "X-Request-Id"
	TraceparentHeader = "Traceparent"
)

// setIDHeaders puts id's headers on h, those of them the target sends. Both
// values share one string and one slice: two allocations a request.
func (t *Target) setIDHeaders(h http.Header, id record.RequestID) {
	if !t.sendRequestID && !t.sendTraceparent {
		return
	}
	const uuidLen = 36
	var b [uuidLen + 55]byte
	id.AppendUUID(b[:0])
	id.PutTraceparent(b[uuidLen:])
	s := string(b[:])
	values := []string{s[:uuidLen], s[uuidLen:]}
	if t.sendRequestID {
		h[RequestIDHeader] = values[0:1:1]
	}
	if t.sendTraceparent {
		h[TraceparentHeader] = values[1:2:2]
	}
}

// appendIDHeaders appends id's header lines, those of them the target
// sends, as the one-goroutine path writes a request (h1.go).
func (t *Target) appendIDHeaders(b []byte, id record.RequestID) []byte {
	if t.sendRequestID {
		b = append(b, RequestIDHeader+": "...)
		b = append(id.AppendUUID(b), "\r\n"...)
	}
	if t.sendTraceparent {
		var tp [55]byte
		id.PutTraceparent(tp[:])
		b = append(b, TraceparentHeader+": "...)
		b = append(append(b, tp[:]...), "\r\n"...)
	}
	return b
}
