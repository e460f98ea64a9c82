package prober

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// patience bounds every wait for the scheduler; it is a guard against hangs,
// not an expectation of speed.
const patience = 10 * time.Second

// probeYAML is a scenario with probes "a" (the arrival under test) and,
// when other is set, "b" with that arrival. Lengths vary, so that the lengths
// stream is really drawn from.
func probeYAML(seed uint64, arrival, other string) string {
	y := fmt.Sprintf(`global: {seed: %d}
targets:
  t: {url: http://127.0.0.1:9/v1, model: m}
probes:
  a: {target: t, arrival: %s, dataset: {synthetic: {input_tokens: {mean: 8, stddev: 3}, output_tokens: {mean: 4, stddev: 2}}}}
`, seed, arrival)
	if other != "" {
		y += "  b: {target: t, arrival: " + other + "}\n"
	}
	return y
}

func newProbe(t testing.TB, yml string, shard record.Shard) *Probe {
	t.Helper()
	cfg, err := scenarios.Parse([]byte(yml), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget("t", cfg.Targets["t"])
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProbe("a", cfg.Probes["a"], tg, cfg.Global.Seed, shard)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// plans draws the shard's requests with sequence numbers below n.
func plans(p *Probe, n uint64) []planned {
	var out []planned
	for pl := p.plan(); pl.seq < n; pl = p.plan() {
		out = append(out, pl)
	}
	return out
}

// planDigest folds the shard's requests below n as Run does when it sends them.
func planDigest(p *Probe, n uint64) record.Digest {
	for _, pl := range plans(p, n) {
		p.sent.Add(newDigestEntry(pl.seq, pl.offset, pl.prompt))
	}
	return p.Digest()
}

// recorder counts the Recorder calls and keeps the records.
type recorder struct {
	mu      sync.Mutex
	started int
	records []*record.Record
}

func (r *recorder) Started() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started++
}

func (r *recorder) Observe(rec *record.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
}

func (r *recorder) bySeq() []*record.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.records)
	slices.SortFunc(out, func(a, b *record.Record) int { return int(a.Seq) - int(b.Seq) })
	return out
}

// holdExec holds each request until the test releases one (or all), and
// tracks how many are inside Do.
type holdExec struct {
	mu             sync.Mutex
	inFlight, peak int
	started        chan *Request
	release        chan struct{}
	releaseAll     chan struct{}
}

func newHoldExec() *holdExec {
	return &holdExec{started: make(chan *Request, 1024), release: make(chan struct{}), releaseAll: make(chan struct{})}
}

func (h *holdExec) Do(ctx context.Context, _ *Target, req *Request) *record.Record {
	h.mu.Lock()
	h.inFlight++
	h.peak = max(h.peak, h.inFlight)
	h.mu.Unlock()
	// Requests are handed over dispatchLead early; like Client.Do, send at
	// the scheduled instant.
	if d := time.Until(req.Scheduled); d > 0 {
		time.Sleep(d)
	}
	rec := &record.Record{Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(), FirstOutput: -1}
	h.started <- req
	select {
	case <-h.release:
	case <-h.releaseAll:
	case <-ctx.Done():
		rec.Outcome = record.OutcomeCancelled
	}
	h.mu.Lock()
	h.inFlight--
	h.mu.Unlock()
	return rec
}

func (h *holdExec) counts() (inFlight, peak int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight, h.peak
}

// next returns the next request to start, failing after patience.
func (h *holdExec) next(t *testing.T) *Request {
	t.Helper()
	select {
	case req := <-h.started:
		return req
	case <-time.After(patience):
		t.Fatal("no request started")
		return nil
	}
}

// quiet fails if a request starts; it cannot prove that none ever will, so
// the peak checks are what show the limit holds.
func (h *holdExec) quiet(t *testing.T) {
	t.Helper()
	select {
	case req := <-h.started:
		t.Fatalf("seq %d started beyond the limit", req.Seq)
	default:
	}
}

// collectExec answers at once, keeps every request, and stops the probe once
// it has n.
type collectExec struct {
	mu   sync.Mutex
	reqs []*Request
	n    int
	stop context.CancelFunc
}

func (c *collectExec) Do(_ context.Context, _ *Target, req *Request) *record.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, req)
	if len(c.reqs) == c.n {
		c.stop()
	}
	return &record.Record{Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(), FirstOutput: -1}
}

