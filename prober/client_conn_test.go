package prober_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// seen is what a test server saw of the requests sent to it.
type seen struct {
	mu       sync.Mutex
	protos   []int
	remotes  map[string]bool
	sessions []string
}

// streamServer answers every request with a one-chunk chat stream and notes
// its protocol, connection and session header.
func streamServer(s *seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.protos = append(s.protos, r.ProtoMajor)
		s.remotes[r.RemoteAddr] = true
		s.sessions = append(s.sessions, r.Header.Get("X-Conversation"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	})
}

// TestConnectionPolicy: TLS with a CA file or without verification, HTTP/2
// when offered and wanted, connection reuse on or off, and the session
// header.
func TestConnectionPolicy(t *testing.T) {
	no, yes := false, true
	for _, tc := range []struct {
		name      string
		tls       bool
		spec      func(st *scenarios.Target, caFile string)
		proto     int
		conns     int
		sessioned bool
	}{
		{"https, CA file, HTTP/2 offered", true, func(st *scenarios.Target, ca string) { st.TLS.CAFile = ca }, 2, 1, false},
		{"https, CA file, HTTP/2 off", true, func(st *scenarios.Target, ca string) { st.TLS.CAFile, st.HTTP2 = ca, &no }, 1, 1, false},
		{"https, verification skipped", true, func(st *scenarios.Target, _ string) { st.TLS.InsecureSkipVerify = true }, 2, 1, false},
		{"http, connections reused", false, func(st *scenarios.Target, _ string) { st.KeepAlive = &yes }, 1, 1, false},
		{"http, a connection per request", false, func(st *scenarios.Target, _ string) { st.KeepAlive = &no }, 1, 3, false},
		{"session header", false, func(st *scenarios.Target, _ string) { st.SessionHeader = "X-Conversation" }, 1, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &seen{remotes: map[string]bool{}}
			srv := httptest.NewUnstartedServer(streamServer(s))
			var caFile string
			if tc.tls {
				srv.EnableHTTP2 = true
				srv.StartTLS()
				caFile = filepath.Join(t.TempDir(), "ca.pem")
				pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
				if err := os.WriteFile(caFile, pemCert, 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				srv.Start()
			}
			defer srv.Close()
			tg := newTarget(t, srv.URL+"/v1", func(st *scenarios.Target) { tc.spec(st, caFile) })
			client := prober.NewClient()
			for i := range 3 {
				req, err := prober.NewRequest(tg, dataset.Prompt{Text: "hi", OutputTokens: 1, Session: fmt.Sprint("s", i)}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if rec := client.Do(context.Background(), tg, req); rec.Outcome != record.OutcomeOK {
					t.Fatalf("request %d: %v %q: %s", i, rec.Outcome, rec.Reason, rec.Err)
				}
				if i == 0 {
					// Connections are reused once the server has been seen to
					// keep one open after its response.
					time.Sleep(2 * prober.KeepAliveProbation)
				}
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, p := range s.protos {
				if p != tc.proto {
					t.Errorf("protocols %v, want HTTP/%d", s.protos, tc.proto)
					break
				}
			}
			if len(s.remotes) != tc.conns {
				t.Errorf("%d connections for 3 requests, want %d", len(s.remotes), tc.conns)
			}
			if tc.sessioned && (s.sessions[0] != "s0" || s.sessions[2] != "s2") {
				t.Errorf("session headers %q, want s0 s1 s2", s.sessions)
			}
		})
	}
}

// TestHTTP2ConcurrentRequestsShareConnection: requests over HTTP/2 share
// its one connection while another is in flight: a server's close does not
// race HTTP/2 streams, so they are not kept off it until the server's
// keep-alive is known, as HTTP/1 requests are.
func TestHTTP2ConcurrentRequestsShareConnection(t *testing.T) {
	s := &seen{remotes: map[string]bool{}}
	release, holding := make(chan struct{}), make(chan struct{})
	stream := streamServer(s)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Conversation") == "held" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(holding)
			<-release
		}
		stream.ServeHTTP(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	tg := newTarget(t, srv.URL+"/v1", func(st *scenarios.Target) {
		st.TLS.InsecureSkipVerify, st.SessionHeader = true, "X-Conversation"
	})
	client := prober.NewClient()
	do := func(session string) *record.Record {
		req, err := prober.NewRequest(tg, dataset.Prompt{Text: "hi", OutputTokens: 1, Session: session}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return client.Do(context.Background(), tg, req)
	}
	held := make(chan *record.Record, 1)
	go func() { held <- do("held") }()
	<-holding
	time.Sleep(10 * time.Millisecond) // its headers are read
	for i := range 3 {
		if rec := do(fmt.Sprint("s", i)); rec.Outcome != record.OutcomeOK || rec.KeepAliveWithheld {
			t.Errorf("%v %q: %s; on a connection of its own: %v", rec.Outcome, rec.Reason, rec.Err, rec.KeepAliveWithheld)
		}
	}
	close(release)
	<-held
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.remotes) != 1 {
		t.Errorf("%d connections for 4 requests over HTTP/2, want 1", len(s.remotes))
	}
}
