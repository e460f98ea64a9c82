package prober

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferprobe/inferprobe/prober/arrival"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/seeded"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Executor runs one request. The in-process Client is one; a pool of worker
// processes is another.
type Executor interface {
	Do(ctx context.Context, t *Target, req *Request) *record.Record
}

// Preparer is an executor that has work to do before it can send to a
// target without delay (the worker pool: each worker builds the target and
// loads its tokenizer; a Client opens connections). conns is how many
// requests the caller will have in flight at once, as far as its schedule
// fixes that (0 when it does not): the connections to open ahead, where
// they are reused. Prepare returns when that is done or ctx ends; release
// says the target is no longer sent to by this caller.
type Preparer interface {
	Prepare(ctx context.Context, t *Target, conns int) (release func())
}

// Recorder is told when each request starts and how it ended.
type Recorder interface {
	Started()
	Observe(*record.Record)
}

// Probe is a never-ending seeded stream of requests to one target, and the
// scheduler that sends it: open-loop at the send times of an arrival process
// or of a replayed trace, or closed-loop with a number of requests kept in
// flight. A multi-turn session is scheduled as one unit: its first turn like
// any request, each later turn its think time after the turn before ended.
type Probe struct {
	Name     string
	Target   *Target
	params   map[string]any
	shard    record.Shard
	schedule schedule
	// maxConcurrency is this shard's cap on open-loop requests in flight; 0 for none.
	maxConcurrency int
	// capRampOver raises the cap from 1 to maxConcurrency over this long; 0 for at once.
	capRampOver time.Duration
	// maxPrefill is this shard's cap on requests waiting for their first
	// token, any schedule; 0 for none. prefillRampOver ramps it as capRampOver.
	maxPrefill      int
	prefillRampOver time.Duration
	source          dataset.Source
	// cancelRate of the requests are cancelled cancelAfter after they were
	// written, chosen by cancels.
	cancelRate  float64
	cancelAfter time.Duration
	cancels     *rand.Rand
	next        uint64 // sequence number of the next request of the whole sequence
	items       uint64 // how many requests or sessions of the whole sequence were drawn
	// started is one past the last item of the whole sequence (request or
	// session) sent; urlStart is where its round robin over the target's
	// URLs starts (SetURLStart).
	started  atomic.Uint64
	urlStart uint64
	seed     uint64 // the scenario's, from which request IDs derive
	run      record.RunID
	sent     *record.Digester
	limit    Limit
	// turnGap paces a session's later turns (see planned).
	turnGap time.Duration
	// startAt is the agreed instant the timeline starts at; zero: when ready.
	startAt time.Time
	// sendingEnded is closed once Run will send nothing more: its schedule
	// ended and every session started has sent its last turn.
	sendingEnded chan struct{}
}

// schedule is when a probe sends its requests: openLoop at the times of an
// arrival process, replay at the dataset's timestamps, or closedLoop as
// requests end. NewProbe chooses one.
type schedule interface {
	// offset is the send time, from the start, of the next item of the
	// whole sequence, it (user_centric also cuts its session to the turns
	// its user sends). It is drawn for every item, other shards' too, so
	// that every shard draws the same.
	offset(it *dataset.Item) time.Duration
	// loop sends r's planned requests in order until r.ctx ends, the limit
	// is reached or the dataset cannot go on.
	loop(r *run)
}

// Limit ends a finite run (a bench): after Requests requests of the whole
// sequence, or once the next send would come Duration after the start. Zero
// fields do not limit. Open-loop runs stop by scheduled offset, not by the
// clock, so two runs with the same seed send the same requests. A multi-turn
// session that started within the limit is sent to its last turn.
type Limit struct {
	Requests uint64
	Duration time.Duration
}

// SetURLStart makes the round robin over the target's URLs start at the
// URL of session n: after a warmup, the sessions it started, as AIPerf's one
// round robin serves its warmup and profiling phases. Call it before Run.
func (p *Probe) SetURLStart(n uint64) { p.urlStart = n }

// Started is how many requests and sessions of the whole sequence came up
// to the last one the probe sent: the next one's index.
func (p *Probe) Started() uint64 { return p.started.Load() }

// SetLimit makes Run return once l is reached and the requests sent have ended.
func (p *Probe) SetLimit(l Limit) { p.limit = l }

// reached reports whether the request planned with seq, due at offset from
// the start, is past the limit.
func (l Limit) reached(seq uint64, offset time.Duration) bool {
	return (l.Requests > 0 && seq >= l.Requests) || (l.Duration > 0 && offset >= l.Duration)
}