// runUntil runs p until exec has n requests and returns them by sequence
// number: every request Run sent, since Run waits for them.
func runUntil(t *testing.T, p *Probe, n int) ([]*Request, *recorder) {
	t.Helper()
	ctx, stop := context.WithTimeout(context.Background(), patience)
	defer stop()
	exec := &collectExec{n: n, stop: stop}
	rec := &recorder{}
	p.Run(ctx, context.Background(), exec, rec)
	if len(exec.reqs) < n {
		t.Fatalf("%d requests sent before the deadline, want %d", len(exec.reqs), n)
	}
	if rec.started != len(exec.reqs) || len(rec.records) != len(exec.reqs) {
		t.Fatalf("%d sent, %d started, %d observed", len(exec.reqs), rec.started, len(rec.records))
	}
	reqs := slices.Clone(exec.reqs)
	slices.SortFunc(reqs, func(a, b *Request) int { return int(a.Seq) - int(b.Seq) })
	return reqs, rec
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want record.Shard
		err  string
	}{
		{in: "0/1", want: record.Shard{Index: 0, Count: 1}},
		{in: "2/3", want: record.Shard{Index: 2, Count: 3}},
		{in: "3", err: `shard "3": want i/n, e.g. 0/3 for the first of three replicas`},
		{in: "a/3", err: `shard "a/3": index "a" is not a whole number; want i/n, e.g. 0/3`},
		{in: "1/", err: `shard "1/": count "" is not a whole number; want i/n, e.g. 0/3`},
		{in: "3/3", err: "shard 3/3: the index must be 0 to 2 (replicas are numbered from 0)"},
		{in: "-1/3", err: "shard -1/3: the index must be 0 to 2 (replicas are numbered from 0)"},
		{in: "0/0", err: "shard 0/0: the count must be >= 1 (the number of replicas)"},
	} {
		got, err := record.ParseShard(tc.in)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("ParseShard(%q) error = %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestShardShares(t *testing.T) {
	for n := 1; n <= 5; n++ {
		for c := 0; c <= 11; c++ {
			sum := 0
			for i := range n {
				share := record.Shard{Index: i, Count: n}.Share(c)
				if share < c/n || share > c/n+1 {
					t.Errorf("shard %d/%d gets %d of %d", i, n, share, c)
				}
				sum += share
			}
			if sum != c {
				t.Errorf("%d shards' shares of %d sum to %d", n, c, sum)
			}
		}
	}
}

// TestShardsUnion draws the sequence of every shard of n and checks that
// together they are the unsharded sequence, each request in exactly one.
func TestShardsUnion(t *testing.T) {
	const total = 600
	for _, arrival := range []string{"{rate: 50}", "{pattern: gamma, rate: 50, smoothness: 0.5}", "{pattern: concurrency, concurrency: 9}"} {
		whole := plans(newProbe(t, probeYAML(9, arrival, ""), record.Shard{}), total)
		for _, n := range []int{1, 2, 3, 7} {
			got := map[uint64]planned{}
			for i := range n {
				for _, pl := range plans(newProbe(t, probeYAML(9, arrival, ""), record.Shard{Index: i, Count: n}), total) {
					if int(pl.seq%uint64(n)) != i {
						t.Fatalf("%s: shard %d/%d drew seq %d", arrival, i, n, pl.seq)
					}
					if _, dup := got[pl.seq]; dup {
						t.Fatalf("%s: seq %d in two shards of %d", arrival, pl.seq, n)
					}
					got[pl.seq] = pl
				}
			}
			if len(got) != len(whole) {
				t.Fatalf("%s: %d shards hold %d requests, want %d", arrival, n, len(got), len(whole))
			}
			for _, w := range whole {
				g := got[w.seq]
				if g.offset != w.offset || !reflect.DeepEqual(g.prompt, w.prompt) || !bytes.Equal(g.req.Body, w.req.Body) {
					t.Fatalf("%s: seq %d differs in %d shards: offset %v, prompt %+v; unsharded %v, %+v",
						arrival, w.seq, n, g.offset, g.prompt, w.offset, w.prompt)
				}
			}
		}
	}
}

// TestShardRun checks what Run sends: only the shard's sequence numbers, with
// the unsharded bodies, at the unsharded send times.
func TestShardRun(t *testing.T) {
	const arrival = "{rate: 20000}"
	whole := plans(newProbe(t, probeYAML(5, arrival, ""), record.Shard{}), 2000)
	for i := range 3 {
		reqs, _ := runUntil(t, newProbe(t, probeYAML(5, arrival, ""), record.Shard{Index: i, Count: 3}), 100)
		first := reqs[0]
		for k, req := range reqs {
			if want := uint64(i + 3*k); req.Seq != want {
				t.Fatalf("shard %d/3: request %d has seq %d, want %d", i, k, req.Seq, want)
			}
			w := whole[req.Seq]
			if !bytes.Equal(req.Body, w.req.Body) {
				t.Errorf("shard %d/3: seq %d body differs from the unsharded one", i, req.Seq)
			}
			if got, want := req.Scheduled.Sub(first.Scheduled), w.offset-whole[first.Seq].offset; got != want {
				t.Errorf("shard %d/3: seq %d scheduled %v after seq %d, want %v", i, req.Seq, got, first.Seq, want)
			}
		}
	}
}

func TestDigest(t *testing.T) {
	digest := func(seed uint64, arrival string, shard record.Shard) record.Digest {
		return planDigest(newProbe(t, probeYAML(seed, arrival, ""), shard), 500)
	}
	base := digest(1, "{rate: 5}", record.Shard{})
	if base.Requests != 500 {
		t.Fatalf("digest over %d requests, want 500", base.Requests)
	}
	if again := digest(1, "{rate: 5}", record.Shard{}); again != base {
		t.Errorf("equal seeds: digests %v and %v", base, again)
	}
	for _, tc := range []struct {
		name    string
		seed    uint64
		arrival string
		shard   record.Shard
	}{
		{"other seed", 2, "{rate: 5}", record.Shard{}},
		{"other rate", 1, "{rate: 6}", record.Shard{}},
		{"other pattern", 1, "{pattern: gamma, rate: 5, smoothness: 1}", record.Shard{}},
		{"a shard", 1, "{rate: 5}", record.Shard{Index: 0, Count: 2}},
	} {
		if d := digest(tc.seed, tc.arrival, tc.shard); d == base {
			t.Errorf("%s: same digest %v", tc.name, d)
		}
	}
}

// TestRunDigest checks that Run folds exactly the requests it sends: a series
// sends 100 requests in its first millisecond and the next after 11 days, so
// the count is exact.
func TestRunDigest(t *testing.T) {
	const arrival = "{pattern: constant, series: [{rate: 100000, duration: 1ms}, {rate: 0.000001}]}"
	for _, shard := range []record.Shard{{}, {Index: 1, Count: 3}} {
		p := newProbe(t, probeYAML(3, arrival, ""), shard)
		want := planDigest(newProbe(t, probeYAML(3, arrival, ""), shard), 100)
		exec := newHoldExec()
		close(exec.releaseAll)
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			p.Run(ctx, context.Background(), exec, &recorder{})
		}()
		for range want.Requests {
			exec.next(t)
		}
		stop()
		<-done
		if got := p.Digest(); got != want {
			t.Errorf("shard %v: Run's digest %v over %d requests, want %v over %d", shard, got, got.Requests, want, want.Requests)
		}
	}
}

