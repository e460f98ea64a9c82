package simulator

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// RequestSeconds integrates the requests in flight over time, so its rate
// is the mean number in flight however briefly each request lasted.
func TestLoadMeterIntegratesInFlight(t *testing.T) {
	clock := time.Unix(1000, 0)
	m := &LoadMeter{now: func() time.Time { return clock }}
	step := func(d time.Duration) { clock = clock.Add(d) }

	if got := m.RequestSeconds(); got != 0 {
		t.Fatalf("idle meter: %v request-seconds, want 0", got)
	}
	m.add(1) // one request for 2s
	step(2 * time.Second)
	m.add(1) // a second one joins for 1s
	step(time.Second)
	if got := m.InFlight(); got != 2 {
		t.Fatalf("InFlight = %d, want 2", got)
	}
	m.add(-1)
	m.add(-1)
	step(10 * time.Second) // idle time adds nothing
	if got, want := m.RequestSeconds(), 2.0+2*1.0; got != want {
		t.Fatalf("RequestSeconds = %v, want %v", got, want)
	}
	// A request still in flight counts up to the reading.
	m.add(1)
	step(500 * time.Millisecond)
	if got, want := m.RequestSeconds(), 4.5; got != want {
		t.Fatalf("RequestSeconds with one in flight = %v, want %v", got, want)
	}
}

// Wrap counts a request from the handler's start until it returns.
func TestLoadMeterWrap(t *testing.T) {
	m := &LoadMeter{}
	seen := make(chan int, 1)
	h := m.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { seen <- m.InFlight() }))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/v1/completions", nil))
	if got := <-seen; got != 1 {
		t.Fatalf("InFlight inside the handler = %d, want 1", got)
	}
	if got := m.InFlight(); got != 0 {
		t.Fatalf("InFlight after the handler returned = %d, want 0", got)
	}
}