// SetStartAt starts Run's timeline at t rather than when it is ready, so
// that shards on several machines, started at different times, send on one
// timeline. Run still prepares first; if it is ready only after t, its
// requests due by then go at once and their lateness shows as schedule lag.
func (p *Probe) SetStartAt(t time.Time) { p.startAt = t }

// NewProbe prepares probe name of a loaded scenario to run against t, sending
// shard's share of its sequence. It draws the run ID its request IDs fold
// in: every probe built is a run of its own, whose IDs no other run sends.
func NewProbe(name string, p *scenarios.Probe, t *Target, seed uint64, shard record.Shard) (*Probe, error) {
	if err := shard.Check(); err != nil {
		return nil, err
	}
	if _, err := json.Marshal(p.Params); err != nil {
		return nil, fmt.Errorf("probe %s: params cannot be sent as JSON: %w", name, err)
	}
	component := dataset.Component(name)
	source, err := dataset.New(p.Dataset, dataset.Options{Seed: seed, Component: component, Tokenizer: t.Tokenizer(), Endpoint: t.Spec.Endpoint})
	if err != nil {
		return nil, fmt.Errorf("probe %s: dataset: %w", name, err)
	}
	probe := &Probe{
		Name:   name,
		Target: t,
		params: p.Params,
		shard:  shard,
		source: source,
		sent:   record.NewDigester(),
		seed:   seed,
		run:    record.NewRunID(),

		sendingEnded: make(chan struct{}),
	}
	if c := p.Dataset.Cancel; c != nil && c.Rate > 0 {
		probe.cancelRate, probe.cancelAfter = c.Rate, time.Duration(c.After)
		probe.cancels = seeded.New(seed, component+"/cancel")
	}
	a := p.Arrival
	if err := probe.setCap(a.MaxConcurrency); err != nil {
		return nil, fmt.Errorf("probe %s: %w", name, err)
	}
	probe.capRampOver = time.Duration(a.MaxConcurrencyRampOver)
	if n := a.MaxPrefillConcurrency; n > 0 {
		if probe.maxPrefill = shard.Share(n); probe.maxPrefill == 0 {
			return nil, fmt.Errorf("probe %s: max_prefill_concurrency %d cannot be split across %d shards; raise it to at least %d",
				name, n, shard.Count, shard.Count)
		}
		probe.prefillRampOver = time.Duration(a.MaxPrefillConcurrencyRampOver)
	}
	switch {
	case p.Dataset.Replays():
		probe.schedule = replay{}
	case a.Pattern == scenarios.ArrivalConcurrency:
		c := newClosedLoop(a)
		// A shard with no slot at any level would send nothing and never end.
		if most := max(c.ramp.from, c.ramp.to); shard.Share(most) == 0 {
			return nil, fmt.Errorf("probe %s: concurrency %d cannot be split across %d shards; raise it to at least %d",
				name, most, shard.Count, shard.Count)
		}
		probe.schedule = c
	case a.Pattern == scenarios.ArrivalUserCentric:
		u := newUserCentric(a.Rate, a.Users, sessionTurns(p.Dataset))
		probe.schedule, probe.turnGap = u, u.turnGap()
	default:
		arr, err := arrival.New(a, seeded.New(seed, component+"/arrival"))
		if err != nil {
			return nil, fmt.Errorf("probe %s: %w", name, err)
		}
		probe.schedule = openLoop{arrivals: arr}
	}
	return probe, nil
}

// sessionTurns is the turns a session of d has on average, rounded, as
// AIPerf's user-centric rate takes it; 1 for single requests.
func sessionTurns(d scenarios.Dataset) int {
	if s := d.Synthetic; s != nil && s.Conversation != nil {
		return max(1, int(math.Round(s.Conversation.Turns.Mean)))
	}
	return 1
}

// setCap sets this shard's share of an open-loop cap of c requests in flight.
func (p *Probe) setCap(c int) error {
	if c <= 0 {
		return nil
	}
	p.maxConcurrency = p.shard.Share(c)
	if p.maxConcurrency == 0 {
		return fmt.Errorf("max_concurrency %d cannot be split across %d shards; raise it to at least %d",
			c, p.shard.Count, p.shard.Count)
	}
	return nil
}

// PassRequests returns how many requests one pass through the probe's
// dataset file sends, and false when its dataset is not a file: a Limit of
// that many requests sends the file once, as a trace replay in AIPerf does.
func (p *Probe) PassRequests() (uint64, bool) { return dataset.PassRequests(p.source) }

// SendingEnded is closed once Run has sent its last request (by its Limit,
// or because ctx ended); requests may still be in flight. A finite run
// starts its grace period for them here.
func (p *Probe) SendingEnded() <-chan struct{} { return p.sendingEnded }

