package e2e

import (
	"bytes"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"
)

// recorder is a proxy between inferprobe and the simulator that sees what
// the server side sees: how many requests arrived, finished or were cut off
// by the client, and their credentials. It can also hold arriving requests,
// so that a test decides which requests are in flight when it acts.
type recorder struct {
	srv   *httptest.Server
	proxy *httputil.ReverseProxy

	mu        sync.Mutex
	arrived   int            // requests received
	completed int            // answered to the end
	cut       int            // the client went away first
	held      int            // waiting at the gate now
	paths     map[string]int // by method and path
	bodies    map[string]int // how often each request body arrived
	headers   []http.Header  // of every request, in arrival order
	scrapes   []http.Header  // of every read of the engine's metrics
	gate      chan struct{}  // non-nil: arriving requests wait until it closes
}

// newRecorder starts a recorder in front of the server at upstream
// (host:port); it is closed, its held requests released, when the test ends.
func newRecorder(t *testing.T, upstream string) *recorder {
	t.Helper()
	target, err := url.Parse("http://" + upstream)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{proxy: httputil.NewSingleHostReverseProxy(target), paths: map[string]int{}, bodies: map[string]int{}}
	r.proxy.FlushInterval = -1 // pass every event on as it comes: the client times them
	// A client that goes away is counted, not logged as a proxy error.
	r.proxy.ErrorLog = log.New(io.Discard, "", 0)
	r.srv = httptest.NewServer(r)
	t.Cleanup(func() {
		r.release()
		r.srv.Close()
	})
	return r
}

// base is the API base to give inferprobe as a target's url.
func (r *recorder) base() string { return r.srv.URL + "/v1" }

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	// Read the body first: the server notices a client that goes away only
	// once the body is read, and a held request must notice.
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	r.paths[req.Method+" "+req.URL.Path]++
	if req.URL.Path == "/metrics" {
		// bench and bursts reading the engine's own metrics: not a request
		// of the run, so neither counted nor held.
		r.scrapes = append(r.scrapes, req.Header.Clone())
		r.mu.Unlock()
		r.proxy.ServeHTTP(w, req)
		return
	}
	r.arrived++
	r.bodies[string(body)]++
	r.headers = append(r.headers, req.Header.Clone())
	gate := r.gate
	if gate != nil {
		r.held++
	}
	r.mu.Unlock()
	// Deferred: the reverse proxy aborts the handler with a panic when the
	// client goes away mid-stream.
	defer func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if req.Context().Err() != nil {
			r.cut++
		} else {
			r.completed++
		}
	}()
	if gate != nil {
		select {
		case <-gate:
		case <-req.Context().Done():
		}
		r.mu.Lock()
		r.held--
		r.mu.Unlock()
		if req.Context().Err() != nil {
			return
		}
	}
	r.proxy.ServeHTTP(w, req)
}

// hold makes requests that arrive from now on wait until release.
func (r *recorder) hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gate == nil {
		r.gate = make(chan struct{})
	}
}

// release lets the held requests through and stops holding.
func (r *recorder) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gate != nil {
		close(r.gate)
		r.gate = nil
	}
}

// recorderCounts is a snapshot of what a recorder saw.
type recorderCounts struct{ arrived, completed, cut, held int }

func (r *recorder) counts() recorderCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return recorderCounts{r.arrived, r.completed, r.cut, r.held}
}

// requestHeaders returns the headers of every request so far.
func (r *recorder) requestHeaders() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.headers)
}

// repeats is how many requests arrived with a body that had arrived before:
// with synthetic prompts, which differ, requests sent twice.
func (r *recorder) repeats() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.bodies {
		n += c - 1
	}
	return n
}

// requestPaths returns how many requests came for each "METHOD /path".
// scrapeHeaders are the headers of every read of the engine's metrics.
func (r *recorder) scrapeHeaders() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.scrapes)
}

func (r *recorder) requestPaths() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.paths)
}
