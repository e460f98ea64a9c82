package prober

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// sharedTrace finds shared/data/traces/name above the package directory, or
// skips the test.
func sharedTrace(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", "data", "traces", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if filepath.Dir(dir) == dir {
			t.Skipf("shared/data/traces/%s not found; skipping", name)
		}
		dir = filepath.Dir(dir)
	}
}

// datasetProbe builds probe "a" of a scenario whose target is url and whose
// probe has the given arrival and dataset.
func datasetProbe(t *testing.T, url, arrival, dataset string) *Probe {
	t.Helper()
	y := fmt.Sprintf("targets:\n  t: {url: %s, model: m, timeout: 10s}\nprobes:\n  a:\n    target: t\n", url)
	if arrival != "" {
		y += "    arrival: " + arrival + "\n"
	}
	y += "    dataset: " + dataset + "\n"
	cfg, err := scenarios.Parse([]byte(y), filepath.Join(t.TempDir(), "s.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget("t", cfg.Targets["t"])
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProbe("a", cfg.Probes["a"], tg, cfg.Global.Seed, record.Shard{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sseServer answers every chat request with a short stream, after delay.
func sseServer(t *testing.T, delay time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestReplayMooncake replays the start of the real Mooncake conversation
// trace at 10x through the real client to a local server, checks that each
// request is scheduled at exactly its timestamp / 10 from the start, and
// logs how far the actual sends were from that. INFERPROBE_REPLAY_FULL=1
// replays the whole trace (about six minutes) and also requires the sends to
// be within 2 ms (p99) of it: a timed assertion, so only in that benchmark
// mode (figures and method in BENCHMARKS.md, replay fidelity).
func TestReplayMooncake(t *testing.T) {
	path := sharedTrace(t, "mooncake_conversation_trace.jsonl")
	const speedup = 10
	var want []time.Duration
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct{ Timestamp float64 }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		want = append(want, time.Duration(e.Timestamp/speedup*float64(time.Millisecond)))
	}
	f.Close()
	limit := Limit{Duration: 6 * time.Second}
	full := os.Getenv("INFERPROBE_REPLAY_FULL") == "1"
	if full {
		limit = Limit{Requests: uint64(len(want))}
	}
	srv := sseServer(t, 0)
	p := datasetProbe(t, srv.URL+"/v1", "", fmt.Sprintf("{file: {path: %s, format: mooncake, speedup: %d}}", path, speedup))
	p.SetLimit(limit)
	rec := &recorder{}
	p.Run(context.Background(), context.Background(), NewClient(), rec)

	got := rec.bySeq()
	if len(got) < 100 {
		t.Fatalf("replayed %d requests; want at least 100", len(got))
	}
	start := got[0].Scheduled // the first timestamp is 0
	var errs []time.Duration
	for i, r := range got {
		if r.Outcome != record.OutcomeOK {
			t.Fatalf("request %d: %v %v", i, r.Outcome, r.Err)
		}
		if off := r.Scheduled.Sub(start); off != want[i] {
			t.Fatalf("request %d scheduled at %v, want timestamp/%d = %v", i, off, speedup, want[i])
		}
		errs = append(errs, r.Sent.Sub(r.Scheduled))
	}
	slices.Sort(errs)
	q := func(d []time.Duration, p float64) time.Duration { return d[int(p*float64(len(d)-1))] }
	t.Logf("%d requests over %v at %dx: send offset error p50 %v, p99 %v, max %v, min %v",
		len(errs), got[len(got)-1].Scheduled.Sub(start), speedup, q(errs, 0.5), q(errs, 0.99), errs[len(errs)-1], errs[0])
	if errs[0] < 0 {
		t.Errorf("a request was sent %v before its time", errs[0])
	}
	if full && q(errs, 0.99) > 2*time.Millisecond {
		t.Errorf("send offsets p99 %v; want within 2 ms of timestamp/speed-up", q(errs, 0.99))
	}
}

// sessionExec records each request with the time it was handed over and
// the conversation it carried, and ends it after hold.
type sessionExec struct {
	mu   sync.Mutex
	hold time.Duration
	reqs []sessionReq
}

type sessionReq struct {
	seq       uint64
	scheduled time.Time
	ended     time.Time
	session   string
	messages  []string
}

func (e *sessionExec) Do(ctx context.Context, _ *Target, req *Request) *record.Record {
	var body struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	json.Unmarshal(req.Body, &body)
	time.Sleep(time.Until(req.Scheduled) + e.hold)
	r := sessionReq{seq: req.Seq, scheduled: req.Scheduled, ended: time.Now(), session: req.Session}
	for _, m := range body.Messages {
		r.messages = append(r.messages, m.Content)
	}
	e.mu.Lock()
	e.reqs = append(e.reqs, r)
	e.mu.Unlock()
	return &record.Record{Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(), FirstOutput: -1}
}

func TestMultiTurnSessions(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "conv.jsonl")
	var lines []string
	for s := range 3 {
		lines = append(lines, fmt.Sprintf(`{"session_id": "s%d", "turns": [{"text": "q1 of %d"}, {"role": "assistant", "text": "a1"}, {"text": "q2", "delay": 40}, {"text": "q3", "delay": 20}]}`, s, s))
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arrival := range []string{"{pattern: constant, rate: 50}", "{pattern: concurrency, concurrency: 1}", "{pattern: constant, rate: 50, max_concurrency: 1}"} {
		t.Run(arrival, func(t *testing.T) {
			p := datasetProbe(t, "http://127.0.0.1:9/v1", arrival, fmt.Sprintf("{file: {path: %s, format: multi_turn}}", file))
			p.SetLimit(Limit{Requests: 4}) // sessions at 0, 3 and 6 start within it
			exec := &sessionExec{hold: 10 * time.Millisecond}
			rec := &recorder{}
			p.Run(context.Background(), context.Background(), exec, rec)
			if d := p.Digest(); d.Requests != 6 || rec.started != 6 || len(rec.records) != 6 {
				t.Fatalf("digest of %d requests, %d started, %d recorded; want the 2 sessions started within the limit, 3 turns each", d.Requests, rec.started, len(rec.records))
			}
			bySession := map[string][]sessionReq{}
			for _, r := range exec.reqs {
				bySession[r.session] = append(bySession[r.session], r)
			}
			for name, turns := range bySession {
				if len(turns) != 3 {
					t.Fatalf("session %s sent %d turns, want 3", name, len(turns))
				}
				want := [][]string{{"q1 of " + name[1:]}, {"q1 of " + name[1:], "a1", "q2"}, {"q1 of " + name[1:], "a1", "q2", "", "q3"}}
				for i, tu := range turns {
					if len(tu.messages) != len(want[i]) || tu.messages[0] != want[i][0] || tu.messages[len(tu.messages)-1] != want[i][len(want[i])-1] {
						t.Errorf("session %s turn %d carried %q, want %q", name, i+1, tu.messages, want[i])
					}
					if i > 0 {
						think := []time.Duration{40, 20}[i-1] * time.Millisecond
						if gap := tu.scheduled.Sub(turns[i-1].ended); gap < think {
							t.Errorf("session %s turn %d scheduled %v after the turn before ended; want its think time %v", name, i+1, gap, think)
						}
					}
				}
			}
		})
	}
}

func TestCancel(t *testing.T) {
	srv := sseServer(t, 2*time.Second)
	for _, tc := range []struct {
		rate      float64
		cancelled int
	}{
		{0, 0},
		{1, 8},
		{0.5, 3}, // seeded: the same three every run
	} {
		t.Run(strconv.FormatFloat(tc.rate, 'g', -1, 64), func(t *testing.T) {
			p := datasetProbe(t, srv.URL+"/v1", "{pattern: constant, rate: 100}",
				fmt.Sprintf("{synthetic: {input_tokens: {mean: 4}}, cancel: {rate: %g, after: 50ms}}", tc.rate))
			p.SetLimit(Limit{Requests: 8})
			rec := &recorder{}
			began := time.Now()
			p.Run(context.Background(), context.Background(), NewClient(), rec)
			took := time.Since(began)
			n := 0
			for _, r := range rec.records {
				switch {
				case r.Outcome == record.OutcomeCancelled:
					n++
				case r.Outcome != record.OutcomeOK:
					t.Errorf("request %d: %v %s %v", r.Seq, r.Outcome, r.Reason, r.Err)
				}
			}
			if n != tc.cancelled {
				t.Errorf("%d of %d requests cancelled, want %d", n, len(rec.records), tc.cancelled)
			}
			// The server answers after 2 s: only a run whose requests were all
			// cancelled (50 ms after their sends, 10 ms apart) ends sooner.
			if allCancelled := n == len(rec.records); allCancelled != (took < time.Second) {
				t.Errorf("run took %v with %d of %d requests cancelled after 50ms", took, n, len(rec.records))
			}
		})
	}
}

// TestCapRamp: max_concurrency_ramp_over opens the cap's slots one at a
// time, evenly over the ramp: with every request held by the server, the
// k-th request is sent no earlier than the k-th step, and the time the ramp
// held it is cap wait, not schedule lag. Without the ramp the cap of four
// holds none of four requests.
func TestCapRamp(t *testing.T) {
	srv := sseServer(t, 1500*time.Millisecond)
	const step = 150 * time.Millisecond
	for _, ramp := range []string{"", ", max_concurrency_ramp_over: 450ms"} {
		t.Run("ramp="+ramp, func(t *testing.T) {
			p := datasetProbe(t, srv.URL+"/v1", "{pattern: constant, rate: 1000, max_concurrency: 4"+ramp+"}", "{synthetic: {input_tokens: {mean: 4}}}")
			p.SetLimit(Limit{Requests: 4})
			rec := &recorder{}
			p.Run(context.Background(), context.Background(), NewClient(), rec)
			if len(rec.records) != 4 {
				t.Fatalf("%d records, want 4", len(rec.records))
			}
			records := slices.Clone(rec.records)
			slices.SortFunc(records, func(a, b *record.Record) int { return a.Sent.Compare(b.Sent) })
			for k, r := range records {
				if r.Outcome != record.OutcomeOK {
					t.Fatalf("request %d: %v %s %s", r.Seq, r.Outcome, r.Reason, r.Err)
				}
				gap, due := r.Sent.Sub(records[0].Scheduled), time.Duration(k)*step
				switch {
				case ramp == "" && r.CapWait > 0:
					t.Errorf("request %d held %v by a cap of 4 with 4 requests", r.Seq, r.CapWait)
				case ramp != "" && k > 0 && gap < due-10*time.Millisecond:
					t.Errorf("request %d of the ramp sent %v after the first, before its step at %v", k+1, gap, due)
				case ramp != "" && k > 0 && r.CapWait < due-step/2:
					t.Errorf("request %d of the ramp: cap wait %v, lag %v; the ramp held it about %v", k+1, r.CapWait, r.Lag(), due)
				}
			}
		})
	}
}