// Digest identifies the requests sent so far; see Digest.
func (p *Probe) Digest() record.Digest { return p.sent.Digest() }

// Run sends the probe's requests on its schedule until ctx ends, then waits for
// the requests it sent. Requests run under reqCtx, which outlives ctx so that
// stopping a probe lets its in-flight requests finish. Run is called once per
// Probe: the sequence and its digest belong to that run. The timeline starts
// once exec is prepared for the target (see Preparer) and the first requests
// are built: start-up is not billed to them as schedule lag.
func (p *Probe) Run(ctx, reqCtx context.Context, exec Executor, rec Recorder) {
	StartWatchdog()
	if pr, ok := exec.(Preparer); ok {
		release := pr.Prepare(ctx, p.Target, p.connections())
		defer release()
	}
	r := &run{probe: p, ctx: ctx, reqCtx: reqCtx, exec: exec, rec: rec}
	defer r.inFlight.Wait()
	// Closed once planning has stopped (the deferred stop runs first). A
	// probe built and never run leaves its file to the os.File finalizer.
	if c, ok := p.source.(io.Closer); ok {
		defer c.Close()
	}
	stop := r.planAhead()
	defer stop()
	r.sending.Add(1) // the schedule; send adds each session's later turns
	go func() {
		r.sending.Wait()
		close(p.sendingEnded)
	}()
	// The timeline starts once the first requests are built, so that a trace
	// that starts with a burst does not start late, or at the agreed start.
	r.start = time.Now()
	if !p.startAt.IsZero() {
		sleepUntil(ctx, p.startAt)
		r.start = p.startAt
	}
	stopPrefill := r.startPrefill()
	defer stopPrefill()
	p.schedule.loop(r)
	r.sending.Done()
}

// connections is how many requests this shard has in flight as its
// timeline starts, where its schedule fixes that: a closed loop's
// concurrency (where its ramp starts), an open loop's cap (1 when the cap
// ramps); 0 for an open loop without one, whose number in flight follows
// the server's speed.
func (p *Probe) connections() int {
	switch c, ok := p.schedule.(*closedLoop); {
	case ok:
		return p.shard.Share(c.ramp.from)
	case p.capRampOver > 0:
		return min(1, p.maxConcurrency)
	}
	return p.maxConcurrency
}

// planned is the next request of this shard, or the first turn of its next
// session, built ahead of its send time so that building never delays sending.
type planned struct {
	seq    uint64
	item   uint64        // its index among the requests and sessions of the whole sequence
	offset time.Duration // from the start; 0 in a closed loop
	prompt dataset.Prompt
	req    *Request
	err    error
	// turns are the session's later turns; turn i has sequence number seq+1+i.
	turns []plannedTurn
	// turnGap, when > 0, paces the later turns from the send time of the
	// turn before (user_centric) instead of by their think time.
	turnGap time.Duration
	// stop says the dataset cannot go on: err is recorded once and the probe
	// stops sending.
	stop bool
}

// plannedTurn is a later turn of a session.
type plannedTurn struct {
	prompt dataset.Prompt
	req    *Request
	err    error
	delay  time.Duration // think time after the turn before ended
}

// plan draws requests of the whole sequence until one is this shard's. The
// draws of other shards' requests are made all the same: that is what gives
// every shard the same sequence. A session's turns take consecutive sequence
// numbers and go to the shard that owns the session.
func (p *Probe) plan() (pl planned) {
	// A bug in building a request must not take the daemon down with it:
	// the probe stops as a dataset that cannot go on does, and says why
	// where a person looks (the status page, the metrics of its reason).
	defer func() {
		if v := recover(); v != nil {
			pl = planned{seq: p.next, err: fmt.Errorf("building the request panicked (a bug: please report it with the scenario): %v", v), stop: true}
		}
	}()
	for {
		seq, item := p.next, p.items
		p.items++
		it, err := p.source.Next()
		if err != nil {
			return planned{seq: seq, err: fmt.Errorf("dataset: %w", err), stop: true}
		}
		offset := p.schedule.offset(&it)
		p.next += 1 + uint64(len(it.Turns))
		cancels := make([]cancelPlan, 1+len(it.Turns))
		cancels[0] = p.cancelDelay(it.CancelAfter)
		for i := range it.Turns {
			cancels[1+i] = p.cancelDelay(0)
		}
		if !p.shard.Owns(item) {
			continue
		}
		// A session takes the next of the target's URLs and keeps it, as
		// AIPerf's round robin over several --url; the whole sequence's
		// index, so that shards together send as one client would.
		url := int((p.urlStart + item) % uint64(p.Target.URLs()))
		req, err := p.newRequest(it.Prompt, cancels[0], url)
		pl := planned{seq: seq, item: item, offset: offset, prompt: it.Prompt, req: req, err: err, turnGap: p.turnGap}
		for i, t := range it.Turns {
			req, err := p.newRequest(t.Prompt, cancels[1+i], url)
			pl.turns = append(pl.turns, plannedTurn{prompt: t.Prompt, req: req, err: err, delay: t.Delay})
		}
		return pl
	}
}

