package prober_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// phaseServer stamps, on the clock the client reads too, when it accepted
// a connection, wrote the response headers and wrote the first token, with
// a pause before each of the two writes.
type phaseServer struct {
	mu                  sync.Mutex
	accepted            []time.Time
	headers, firstToken time.Time
}

const phasePause = 5 * time.Millisecond

func (s *phaseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(phasePause)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	s.mu.Lock()
	s.headers = time.Now()
	s.mu.Unlock()
	w.(http.Flusher).Flush()
	time.Sleep(phasePause)
	s.mu.Lock()
	s.firstToken = time.Now()
	s.mu.Unlock()
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n")
}

func (s *phaseServer) connState(_ net.Conn, st http.ConnState) {
	if st == http.StateNew {
		s.mu.Lock()
		s.accepted = append(s.accepted, time.Now())
		s.mu.Unlock()
	}
}

// TestPhasesAddUp: a request's phases from its send on (sending, waiting
// for the first byte, the rest of the headers, the first token) add up to
// its TTFT, each lies where the server's own stamps put it, and the
// connection's setup is the request's only when its connection was dialled
// for it: a fresh connection (by name, so with a DNS lookup), a reused one,
// one opened ahead and a TLS one.
func TestPhasesAddUp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tls     bool
		preopen bool
		second  bool // the second request, on the first one's connection
		want    record.ConnOrigin
	}{
		{"fresh", false, false, false, record.ConnDialled},
		{"reused", false, false, true, record.ConnReused},
		{"opened ahead", false, true, false, record.ConnOpenedAhead},
		{"tls", true, false, false, record.ConnDialled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &phaseServer{}
			srv := httptest.NewUnstartedServer(s)
			srv.Config.ConnState = s.connState
			if tc.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
			scheme := "http"
			if tc.tls {
				scheme = "https"
			}
			no := false
			tg := newTarget(t, fmt.Sprintf("%s://localhost:%s/v1", scheme, port), func(st *scenarios.Target) {
				st.TLS.InsecureSkipVerify, st.HTTP2 = tc.tls, &no
			})
			client := prober.NewClient()
			send := func() *record.Record {
				req, err := prober.NewRequest(tg, dataset.Prompt{Text: "hi", OutputTokens: 1}, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Scheduled = time.Now()
				rec := client.Do(context.Background(), tg, req)
				if rec.Outcome != record.OutcomeOK {
					t.Fatalf("%v %q: %s", rec.Outcome, rec.Reason, rec.Err)
				}
				return rec
			}
			if tc.preopen && client.Preopen(context.Background(), tg, 1) != 1 {
				t.Fatal("no connection opened ahead")
			}
			rec := send()
			if tc.second {
				time.Sleep(2 * prober.KeepAliveProbation)
				rec = send()
			}
			p := rec.Phases
			ttft, _ := rec.TTFT()
			s.mu.Lock()
			defer s.mu.Unlock()

			if p.Conn != tc.want {
				t.Errorf("connection %v, want %v", p.Conn, tc.want)
			}
			parts := []struct {
				name string
				d    time.Duration
			}{
				{"sending", p.Written},
				{"waiting", p.FirstByte - p.Written},
				{"headers", rec.Ack - p.FirstByte},
				{"first token", ttft - rec.Ack},
			}
			var sum time.Duration
			for _, part := range parts {
				if part.d < 0 {
					t.Errorf("%s %v < 0 (%+v, ack %v, ttft %v)", part.name, part.d, p, rec.Ack, ttft)
				}
				sum += part.d
			}
			if d := sum - ttft; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("parts add up to %v, TTFT %v", sum, ttft)
			}
			// The server's stamps bound them (only from below: the client
			// may stamp late, never early): the first byte came after the
			// server wrote it, the first token after the server wrote it.
			if rec.Sent.Add(p.FirstByte).Before(s.headers) || rec.Sent.Add(ttft).Before(s.firstToken) {
				t.Errorf("first byte %v and token %v after the send; the server wrote them at %v and %v",
					p.FirstByte, ttft, s.headers.Sub(rec.Sent), s.firstToken.Sub(rec.Sent))
			}

			network := p.DNS + p.Connect + p.TLS
			if network > p.Setup {
				t.Errorf("DNS %v + connect %v + TLS %v exceed the connection setup %v", p.DNS, p.Connect, p.TLS, p.Setup)
			}
			switch tc.want {
			case record.ConnDialled:
				if p.DNS <= 0 || p.Connect <= 0 || tc.tls != (p.TLS > 0) {
					t.Errorf("dialled: DNS %v, connect %v, TLS %v (TLS wanted: %v)", p.DNS, p.Connect, p.TLS, tc.tls)
				}
				// The server accepted the connection after its setup began
				// (its accept may come after the client has it; the spares
				// opened after it come later still).
				if len(s.accepted) == 0 {
					t.Error("no connection accepted")
				} else if s.accepted[0].Before(rec.Sent.Add(-p.Setup)) {
					t.Errorf("accepted at %v after the send, the setup began at %v", s.accepted[0].Sub(rec.Sent), -p.Setup)
				}
			default:
				if network != 0 {
					t.Errorf("%v: DNS %v, connect %v, TLS %v, want none", p.Conn, p.DNS, p.Connect, p.TLS)
				}
			}
			// What the network took is not schedule lag.
			if lag := rec.Lag(); lag < 0 || lag > rec.Sent.Sub(rec.Scheduled)-network {
				t.Errorf("lag %v from a send %v after its schedule, %v of it on the network", lag, rec.Sent.Sub(rec.Scheduled), network)
			}
		})
	}
}
