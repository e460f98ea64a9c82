package finite

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/scenarios"
)

// fakeExec answers each request after delay, or when ctx ends (cancelled).
type fakeExec struct {
	delay time.Duration
	mu    sync.Mutex
	seqs  []uint64
}

func (f *fakeExec) Do(ctx context.Context, _ *prober.Target, req *prober.Request) *record.Record {
	f.mu.Lock()
	f.seqs = append(f.seqs, req.Seq)
	f.mu.Unlock()
	rec := &record.Record{Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(), Status: 200,
		Chunks: []time.Duration{time.Millisecond, 2 * time.Millisecond}, OutputTokens: 2, InputTokens: req.InputTokens}
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
		rec.Outcome = record.OutcomeCancelled
	}
	rec.Duration = time.Since(rec.Sent)
	return rec
}

func (f *fakeExec) sent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seqs)
}

// counter is a sink that counts what it is fed.
type counter struct{ started, observed atomic.Int64 }

func (c *counter) Started()               { c.started.Add(1) }
func (c *counter) Observe(*record.Record) { c.observed.Add(1) }

func spec(t *testing.T, probe *scenarios.Probe) Spec {
	t.Helper()
	target, err := prober.NewTarget("t", &scenarios.Target{URL: "http://127.0.0.1:1/v1", Model: "m", Endpoint: "chat", Timeout: scenarios.Duration(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if probe == nil {
		probe = &scenarios.Probe{Target: "t",
			Arrival: scenarios.Arrival{Pattern: scenarios.ArrivalConcurrency, Concurrency: 2},
			Dataset: scenarios.Dataset{Synthetic: &scenarios.Synthetic{InputTokens: scenarios.Lengths{Mean: 8}, OutputTokens: scenarios.Lengths{Mean: 2}}}}
	}
	return Spec{Name: "run", WarmupName: "run/warmup", Probe: probe, Target: target, Seed: 1, Shard: record.Shard{Count: 1}, Grace: NoGrace}
}

// TestDefaultLimit: a run given no limit sends one pass through a replayed
// file, else AIPerf's 10 requests.
func TestDefaultLimit(t *testing.T) {
	p, err := NewPlan(spec(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if p.Limit.Requests != defaultRequests {
		t.Errorf("synthetic: limit %+v, want %d requests", p.Limit, defaultRequests)
	}

	file := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := os.WriteFile(file, []byte("{\"text\":\"a\",\"timestamp\":0}\n{\"text\":\"b\",\"timestamp\":1}\n{\"text\":\"c\",\"timestamp\":2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := spec(t, nil)
	s.Probe.Dataset = scenarios.Dataset{File: &scenarios.File{Path: file, Format: dataset.FormatSingleTurn, Timing: scenarios.TimingArrival, BlockSize: 1, Speedup: 1}}
	if p, err = NewPlan(s); err != nil {
		t.Fatal(err)
	}
	if p.Limit.Requests != defaultRequests {
		t.Errorf("file sent at a rate: limit %+v, want AIPerf's %d requests, cycling its 3 entries", p.Limit, defaultRequests)
	}
	s.Probe.Dataset.File.Timing = scenarios.TimingReplay
	if p, err = NewPlan(s); err != nil {
		t.Fatal(err)
	}
	if p.Limit.Requests != 3 {
		t.Errorf("file replayed: limit %+v, want its 3 requests", p.Limit)
	}
}

// TestWarmupNamedApart: a warmup under the measured name would send the
// measured sequence; it is refused.
func TestWarmupNamedApart(t *testing.T) {
	s := spec(t, nil)
	s.Warmup, s.WarmupName = prober.Limit{Requests: 2}, s.Name
	if _, err := NewPlan(s); err == nil {
		t.Fatal("a warmup with the measured sequence's name was planned")
	}
}

// TestRun: warmup first, left out of the report and the sink; the measured
// requests fed to both; the same spec sends the same sequence.
func TestRun(t *testing.T) {
	var digests []string
	for range 2 {
		s := spec(t, nil)
		s.Limit, s.Warmup = prober.Limit{Requests: 6}, prober.Limit{Requests: 3}
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		exec, sink := &fakeExec{delay: time.Millisecond}, &counter{}
		r := New(p, exec, WithRecorder(sink))
		if got := r.Progress().Phase; got != PhaseWarmup {
			t.Errorf("before the run the phase is %s, want warmup", got)
		}
		res := r.Execute(context.Background(), context.Background())
		if !res.Measured || res.Stopped || res.Summary.OK != 6 {
			t.Errorf("result %+v, want 6 measured requests", res)
		}
		if exec.sent() != 9 || sink.started.Load() != 6 || sink.observed.Load() != 6 {
			t.Errorf("sent %d, sink saw %d started and %d ended; want 9 sent and the 6 measured in the sink",
				exec.sent(), sink.started.Load(), sink.observed.Load())
		}
		if got := r.Progress(); got.Phase != PhaseProfiling || got.Started.IsZero() {
			t.Errorf("after the run progress is %+v, want profiling with its start", got)
		}
		digests = append(digests, res.Digest.String())
	}
	if digests[0] != digests[1] {
		t.Errorf("the same spec sent different sequences: %v", digests)
	}
}

// TestStoppedInWarmup: a run stopped during its warmup measured nothing.
func TestStoppedInWarmup(t *testing.T) {
	s := spec(t, nil)
	s.Limit, s.Warmup = prober.Limit{Requests: 2}, prober.Limit{Requests: 1000}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	exec := &fakeExec{delay: 5 * time.Millisecond}
	r := New(p, exec)
	go func() {
		for exec.sent() == 0 {
			time.Sleep(time.Millisecond)
		}
		stop()
	}()
	res := r.Execute(ctx, context.Background())
	if res.Measured || !res.Stopped || res.Summary.OK+res.Summary.Failed != 0 {
		t.Errorf("result %+v, want stopped with nothing measured", res)
	}
}

// TestGrace: in a run with a duration, requests still in flight a grace
// period after the last send are cut, counted in the result and as
// cancelled; a run that ends by count only waits for them.
func TestGrace(t *testing.T) {
	// Open loop: a closed loop sends its last request only once a slot is free.
	s := spec(t, nil)
	s.Probe.Arrival = scenarios.Arrival{Pattern: scenarios.ArrivalConstant, Rate: 1000}
	s.Limit, s.Grace = prober.Limit{Requests: 2, Duration: time.Hour}, 20*time.Millisecond
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := New(p, &fakeExec{delay: time.Hour}).Execute(context.Background(), context.Background())
	if !res.GraceExpired || res.Cut != 2 || res.Summary.Cancelled != 2 || res.Stopped {
		t.Errorf("result %+v, want the 2 requests cut at the end of the grace period", res)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run took %v: the grace period did not end it", took)
	}

	for _, tc := range []struct {
		name  string
		limit prober.Limit
		grace time.Duration
	}{
		{"without a grace period", prober.Limit{Requests: 2, Duration: time.Hour}, NoGrace},
		{"ending by count", prober.Limit{Requests: 2}, 20 * time.Millisecond},
	} {
		s.Limit, s.Grace = tc.limit, tc.grace
		if p, err = NewPlan(s); err != nil {
			t.Fatal(err)
		}
		if p.Grace != NoGrace {
			t.Errorf("%s: grace %v, want NoGrace", tc.name, p.Grace)
		}
		res = New(p, &fakeExec{delay: 60 * time.Millisecond}).Execute(context.Background(), context.Background())
		if res.GraceExpired || res.Cut != 0 || res.Summary.OK != 2 {
			t.Errorf("%s: %+v, want both requests to finish", tc.name, res)
		}
	}
}

// cancelExec records which requests were planned to be cancelled, and
// answers each at once.
type cancelExec struct {
	mu        sync.Mutex
	cancelled []uint64
}

func (c *cancelExec) Do(_ context.Context, _ *prober.Target, req *prober.Request) *record.Record {
	outcome := record.OutcomeOK
	if req.Cancel {
		c.mu.Lock()
		c.cancelled = append(c.cancelled, req.Seq)
		c.mu.Unlock()
		outcome = record.OutcomeCancelled
	}
	return &record.Record{Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(), Outcome: outcome, FirstOutput: -1}
}

// TestCancellationSeeded: the same seed cancels the same requests, counted
// cancelled and not failed, and cancelling changes nothing in the sequence
// sent: its digest is that of the run without cancellation.
func TestCancellationSeeded(t *testing.T) {
	run := func(cancel *scenarios.Cancel) (digest string, cancelled []uint64, failed, counted int) {
		s := spec(t, nil)
		s.Probe.Dataset.Cancel = cancel
		s.Limit = prober.Limit{Requests: 40}
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		exec := &cancelExec{}
		res := New(p, exec).Execute(context.Background(), context.Background())
		slices.Sort(exec.cancelled)
		return res.Digest.String(), exec.cancelled, res.Summary.Failed, res.Summary.Cancelled
	}
	plain, none, _, _ := run(nil)
	cancel := &scenarios.Cancel{Rate: 0.25, After: scenarios.Duration(time.Second)}
	d1, c1, failed, counted := run(cancel)
	d2, c2, _, _ := run(cancel)
	if len(none) != 0 || len(c1) == 0 || len(c1) == 40 {
		t.Fatalf("cancelled %v without cancellation and %v at 25%%", none, c1)
	}
	if !slices.Equal(c1, c2) {
		t.Errorf("the same seed cancelled %v, then %v", c1, c2)
	}
	if d1 != d2 || d1 != plain {
		t.Errorf("digests %s, %s with cancellation, %s without; want one", d1, d2, plain)
	}
	if failed != 0 || counted != len(c1) {
		t.Errorf("report: %d failed, %d cancelled; want 0 and %d", failed, counted, len(c1))
	}
}

// TestWarmupNotCancelled: request cancellation applies to the measured
// requests, not to the warmup, as in AIPerf.
func TestWarmupNotCancelled(t *testing.T) {
	s := spec(t, nil)
	s.Probe.Dataset.Cancel = &scenarios.Cancel{Rate: 1}
	s.Limit, s.Warmup = prober.Limit{Requests: 5}, prober.Limit{Requests: 3}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	exec := &cancelExec{}
	res := New(p, exec).Execute(context.Background(), context.Background())
	if len(exec.cancelled) != 5 || res.Summary.Cancelled != 5 {
		t.Errorf("%d requests sent to be cancelled, %d cancelled measured; want the 5 measured only", len(exec.cancelled), res.Summary.Cancelled)
	}
}

// TestBothLimits: a run limited by count and by time ends at whichever
// comes first.
func TestBothLimits(t *testing.T) {
	for _, tc := range []struct {
		limit prober.Limit
		want  int
	}{
		{prober.Limit{Requests: 5, Duration: time.Hour}, 5},
		// 20 requests a second, constant: due at 50, 100, …, 450 ms, the
		// first one gap after the start; the one due at 500 ms is not sent.
		{prober.Limit{Requests: 1000, Duration: 500 * time.Millisecond}, 9},
	} {
		s := spec(t, &scenarios.Probe{Target: "t", Arrival: scenarios.Arrival{Pattern: scenarios.ArrivalConstant, Rate: 20},
			Dataset: scenarios.Dataset{Synthetic: &scenarios.Synthetic{InputTokens: scenarios.Lengths{Mean: 8}, OutputTokens: scenarios.Lengths{Mean: 2}}}})
		s.Limit = tc.limit
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		exec := &fakeExec{}
		New(p, exec).Execute(context.Background(), context.Background())
		if n := exec.sent(); n != tc.want {
			t.Errorf("limit %+v: sent %d, want %d", tc.limit, n, tc.want)
		}
	}
}

// pausedExec is fakeExec whose records all overlapped a pause of the client.
type pausedExec struct{ fakeExec }

func (p *pausedExec) Do(ctx context.Context, t *prober.Target, req *prober.Request) *record.Record {
	rec := p.fakeExec.Do(ctx, t, req)
	rec.ClientPaused = time.Second
	return rec
}

// TestClientPausedIsClientBound: a run whose requests overlapped a pause
// of the client is client-bound, and says why; they are left out of its
// statistics.
func TestClientPausedIsClientBound(t *testing.T) {
	s := spec(t, nil)
	s.Limit = prober.Limit{Requests: 4}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	res := New(p, &pausedExec{}).Execute(context.Background(), context.Background())
	if !strings.Contains(res.ClientBound, "did not run") || res.Summary.ClientPaused != 4 || res.Summary.OK != 0 {
		t.Errorf("client bound %q, %d client-paused, %d ok; want the verdict and the 4 requests apart", res.ClientBound, res.Summary.ClientPaused, res.Summary.OK)
	}
}

// TestVerdictAllLost: a run whose every request the client lost measured
// nothing, and does not end OK.
func TestVerdictAllLost(t *testing.T) {
	if o, why := Verdict(report.Summary{Lost: 3}, nil); o != OutcomeAllFailed || !strings.Contains(why, "lost") {
		t.Errorf("every request lost: verdict %v %q, want all failed, saying they were lost", o, why)
	}
}

// hangFirstExec leaves its first n requests unanswered until their context
// ends (cancelled) and answers the rest at once.
type hangFirstExec struct {
	n    int64
	sent atomic.Int64
}

func (h *hangFirstExec) Do(ctx context.Context, _ *prober.Target, req *prober.Request) *record.Record {
	rec := &record.Record{Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(), Status: 200,
		Chunks: []time.Duration{time.Millisecond}, OutputTokens: 1, InputTokens: req.InputTokens}
	if h.sent.Add(1) <= h.n {
		<-ctx.Done()
		rec.Outcome = record.OutcomeCancelled
	}
	rec.Duration = time.Since(rec.Sent)
	return rec
}

// TestWarmupArrivalAndGrace: the warmup is sent at its own arrival (here an
// open loop, while the measured requests are a closed loop of one), and its
// requests still in flight a warmup grace period after its last send are
// cut, so profiling starts; without a grace period the warmup waits for them.
func TestWarmupArrivalAndGrace(t *testing.T) {
	s := spec(t, nil)
	s.Probe.Arrival = scenarios.Arrival{Pattern: scenarios.ArrivalConcurrency, Concurrency: 1}
	s.Limit, s.Warmup = prober.Limit{Requests: 3}, prober.Limit{Requests: 2, Duration: time.Hour}
	s.WarmupArrival = &scenarios.Arrival{Pattern: scenarios.ArrivalConstant, Rate: 1000}
	grace := 20 * time.Millisecond
	s.WarmupGrace = &grace
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	exec := &hangFirstExec{n: 2}
	done := make(chan Result)
	go func() { done <- New(p, exec).Execute(context.Background(), context.Background()) }()
	select {
	case res := <-done:
		if res.Summary.OK != 3 || res.Summary.Cancelled != 0 || exec.sent.Load() != 5 {
			t.Errorf("ok %d, cancelled %d, sent %d; want the 2 warmup requests sent together and cut, then 3 measured",
				res.Summary.OK, res.Summary.Cancelled, exec.sent.Load())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the warmup grace period did not cut the warmup's requests")
	}

	s.WarmupGrace = nil
	if p, err = NewPlan(s); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	go func() { done <- New(p, &hangFirstExec{n: 2}).Execute(ctx, ctx) }()
	select {
	case <-done:
		t.Error("without a warmup grace period the run went on before the warmup's requests ended")
	case <-time.After(100 * time.Millisecond):
	}
	stop()
	<-done
}
