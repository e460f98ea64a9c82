package prober

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/prober/arrival"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/seeded"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Executor runs one request. The in-process Client is one; a pool of worker
// processes is another.
type Executor interface {
	Do(ctx context.Context, t *Target, req *Request) *Record
}

// Recorder is told when each request starts and how it ended.
type Recorder interface {
	Started()
	Observe(*Record)
}

// Probe is a never-ending seeded stream of requests to one target, and the
// scheduler that sends it: open-loop at the send times of an arrival process,
// or closed-loop with a number of requests kept in flight.
type Probe struct {
	Name   string
	Target *Target
	params map[string]any
	shard  Shard
	// Exactly one of arrivals (open loop) and concurrency (closed loop) is set.
	arrivals    arrival.Process
	concurrency *concurrencyRamp
	// maxConcurrency is this shard's cap on open-loop requests in flight; 0 for none.
	maxConcurrency int
	prompts        *dataset.Synthetic
	next           uint64 // sequence number of the next request of the whole sequence
	sent           *sequence
	limit          Limit
}

// Limit ends a finite run (a bench): after Requests requests of the whole
// sequence, or once the next send would come Duration after the start. Zero
// fields do not limit. Open-loop runs stop by scheduled offset, not by the
// clock, so two runs with the same seed send the same requests.
type Limit struct {
	Requests uint64
	Duration time.Duration
}

// SetLimit makes Run return once l is reached and the requests sent have ended.
func (p *Probe) SetLimit(l Limit) { p.limit = l }

// reached reports whether the request planned with seq, due at offset from
// the start, is past the limit.
func (l Limit) reached(seq uint64, offset time.Duration) bool {
	return (l.Requests > 0 && seq >= l.Requests) || (l.Duration > 0 && offset >= l.Duration)
}

// NewProbe prepares probe name of a loaded scenario to run against t, sending
// shard's share of its sequence.
func NewProbe(name string, p *scenarios.Probe, t *Target, seed uint64, shard Shard) (*Probe, error) {
	if err := shard.check(); err != nil {
		return nil, err
	}
	if _, err := json.Marshal(p.Params); err != nil {
		return nil, fmt.Errorf("probe %s: params cannot be sent as JSON: %w", name, err)
	}
	component := "probe/" + name
	probe := &Probe{
		Name:    name,
		Target:  t,
		params:  p.Params,
		shard:   shard,
		prompts: dataset.NewSynthetic(*p.Dataset.Synthetic, seed, component),
		sent:    newSequence(),
	}
	a := p.Arrival
	if a.Pattern == scenarios.ArrivalConcurrency {
		probe.concurrency = &concurrencyRamp{from: a.Concurrency, to: a.Concurrency}
		if a.RampOver > 0 {
			probe.concurrency.to, probe.concurrency.over = int(a.RampTo), time.Duration(a.RampOver)
		}
		return probe, nil
	}
	arr, err := arrival.New(a, seeded.New(seed, component+"/arrival"))
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", name, err)
	}
	probe.arrivals = arr
	if a.MaxConcurrency > 0 {
		probe.maxConcurrency = shard.share(a.MaxConcurrency)
		if probe.maxConcurrency == 0 {
			return nil, fmt.Errorf("probe %s: max_concurrency %d cannot be split across %d shards; raise it to at least %d",
				name, a.MaxConcurrency, shard.Count, shard.Count)
		}
	}
	return probe, nil
}

// Digest identifies the requests sent so far; see Digest.
func (p *Probe) Digest() Digest { return p.sent.digest() }

// Run sends the probe's requests on its schedule until ctx ends, then waits for
// the requests it sent. Requests run under reqCtx, which outlives ctx so that
// stopping a probe lets its in-flight requests finish. Run is called once per
// Probe: the sequence and its digest belong to that run.
func (p *Probe) Run(ctx, reqCtx context.Context, exec Executor, rec Recorder) {
	r := &run{probe: p, reqCtx: reqCtx, exec: exec, rec: rec, start: time.Now()}
	defer r.inFlight.Wait()
	if p.concurrency != nil {
		r.closedLoop(ctx)
	} else {
		r.openLoop(ctx)
	}
}

// planned is the next request of this shard, built ahead of its send time so
// that building never delays sending.
type planned struct {
	seq    uint64
	offset time.Duration // from the start; 0 in a closed loop
	prompt dataset.Prompt
	req    *Request
	err    error
}

// plan draws requests of the whole sequence until one is this shard's. The
// draws of other shards' requests are made all the same: that is what gives
// every shard the same sequence.
func (p *Probe) plan() planned {
	for {
		seq := p.next
		p.next++
		var offset time.Duration
		if p.arrivals != nil {
			offset = p.arrivals.Next()
		}
		prompt := p.prompts.Next()
		if !p.shard.owns(seq) {
			continue
		}
		req, err := NewRequest(p.Target, prompt, p.params)
		return planned{seq: seq, offset: offset, prompt: prompt, req: req, err: err}
	}
}

// run is one call of Run.
type run struct {
	probe    *Probe
	reqCtx   context.Context
	exec     Executor
	rec      Recorder
	start    time.Time
	inFlight sync.WaitGroup
}

