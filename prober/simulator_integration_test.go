package prober_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/simulator"
)

const ms = time.Millisecond

// newSimulator serves a simulator on 127.0.0.1 and returns its API base URL.
func newSimulator(t *testing.T, cfg simulator.Config) string {
	t.Helper()
	sim, err := simulator.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func newTarget(t *testing.T, url string, mod func(*scenarios.Target)) *prober.Target {
	t.Helper()
	st := &scenarios.Target{
		URL: url, Endpoint: prober.EndpointChat, Model: simulator.DefaultModel,
		Timeout: scenarios.Duration(10 * time.Second), StallTimeout: scenarios.Duration(5 * time.Second),
	}
	if mod != nil {
		mod(st)
	}
	tg, err := prober.NewTarget("sim", st)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// prompt returns a prompt of n words whose intended length is left unknown
// (0), so that a right InputTokens can only come from the server's usage.
func prompt(n, out int) dataset.Prompt {
	words := make([]string, n)
	for i := range words {
		words[i] = "word"
	}
	return dataset.Prompt{Text: strings.Join(words, " "), InputTokens: 0, OutputTokens: out}
}

func within(got, want time.Duration, rel float64, abs time.Duration) bool {
	slack := time.Duration(float64(want)*rel) + abs
	return got >= want-slack && got <= want+slack
}

func medianOrZero(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return median(ds)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestClientAgainstSimulator sends requests one after another to a simulator
// with constant latencies and checks that what the client measures is what
// the simulator was told to produce. Latencies are compared by their median
// over the requests, so one late wake-up of a loaded test machine does not
// decide the outcome; token counts must be exact on every request.
func TestClientAgainstSimulator(t *testing.T) {
	const (
		ttft     = 50 * ms
		itl      = 5 * ms
		tokens   = 32
		words    = 24
		requests = 20
		rel      = 0.10   // relative tolerance
		loopback = 3 * ms // absolute slack for loopback and timer wake-ups
	)
	no := false
	// Cases run at once, each a sequence of its own against its own simulator,
	// whatever -parallel allows: t.Run may be called from several goroutines.
	var wg sync.WaitGroup
	for _, tc := range []struct {
		name      string
		perChunk  int
		target    func(*scenarios.Target)
		chunks    int           // content chunks per response; 0 for a plain JSON reply
		firstWait time.Duration // when the first chunk is due
	}{
		{"chat stream", 1, nil, tokens, ttft},
		{"completions stream", 1, func(st *scenarios.Target) { st.Endpoint = prober.EndpointCompletions }, tokens, ttft},
		{"chat not streamed", 1, func(st *scenarios.Target) { st.Stream = &no }, 0, 0},
		{"completions not streamed", 1, func(st *scenarios.Target) {
			st.Endpoint, st.Stream = prober.EndpointCompletions, &no
		}, 0, 0},
		// Four tokens per chunk: a chunk leaves when its last token is due, so
		// the first arrives after TTFT + 3 ITL, and chunks come 4 ITL apart;
		// ITL must still be per token (5ms), not per chunk (20ms).
		{"chat stream, 4 tokens per chunk", 4, nil, tokens / 4, ttft + 3*itl},
	} {
		wg.Go(func() {
			t.Run(tc.name, func(t *testing.T) {
				url := newSimulator(t, simulator.Config{
					Profile:        simulator.Profile{TTFT: ttft, ITL: itl, Distribution: simulator.Constant},
					TokensPerChunk: tc.perChunk,
				})
				tg := newTarget(t, url, tc.target)
				client := prober.NewClient()
				var ttfts, itls, durations []time.Duration
				for i := range requests {
					req, err := prober.NewRequest(tg, prompt(words, tokens), map[string]any{"ignore_eos": true})
					if err != nil {
						t.Fatal(err)
					}
					req.Seq, req.Scheduled = uint64(i), time.Now()
					rec := client.Do(context.Background(), tg, req)
					if rec.Outcome != record.OutcomeOK {
						t.Fatalf("request %d: outcome %v reason %q: %s", i, rec.Outcome, rec.Reason, rec.Err)
					}
					if rec.Seq != uint64(i) || rec.Status != 200 {
						t.Errorf("request %d: seq %d status %d", i, rec.Seq, rec.Status)
					}
					if rec.OutputTokens != tokens || rec.TokenSource != record.TokensFromUsage || rec.PinnedOutputTokens != tokens {
						t.Errorf("request %d: output tokens %d from %v, pinned %d; want %d from usage, pinned",
							i, rec.OutputTokens, rec.TokenSource, rec.PinnedOutputTokens, tokens)
					}
					if rec.InputTokens != words {
						t.Errorf("request %d: input tokens %d, want the prompt's %d words", i, rec.InputTokens, words)
					}
					if len(rec.Chunks) != tc.chunks {
						t.Fatalf("request %d: %d content chunks, want %d", i, len(rec.Chunks), tc.chunks)
					}
					if tc.chunks > 0 {
						if rec.FirstOutput != 0 {
							t.Errorf("request %d: first output chunk %d, want 0", i, rec.FirstOutput)
						}
						d, _ := rec.TTFT()
						ttfts = append(ttfts, d)
						d, ok := rec.ITL()
						if !ok {
							t.Fatalf("request %d: no ITL from %d chunks", i, len(rec.Chunks))
						}
						itls = append(itls, d)
					}
					durations = append(durations, rec.Duration)
				}
				t.Logf("medians: TTFT %v, ITL %v, duration %v", medianOrZero(ttfts), medianOrZero(itls), median(durations))
				if tc.chunks > 0 {
					if got := median(ttfts); !within(got, tc.firstWait, rel, loopback) {
						t.Errorf("median TTFT %v, want %v ± %.0f%% + %v (all: %v)", got, tc.firstWait, rel*100, loopback, ttfts)
					}
					// ITL is a span of the stream divided by tokens: no loopback slack.
					if got := median(itls); !within(got, itl, rel, 0) {
						t.Errorf("median ITL %v, want %v ± %.0f%% (all: %v)", got, itl, rel*100, itls)
					}
				}
				wantDuration := ttft + (tokens-1)*itl
				if got := median(durations); !within(got, wantDuration, rel, 0) {
					t.Errorf("median duration %v, want TTFT + %d·ITL = %v ± %.0f%% (all: %v)", got, tokens-1, wantDuration, rel*100, durations)
				}
			})
		})
	}
	wg.Wait()
}

// TestClientSimulatorFaults: the simulator's injected faults are classified
// as the reasons an SRE would alert on.
func TestClientSimulatorFaults(t *testing.T) {
	// Cases run at once, each a sequence of its own against its own simulator,
	// whatever -parallel allows: t.Run may be called from several goroutines.
	var wg sync.WaitGroup
	for _, tc := range []struct {
		name    string
		profile simulator.Profile
		target  func(*scenarios.Target)
		reason  record.Reason
		status  int
		check   func(t *testing.T, rec *record.Record)
	}{
		{
			name:    "error rate 1",
			profile: simulator.Profile{TTFT: ms, ITL: ms, ErrorRate: 1},
			reason:  record.ReasonHTTP5xx, status: 500,
			check: func(t *testing.T, rec *record.Record) {
				if len(rec.Chunks) != 0 || !strings.Contains(rec.Err, "simulated server error") {
					t.Errorf("chunks %v, err %q", rec.Chunks, rec.Err)
				}
			},
		},
		{
			// Every stream goes silent once for far longer than stall_timeout:
			// the client cuts it, and keeps the chunks that came before.
			name:    "stall rate 1",
			profile: simulator.Profile{TTFT: ms, ITL: ms, StallRate: 1, StallDuration: time.Minute},
			target:  func(st *scenarios.Target) { st.StallTimeout = scenarios.Duration(150 * ms) },
			reason:  record.ReasonStall, status: 200,
			check: func(t *testing.T, rec *record.Record) {
				if n := len(rec.Chunks); n < 1 || n > 32 {
					t.Errorf("%d chunks before the stall, want 1..32", n)
				}
				if _, ok := rec.TTFT(); !ok {
					t.Errorf("a stalled stream with chunks has no TTFT")
				}
			},
		},
	} {
		wg.Go(func() {
			t.Run(tc.name, func(t *testing.T) {
				tg := newTarget(t, newSimulator(t, simulator.Config{Profile: tc.profile, Seed: 7}), tc.target)
				client := prober.NewClient()
				for i := range 3 {
					req, err := prober.NewRequest(tg, prompt(8, 32), map[string]any{"ignore_eos": true})
					if err != nil {
						t.Fatal(err)
					}
					rec := client.Do(context.Background(), tg, req)
					if rec.Outcome != record.OutcomeError || rec.Reason != tc.reason || rec.Status != tc.status {
						t.Fatalf("request %d: outcome %v reason %q status %d (%s); want error %q status %d",
							i, rec.Outcome, rec.Reason, rec.Status, rec.Err, tc.reason, tc.status)
					}
					tc.check(t, rec)
				}
			})
		})
	}
	wg.Wait()
}

// fakeRecorder checks the Recorder contract as Probe.Run uses it.
type fakeRecorder struct {
	t        *testing.T
	mu       sync.Mutex
	started  int
	records  []*record.Record
	returned bool // Run has returned; nothing may be observed after
}

func (r *fakeRecorder) Started() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.returned {
		r.t.Errorf("Started after Run returned")
	}
	r.started++
}

func (r *fakeRecorder) Observe(rec *record.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.returned {
		r.t.Errorf("Observe of seq %d after Run returned", rec.Seq)
	}
	r.records = append(r.records, rec)
	if len(r.records) > r.started {
		r.t.Errorf("Observe of seq %d without a Started: %d observed, %d started", rec.Seq, len(r.records), r.started)
	}
}

// TestProbeRun runs a constant-rate probe against the simulator for about a
// second, with requests long enough that several are in flight when it is
// stopped. Run must return only after every started request was observed,
// once each, with sequence numbers 0..n-1 on a schedule that advances.
func TestProbeRun(t *testing.T) {
	const yml = `
targets:
  sim: {url: URL, model: inferprobe-simulator}
probes:
  p:
    target: sim
    arrival: {pattern: constant, rate: 40}
    dataset: {synthetic: {input_tokens: {mean: 16}, output_tokens: {mean: 16}}}
    params: {ignore_eos: true}
`
	// Cases run at once, each a sequence of its own against its own simulator,
	// whatever -parallel allows: t.Run may be called from several goroutines.
	var wg sync.WaitGroup
	for _, tc := range []struct {
		name string
		// cutRequests cancels the request context together with the probe's,
		// as shutdown does; otherwise in-flight requests run to completion,
		// as when a reload stops a probe.
		cutRequests bool
	}{
		{"stop lets requests finish", false},
		{"shutdown cuts requests", true},
	} {
		wg.Go(func() {
			t.Run(tc.name, func(t *testing.T) {
				// 100ms + 15×10ms = 250ms a request at 40/s: about 10 in flight.
				url := newSimulator(t, simulator.Config{Profile: simulator.Profile{TTFT: 100 * ms, ITL: 10 * ms}})
				cfg, err := scenarios.Parse([]byte(strings.Replace(yml, "URL", url, 1)), "probe.yml")
				if err != nil {
					t.Fatal(err)
				}
				tg, err := prober.NewTarget("sim", cfg.Targets["sim"])
				if err != nil {
					t.Fatal(err)
				}
				probe, err := prober.NewProbe("p", cfg.Probes["p"], tg, cfg.Global.Seed, record.Shard{})
				if err != nil {
					t.Fatal(err)
				}

				rec := &fakeRecorder{t: t}
				ctx, stop := context.WithCancel(context.Background())
				reqCtx, cutRequests := context.WithCancel(context.Background())
				defer cutRequests()
				time.AfterFunc(time.Second, func() {
					stop()
					if tc.cutRequests {
						cutRequests()
					}
				})
				probe.Run(ctx, reqCtx, prober.NewClient(), rec)

				rec.mu.Lock()
				rec.returned = true
				started, records := rec.started, slices.Clone(rec.records)
				rec.mu.Unlock()

				if started < 10 {
					t.Fatalf("only %d requests started in a second at 40/s", started)
				}
				if len(records) != started {
					t.Fatalf("Run returned with %d of %d started requests observed", len(records), started)
				}
				slices.SortFunc(records, func(a, b *record.Record) int { return int(a.Seq) - int(b.Seq) })
				outcomes := map[record.Outcome]int{}
				for i, r := range records {
					if r.Seq != uint64(i) {
						t.Fatalf("sequence numbers %v, want 0..%d each once", seqs(records), started-1)
					}
					if i > 0 && !r.Scheduled.After(records[i-1].Scheduled) {
						t.Errorf("seq %d scheduled at %v, not after seq %d at %v", r.Seq, r.Scheduled, i-1, records[i-1].Scheduled)
					}
					if !r.Sent.IsZero() && r.Lag() < 0 { // cut before its send: no send time
						t.Errorf("seq %d sent %v before its schedule", r.Seq, -r.Lag())
					}
					outcomes[r.Outcome]++
					if r.Outcome == record.OutcomeError {
						t.Errorf("seq %d failed: %q %s", r.Seq, r.Reason, r.Err)
					}
					// What the artifacts need: the client's and the server's
					// prompt counts apart, the response headers' time, the body.
					if r.Outcome == record.OutcomeOK && (r.PromptTokens != 16 || r.UsagePromptTokens == 0 || r.Ack <= 0 ||
						r.Ack > r.Chunks[0] || !bytes.Contains(r.Body, []byte(`"ignore_eos":true`))) {
						t.Errorf("seq %d: prompt tokens %d (want 16), usage %d, ack %v (first chunk %v), body %q",
							r.Seq, r.PromptTokens, r.UsagePromptTokens, r.Ack, r.Chunks[0], r.Body)
					}
				}
				// Constant arrivals at 40/s: seq n is due (n+1)/40 s after the start.
				// (Offsets are computed in float seconds: allow rounding.)
				want := time.Duration(len(records)-1) * 25 * ms
				if gap := records[len(records)-1].Scheduled.Sub(records[0].Scheduled); !within(gap, want, 0, time.Microsecond) {
					t.Errorf("schedule spans %v over %d requests, want %v", gap, len(records), want)
				}
				if tc.cutRequests {
					if outcomes[record.OutcomeCancelled] == 0 {
						t.Errorf("no request was cancelled by the shutdown (outcomes %v)", outcomes)
					}
				} else if outcomes[record.OutcomeOK] != started {
					t.Errorf("outcomes %v, want all %d ok", outcomes, started)
				}
			})
		})
	}
	wg.Wait()
}

func seqs(rs []*record.Record) []uint64 {
	out := make([]uint64, len(rs))
	for i, r := range rs {
		out[i] = r.Seq
	}
	return out
}