// cancelPlan says whether and how long after it was written a request is
// cancelled.
type cancelPlan struct {
	cancel bool
	after  time.Duration
}

// cancelDelay plans the next request's cancellation: the trace's own delay
// when it has one (> 0), else cancel.after for the seeded share cancel.rate
// of requests. Every request draws, so that the choices do not depend on the
// trace or the shard.
func (p *Probe) cancelDelay(trace time.Duration) cancelPlan {
	drawn := p.cancels != nil && p.cancels.Float64() < p.cancelRate
	switch {
	case trace > 0:
		return cancelPlan{true, trace}
	case drawn:
		return cancelPlan{true, p.cancelAfter}
	}
	return cancelPlan{}
}

// newRequest builds the request for prompt, to be cancelled as c says and
// sent to the target's URL url.
func (p *Probe) newRequest(prompt dataset.Prompt, c cancelPlan, url int) (*Request, error) {
	req, err := NewRequest(p.Target, prompt, p.params)
	if req != nil {
		req.Cancel, req.CancelAfter, req.URL = c.cancel, c.after, url
	}
	return req, err
}

// lookahead is how many requests Run builds ahead of their send times:
// enough for the bursts of real traces (the Mooncake conversation trace has
// 28 requests at one instant), whose long prompts take milliseconds each to
// build and would otherwise be sent late, one build after another.
const lookahead = scenarios.Lookahead

// planAhead plans the probe's requests in a goroutine of their own, lookahead
// ahead of the scheduler, which takes them from r.planned in order. It
// returns once the first lookahead are built (or planning stopped); stop ends
// the planning and returns once it has ended.
func (r *run) planAhead() (stop func()) {
	ch := make(chan planned, lookahead)
	done, ready := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var once sync.Once
		signal := func() { once.Do(func() { close(ready) }) }
		defer signal()
		for {
			pl := r.probe.plan()
			select {
			case ch <- pl:
			case <-done:
				return
			}
			if pl.stop {
				return
			}
			if len(ch) == cap(ch) {
				signal()
			}
			// Building is CPU work the sends must not wait behind: give
			// the goroutines due to send their turn between builds, rather
			// than at the runtime's 10 ms preemption.
			runtime.Gosched()
		}
	})
	<-ready
	r.planned = ch
	return func() {
		close(done)
		wg.Wait()
	}
}

// run is one call of Run.
type run struct {
	probe *Probe
	// ctx ends the schedule: no request or later turn is sent after it.
	ctx    context.Context
	reqCtx context.Context
	// planned yields the probe's requests in order (see planAhead).
	planned <-chan planned
	// slots holds a token per open-loop request in flight under a cap (see
	// sendAtOffsets); nil without a cap.
	slots chan struct{}
	// prefill holds a token per request waiting for its first token under
	// a prefill cap (see PrefillSlot); nil without one.
	prefill  chan struct{}
	exec     Executor
	rec      Recorder
	start    time.Time
	inFlight sync.WaitGroup
	// sending counts what may still send: the schedule and the sessions
	// with later turns to go.
	sending sync.WaitGroup
}

// dispatchLead is how long before its send time a request is handed to the
// executor, which waits for the time itself (Client.Do, in the worker): the
// hand-offs on the way — goroutines, the pipe, the worker's reader — then
// happen before the send time instead of being billed as schedule lag.
// 10 ms, not the 2 ms those hops take on an idle machine: on a busy one the
// parent waits for a CPU before it hands a request over (half of bench's
// late sends at 200/s came from that), and a request held longer in the
// worker costs nothing. Measured in BENCHMARKS.md (load engine, dispatch
// ahead; schedule lag in bench itself).
const dispatchLead = 10 * time.Millisecond

// timerSleepUntil waits for at on the runtime's timer (sleepUntil says where
// that is precise enough).
func timerSleepUntil(ctx context.Context, at time.Time) bool {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// RunID is the run ID the probe's request IDs fold in.
func (p *Probe) RunID() record.RunID { return p.run }

// requestID is the identity of the probe's request seq.
func (p *Probe) requestID(seq uint64) record.RequestID {
	return record.NewRequestID(p.seed, p.run, p.Name, seq)
}