// dispatchLead is how long before its send time a request is handed to the
// executor, which waits for the time itself (Client.Do, in the worker): the
// hand-offs on the way — goroutines, the pipe, the worker's reader — then
// happen before the send time instead of being billed as schedule lag.
// Measured in BENCHMARKS.md (load engine, dispatch ahead).
const dispatchLead = 2 * time.Millisecond

// openLoop sends each request at start + its offset. With a cap, a request
// whose time has come waits for a free slot.
func (r *run) openLoop(ctx context.Context) {
	var slots chan struct{}
	var release func(time.Time)
	if n := r.probe.maxConcurrency; n > 0 {
		slots = make(chan struct{}, n)
		release = func(time.Time) { <-slots }
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	// capFreed is when the latest wait for a slot ended. A request due before
	// then was held back by the cap, by its own wait or by the requests queued
	// ahead of it, so that time is its cap wait and not client lag.
	var capFreed time.Time
	for {
		pl := r.probe.plan()
		if r.probe.limit.reached(pl.seq, pl.offset) {
			return
		}
		at := r.start.Add(pl.offset)
		if !sleepUntil(ctx, timer, at.Add(-dispatchLead)) {
			return
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
			default:
				select {
				case slots <- struct{}{}:
					capFreed = time.Now()
				case <-ctx.Done():
					return
				}
			}
		}
		r.send(pl, at, max(0, capFreed.Sub(at)), release)
	}
}

// closedLoop keeps the target number of requests in flight: each one that
// finishes is replaced at once, and each step of a ramp adds or retires one.
// A request is scheduled at the instant its slot opened (the end of the
// request it replaces, or its ramp step), so its lag is the client's reaction
// time, even when the client is late for several steps at once.
func (r *run) closedLoop(ctx context.Context) {
	ramp, shard := r.probe.concurrency, r.probe.shard
	ended := make(chan time.Time)
	stopped := make(chan struct{})
	defer close(stopped)
	finished := func(end time.Time) {
		select {
		case ended <- end:
		case <-stopped: // Run has stopped sending; nobody counts slots any more
		}
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	inFlight, steps, opened := 0, 0, r.start
	pl := r.probe.plan()
	for {
		for ; inFlight < shard.share(ramp.level(steps)); inFlight++ {
			if ctx.Err() != nil || r.probe.limit.reached(pl.seq, time.Since(r.start)) {
				return
			}
			r.send(pl, opened, 0, finished)
			pl = r.probe.plan()
		}
		var step <-chan time.Time
		if steps < ramp.steps() {
			timer.Reset(time.Until(r.start.Add(ramp.at(steps + 1))))
			step = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case opened = <-ended:
			inFlight--
		case <-step:
			steps++
			opened = r.start.Add(ramp.at(steps))
		}
	}
}

// send starts pl's request, scheduled at scheduled and held capWait by the
// cap. finished, if set, is told when the request ends, before it is recorded.
func (r *run) send(pl planned, scheduled time.Time, capWait time.Duration, finished func(end time.Time)) {
	r.rec.Started()
	r.probe.sent.add(pl.seq, pl.offset, pl.prompt)
	if pl.req != nil {
		pl.req.Seq, pl.req.Scheduled = pl.seq, scheduled
	}
	r.inFlight.Go(func() {
		var out *Record
		if pl.err != nil {
			// Unreachable after NewProbe's check, but a request is never lost silently.
			out = &Record{Seq: pl.seq, Scheduled: scheduled, Sent: time.Now(), FirstOutput: -1}
			out.fail(ReasonProtocol, 0, pl.err)
		} else {
			out = r.exec.Do(r.reqCtx, r.probe.Target, pl.req)
		}
		if finished != nil {
			finished(time.Now())
		}
		out.CapWait = capWait
		r.rec.Observe(out)
	})
}

// sleepUntil waits for the instant at, and reports false if ctx ended first:
// on the runtime's timer while at is far, and precisely for the last
// timerGranularity, which ctx cannot cut short.
func sleepUntil(ctx context.Context, timer *time.Timer, at time.Time) bool {
	if d := time.Until(at) - timerGranularity; d > 0 {
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
		}
	}
	// A scheduler that is behind finds at already past, and catches up at full speed.
	if d := time.Until(at); d > 0 {
		preciseSleep(d)
	}
	return ctx.Err() == nil
}

// concurrencyRamp is the closed loop's whole number of requests in flight:
// from, moving one step at a time to to, the steps spread evenly over over.
type concurrencyRamp struct {
	from, to int
	over     time.Duration
}

// steps is the number of steps the ramp takes.
func (c *concurrencyRamp) steps() int { return max(c.to-c.from, c.from-c.to) }

// level is the number in flight after step steps.
func (c *concurrencyRamp) level(steps int) int {
	if c.to < c.from {
		return c.from - steps
	}
	return c.from + steps
}

// at is the time from the start at which step j (from 1) is taken.
func (c *concurrencyRamp) at(j int) time.Duration {
	return time.Duration(float64(c.over) * float64(j) / float64(c.steps()))
}