// TestComponentsIndependent checks that each random choice has its own
// stream: changing how one is drawn, or adding a probe, moves no other.
func TestComponentsIndependent(t *testing.T) {
	const n = 300
	prompts := func(yml string) []string {
		var out []string
		for _, pl := range plans(newProbe(t, yml, record.Shard{}), n) {
			out = append(out, fmt.Sprintf("%d %d %s", pl.prompt.InputTokens, pl.prompt.OutputTokens, pl.prompt.Text))
		}
		return out
	}
	offsets := func(yml string) []time.Duration {
		var out []time.Duration
		for _, pl := range plans(newProbe(t, yml, record.Shard{}), n) {
			out = append(out, pl.offset)
		}
		return out
	}
	base := prompts(probeYAML(4, "{rate: 5}", ""))
	for _, arrival := range []string{
		"{pattern: constant, rate: 5}",
		"{pattern: gamma, rate: 9, smoothness: 0.3}",
		"{rate: 1, ramp_to: 9, ramp_over: 1m}",
		"{pattern: concurrency, concurrency: 3}",
	} {
		if !slices.Equal(prompts(probeYAML(4, arrival, "")), base) {
			t.Errorf("arrival %s changed the prompts", arrival)
		}
	}
	if !slices.Equal(prompts(probeYAML(4, "{rate: 5}", "{rate: 1}")), base) {
		t.Error("adding probe b changed probe a's prompts")
	}
	if !slices.Equal(offsets(probeYAML(4, "{rate: 5}", "{rate: 1}")), offsets(probeYAML(4, "{rate: 5}", ""))) {
		t.Error("adding probe b changed probe a's send times")
	}
	fixed := strings.Replace(probeYAML(4, "{rate: 5}", ""), "stddev: 3", "stddev: 0", 1)
	if !slices.Equal(offsets(fixed), offsets(probeYAML(4, "{rate: 5}", ""))) {
		t.Error("drawing lengths differently changed the send times")
	}
}

