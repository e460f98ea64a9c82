package simulator

import (
	"net/http"
	"sync"
	"time"
)

// LoadMeter measures how busy a simulator is: the requests it is serving
// and the time they have spent being served. The demo's simulated GPUs
// follow it, so their power and utilisation rise with the probe and burst
// traffic. The zero value is ready to use.
type LoadMeter struct {
	now func() time.Time // nil: time.Now; tests replace it

	mu       sync.Mutex
	inFlight int
	total    float64   // request-seconds up to since
	since    time.Time // when inFlight last changed
}

// Wrap returns h counted by m: a request is in flight from the moment h is
// called until it returns, which for a stream is its last byte.
func (m *LoadMeter) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.add(1)
		defer m.add(-1)
		h.ServeHTTP(w, r)
	})
}

// InFlight returns the requests being served now.
func (m *LoadMeter) InFlight() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inFlight
}

// RequestSeconds returns the time requests have spent in flight, summed
// over requests and counted up to now. Like a counter it only grows; its
// rate over an interval is the mean number of requests in flight, which a
// point reading of InFlight would only sample.
func (m *LoadMeter) RequestSeconds() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.advance()
}

func (m *LoadMeter) add(d int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance()
	m.inFlight += d
}

// advance returns the total up to now and moves since to now; mu is held.
func (m *LoadMeter) advance() float64 {
	now := time.Now()
	if m.now != nil {
		now = m.now()
	}
	if !m.since.IsZero() {
		m.total += float64(m.inFlight) * now.Sub(m.since).Seconds()
	}
	m.since = now
	return m.total
}