// TestClosedLoop checks that pattern concurrency keeps exactly N requests in
// flight, never more, replacing each as it finishes.
func TestClosedLoop(t *testing.T) {
	const n = 4
	p := newProbe(t, probeYAML(1, fmt.Sprintf("{pattern: concurrency, concurrency: %d}", n), ""), record.Shard{})
	exec, rec := newHoldExec(), &recorder{}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx, context.Background(), exec, rec)
	}()
	for range n {
		exec.next(t)
	}
	for i := range 30 {
		if in, _ := exec.counts(); in != n {
			t.Fatalf("%d in flight, want %d", in, n)
		}
		exec.quiet(t)
		exec.release <- struct{}{}
		if req := exec.next(t); req.Seq != uint64(n+i) {
			t.Fatalf("replacement has seq %d, want %d", req.Seq, n+i)
		}
	}
	stop()
	close(exec.releaseAll)
	<-done
	if _, peak := exec.counts(); peak != n {
		t.Errorf("peak in flight %d, want %d", peak, n)
	}
	if rec.started != n+30 || len(rec.records) != n+30 {
		t.Errorf("%d started, %d observed, want %d", rec.started, len(rec.records), n+30)
	}
	for _, r := range rec.bySeq() {
		if r.Lag() < 0 || r.CapWait != 0 {
			t.Errorf("seq %d: lag %v, cap wait %v", r.Seq, r.Lag(), r.CapWait)
		}
	}
}

// TestClosedLoopRamp ramps from 0 to 3 in flight over 30ms: one request per
// 10ms step, each scheduled at its step however late the client is.
func TestClosedLoopRamp(t *testing.T) {
	p := newProbe(t, probeYAML(1, "{pattern: concurrency, concurrency: 0, ramp_to: 3, ramp_over: 30ms}", ""), record.Shard{})
	exec := newHoldExec()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx, context.Background(), exec, &recorder{})
	}()
	var reqs []*Request
	for range 3 {
		reqs = append(reqs, exec.next(t))
	}
	// Each request runs on its own goroutine, so a late client's catch-up
	// sends may reach the executor out of order.
	slices.SortFunc(reqs, func(a, b *Request) int { return cmp.Compare(a.Seq, b.Seq) })
	for i := 1; i < 3; i++ {
		if d := reqs[i].Scheduled.Sub(reqs[i-1].Scheduled); d != 10*time.Millisecond {
			t.Errorf("step %d scheduled %v after step %d, want 10ms", i+1, d, i)
		}
	}
	exec.release <- struct{}{}
	exec.next(t) // held at 3 after the ramp
	stop()
	close(exec.releaseAll)
	<-done
	if _, peak := exec.counts(); peak != 3 {
		t.Errorf("peak in flight %d, want 3", peak)
	}
}

func TestConcurrencyRampSteps(t *testing.T) {
	for _, tc := range []struct {
		from, to int
		over     time.Duration
		levels   []int
		at       []time.Duration
	}{
		{4, 4, 0, []int{4}, nil},
		{0, 3, 30 * time.Second, []int{0, 1, 2, 3}, []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second}},
		{8, 6, time.Minute, []int{8, 7, 6}, []time.Duration{30 * time.Second, time.Minute}},
	} {
		c := &concurrencyRamp{from: tc.from, to: tc.to, over: tc.over}
		if c.steps() != len(tc.levels)-1 {
			t.Errorf("%d→%d: %d steps, want %d", tc.from, tc.to, c.steps(), len(tc.levels)-1)
			continue
		}
		for j, want := range tc.levels {
			if got := c.level(j); got != want {
				t.Errorf("%d→%d: level after %d steps = %d, want %d", tc.from, tc.to, j, got, want)
			}
			if j > 0 && c.at(j) != tc.at[j-1] {
				t.Errorf("%d→%d: step %d at %v, want %v", tc.from, tc.to, j, c.at(j), tc.at[j-1])
			}
		}
	}
}

// TestMaxConcurrency sends constant arrivals 10µs apart into a cap of 3 and
// a server that holds every request: no more than 3 are ever in flight, and
// the requests held back record the hold as cap wait, not as lag.
func TestMaxConcurrency(t *testing.T) {
	const limit = 3
	p := newProbe(t, probeYAML(1, fmt.Sprintf("{pattern: constant, rate: 100000, max_concurrency: %d}", limit), ""), record.Shard{})
	exec, rec := newHoldExec(), &recorder{}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx, context.Background(), exec, rec)
	}()
	for range limit {
		exec.next(t)
	}
	// Seq 3 was due 30µs after seq 0; by now it has waited for a slot.
	time.Sleep(2 * time.Millisecond)
	exec.quiet(t)
	for i := range 10 {
		exec.release <- struct{}{}
		if req := exec.next(t); req.Seq != uint64(limit+i) {
			t.Fatalf("seq %d started after a slot freed, want %d", req.Seq, limit+i)
		}
		if in, _ := exec.counts(); in != limit {
			t.Fatalf("%d in flight, want %d", in, limit)
		}
	}
	stop()
	close(exec.releaseAll)
	<-done
	if _, peak := exec.counts(); peak != limit {
		t.Errorf("peak in flight %d, want %d", peak, limit)
	}
	for _, r := range rec.bySeq() {
		switch {
		case r.Seq < limit && r.CapWait != 0:
			t.Errorf("seq %d had a free slot but a cap wait of %v", r.Seq, r.CapWait)
		case r.Seq >= limit && r.CapWait < time.Millisecond:
			t.Errorf("seq %d waited for a slot, but its cap wait is %v", r.Seq, r.CapWait)
		}
		if r.Lag() < 0 || r.Lag() > r.Sent.Sub(r.Scheduled) {
			t.Errorf("seq %d: lag %v out of range (sent %v after schedule, cap wait %v)", r.Seq, r.Lag(), r.Sent.Sub(r.Scheduled), r.CapWait)
		}
	}
}

// TestMaxConcurrencyShare checks that shards split the cap, and that a cap too
// small to split is refused.
func TestMaxConcurrencyShare(t *testing.T) {
	if p := newProbe(t, probeYAML(1, "{rate: 5, max_concurrency: 5}", ""), record.Shard{Index: 1, Count: 2}); p.maxConcurrency != 2 {
		t.Errorf("shard 1/2 of a cap of 5 got %d, want 2", p.maxConcurrency)
	}
	cfg, err := scenarios.Parse([]byte(probeYAML(1, "{rate: 5, max_concurrency: 2}", "")), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewProbe("a", cfg.Probes["a"], &Target{}, 1, record.Shard{Index: 2, Count: 3})
	if want := "probe a: max_concurrency 2 cannot be split across 3 shards; raise it to at least 3"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestSendingEnded: a finite run says when it has sent its last request,
// while requests are still in flight, so a burst can start its grace period
// then; a closed loop ends by its duration without waiting for a slot.
func TestSendingEnded(t *testing.T) {
	for _, tc := range []struct {
		name, arrival string
		limit         Limit
		inFlight      int
	}{
		{"closed loop by duration", "{pattern: concurrency, concurrency: 2}", Limit{Duration: 50 * time.Millisecond}, 2},
		{"open loop by count", "{pattern: constant, rate: 1000}", Limit{Requests: 3}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProbe(t, probeYAML(1, tc.arrival, ""), record.Shard{Count: 1})
			p.SetLimit(tc.limit)
			exec := newHoldExec()
			returned := make(chan struct{})
			go func() {
				defer close(returned)
				p.Run(context.Background(), context.Background(), exec, &recorder{})
			}()
			select {
			case <-p.SendingEnded():
			case <-time.After(patience):
				t.Fatal("sending never ended")
			}
			for range tc.inFlight {
				exec.next(t)
			}
			if n, _ := exec.counts(); n != tc.inFlight {
				t.Errorf("%d requests in flight when sending ended, want %d", n, tc.inFlight)
			}
			select {
			case <-returned:
				t.Fatal("Run returned with requests in flight")
			default:
			}
			exec.quiet(t)
			close(exec.releaseAll)
			<-returned
		})
	}
}
