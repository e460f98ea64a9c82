// Package pool runs requests in worker processes: copies of the running
// binary started with its hidden worker command. Each worker runs many
// requests at once and takes their timestamps itself, so the parent's
// scheduling, garbage collection and metrics work never delay a measurement,
// and the load spreads over cores.
//
// The pool supervises its workers: a worker that dies is restarted with
// backoff, one whose heartbeat is late gets no more requests, one that stops
// answering is killed and replaced. A request a lost worker never started
// goes to another worker; one it may have started comes back once, as
// worker_lost. Workers die with the pool's process: the kernel kills them
// when it dies, and they exit when their stdin closes.
package pool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/wire"
	"github.com/inferprobe/inferprobe/record"
)

const (
	// queueSize bounds the credits waiting to be written to one worker; when
	// every worker's queue is full, Do blocks.
	queueSize = 256
	// heartbeatEvery is how often a worker reports. After lateAfter of
	// silence, a heartbeat missed by half an interval, the worker gets no
	// more requests until it speaks again; stuckAfter of silence gets it
	// killed. Several beats fit in stuckAfter, so a busy moment does not
	// look like a hang.
	heartbeatEvery = 500 * time.Millisecond
	lateAfter      = heartbeatEvery * 3 / 2
	stuckAfter     = 3 * time.Second
	// helloTimeout bounds a worker's start-up, handshake included.
	helloTimeout = 10 * time.Second
	// Restarts back off from minBackoff, doubling to maxBackoff; a worker
	// that ran healthyAfter resets the backoff and the crash-loop count.
	minBackoff   = 100 * time.Millisecond
	maxBackoff   = 10 * time.Second
	healthyAfter = 30 * time.Second
	// crashLoopExits exits within crashLoopWindow make a worker crash-looping.
	crashLoopExits  = 5
	crashLoopWindow = time.Minute
	// stopTimeout is how long a worker told to shut down has to send its
	// last records and exit before it is killed.
	stopTimeout = 5 * time.Second
)

// Options configures a Pool.
type Options struct {
	// Workers is the number of worker processes; at least 1.
	Workers int
	// Executable is the worker program; default the running binary.
	Executable string
	// Args start Executable as a worker, e.g. []string{"worker"}.
	Args []string
	// Logger receives the pool's logs and the workers' logs, which are
	// labelled with the worker's index. Default: discard.
	Logger *slog.Logger
}

// Pool runs requests in worker processes. It implements prober.Executor, and
// prometheus.Collector for its own health; register it where the exporter's
// own metrics go.
type Pool struct {
	exe    string
	args   []string
	logger *slog.Logger
	slots  []*slot

	nextID   atomic.Uint64
	inFlight sync.WaitGroup // calls given to a worker and not yet returned from Do
	restarts atomic.Uint64

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced when a worker comes up or draining starts
	draining   bool          // Do takes no new requests
	stopping   bool          // workers are shutting down and none is restarted
	targets    map[string]*target
	lastTarget uint64
	exitedCPU  time.Duration // CPU time of the worker processes that have exited
	next       int           // where the next least-loaded scan starts, so ties spread

	stopped     chan struct{} // closed when stopping starts
	stopOnce    sync.Once
	supervisors sync.WaitGroup
}

// slot is one of the configured workers; its process changes on restart.
type slot struct {
	index int
	// Guarded by Pool.mu.
	current      *child      // up and taking requests; nil while down
	exits        []time.Time // recent exits, for crash-loop detection
	crashLooping bool
}

// target is one definition sent to workers. A target whose spec changes under
// the same name gets a new definition, with a new id.
type target struct {
	def  wire.Target
	last *prober.Target // the Target last seen with this definition
	// users counts the Prepare calls not yet released: a worker started
	// while it is above zero builds the target before taking requests.
	users int
}

// call is one Do: a request on its way to a worker and back. A worker that
// gives it back unstarted hands it on to another.
type call struct {
	id     uint64
	target *target
	req    *prober.Request
	// done gets one message from each worker the call is given to: its
	// record, or nil when the worker gives it back unstarted. Buffered, so
	// never blocks.
	done chan *record.Record
	// written is set, under the worker's mu, once the credit is on its way:
	// from then on a cancel must go to the worker. end is then the offset in
	// the worker's input stream that the worker must have read to hold the
	// whole credit; the writer's until the worker is gone.
	written bool
	end     int64
	counted bool // the call is counted in Pool.inFlight; Do's own
}

// New starts the workers and returns once every one has answered, so that a
// broken executable fails here, with the worker's own words, rather than in a
// restart loop.
func New(opts Options) (*Pool, error) {
	if opts.Workers < 1 {
		return nil, fmt.Errorf("need at least 1 worker, not %d", opts.Workers)
	}
	exe := opts.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding the executable to start workers from: %w", err)
		}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Pool{
		exe:     exe,
		args:    opts.Args,
		logger:  logger,
		slots:   make([]*slot, opts.Workers),
		changed: make(chan struct{}),
		targets: map[string]*target{},
		stopped: make(chan struct{}),
	}
	workers := make([]*child, opts.Workers)
	errs := make([]error, opts.Workers)
	var started sync.WaitGroup
	for i := range p.slots {
		p.slots[i] = &slot{index: i}
		started.Go(func() { workers[i], errs[i] = p.start(i) })
	}
	started.Wait()
	if err := errors.Join(errs...); err != nil {
		p.mu.Lock()
		p.stopping = true // these exits are not losses to restart
		p.mu.Unlock()
		for _, w := range workers {
			if w != nil {
				w.kill()
				<-w.exited
			}
		}
		return nil, err
	}
	for i, w := range workers {
		p.up(p.slots[i], w)
		p.supervisors.Go(func() { p.supervise(p.slots[i], w) })
	}
	logger.Info("workers started", "workers", opts.Workers, "executable", exe)
	return p, nil
}

var (
	_ prober.Executor = (*Pool)(nil)
	_ prober.Preparer = (*Pool)(nil)
)

// Prepare sends t's definition to every worker in service and returns once
// each has built it (its tokenizer loaded) and opened its share of conns
// connections to it, has left service, or ctx ends:
// a probe calls it before its timeline starts, so that a worker's start-up
// is not billed to the first requests as schedule lag. Until release is
// called, workers started later build it before they take requests.
func (p *Pool) Prepare(ctx context.Context, t *prober.Target, conns int) (release func()) {
	type wait struct {
		ready, late, gone <-chan struct{}
	}
	var waits []wait
	p.mu.Lock()
	d := p.define(t)
	d.users++
	release = sync.OnceFunc(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		d.users--
	})
	var ready []*child
	for _, s := range p.slots {
		if w := s.current; w != nil && !w.late.Load() {
			ready = append(ready, w)
		}
	}
	for _, w := range ready {
		// Requests go to the least-loaded worker, so each carries its share.
		share := (conns + len(ready) - 1) / len(ready)
		waits = append(waits, wait{w.prepare(d, share), w.lateNow, w.gone})
	}
	p.mu.Unlock()
	for _, w := range waits {
		select {
		case <-w.ready:
		case <-w.late:
		case <-w.gone:
		case <-ctx.Done():
			return release
		}
	}
	return release
}

// Do runs req on the least-loaded worker and returns its record. It never
// fails: a request that could not run comes back as a record that says why.
// While no worker is up, Do waits for one; when every worker's queue is full,
// it waits for room. A request that a late or lost worker gives back
// unstarted goes to another worker: it is sent once, not retried. Cancelling
// ctx cancels the request, which then comes back cancelled.
func (p *Pool) Do(ctx context.Context, t *prober.Target, req *prober.Request) *record.Record {
	c := &call{id: p.nextID.Add(1), req: req, done: make(chan *record.Record, 1)}
	rec := p.do(ctx, t, c)
	if c.counted {
		p.inFlight.Done()
	}
	return rec
}

func (p *Pool) do(ctx context.Context, t *prober.Target, c *call) *record.Record {
	if ctx.Err() != nil {
		return c.unsent(record.OutcomeCancelled, record.ReasonNone, "cancelled before it was sent")
	}
	for {
		w, rec := p.assign(ctx, t, c)
		if rec != nil {
			return rec
		}
		if rec := w.run(ctx, c); rec != nil {
			return rec
		}
	}
}

// assign gives c to the worker with the fewest calls, waiting for one to be up.
func (p *Pool) assign(ctx context.Context, t *prober.Target, c *call) (*child, *record.Record) {
	for {
		p.mu.Lock()
		if p.draining {
			p.mu.Unlock()
			return nil, c.unsent(record.OutcomeCancelled, record.ReasonNone, "not sent: inferprobe is shutting down")
		}
		c.target = p.define(t)
		if w := p.leastLoaded(); w != nil {
			// A worker is taken out of its slot, under p.mu, before its calls
			// are lost, so one found here still accepts calls. Added under
			// p.mu after the draining check, so Drain's Wait never races an Add.
			if !c.counted {
				c.counted = true
				p.inFlight.Add(1)
			}
			c.written, c.end = false, 0
			w.add(c)
			p.mu.Unlock()
			return w, nil
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, c.unsent(record.OutcomeCancelled, record.ReasonNone, "not sent: cancelled while waiting for a worker")
		}
	}
}

// define returns the definition of t, making a new one when t's spec differs
// from the last one sent under its name. Called with p.mu held.
func (p *Pool) define(t *prober.Target) *target {
	d := p.targets[t.Name]
	if d != nil && (d.last == t || reflect.DeepEqual(d.def.Spec, t.Spec)) {
		d.last = t
		return d
	}
	p.lastTarget++
	d = &target{def: wire.Target{ID: p.lastTarget, Name: t.Name, Spec: t.Spec}, last: t}
	p.targets[t.Name] = d
	return d
}

// leastLoaded returns the worker in service with the fewest calls,
// preferring one with room in its queue, or nil. Called with p.mu held.
func (p *Pool) leastLoaded() *child {
	var best *child
	bestFull, bestLoad := false, 0
	n := len(p.slots)
	p.next = (p.next + 1) % n
	for i := range n {
		w := p.slots[(p.next+i)%n].current
		if w == nil || w.late.Load() {
			continue
		}
		full, load := len(w.queue) == cap(w.queue), w.load()
		if best == nil || !full && bestFull || full == bestFull && load < bestLoad {
			best, bestFull, bestLoad = w, full, load
		}
	}
	return best
}

// signal wakes the Do calls waiting for a worker. Called with p.mu held.
func (p *Pool) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Drain shuts the pool down gracefully: Do takes no new requests (they return
// cancelled), requests in flight may finish until ctx ends, then the rest are
// cancelled and come back cancelled, and the workers exit. It returns ctx's
// error if requests had to be cancelled.
func (p *Pool) Drain(ctx context.Context) error {
	p.mu.Lock()
	p.draining = true
	p.signal()
	p.mu.Unlock()
	idle := make(chan struct{})
	go func() {
		p.inFlight.Wait()
		close(idle)
	}()
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		err = fmt.Errorf("requests still in flight were cancelled: %w", context.Cause(ctx))
	}
	p.stopOnce.Do(p.stopWorkers)
	<-idle // every worker has exited, so every call has returned
	return err
}

// Close stops the pool at once: requests in flight come back cancelled.
func (p *Pool) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = p.Drain(ctx)
	return nil
}

// stopWorkers tells every worker to shut down and waits until all have exited.
func (p *Pool) stopWorkers() {
	p.mu.Lock()
	p.stopping = true
	close(p.stopped)
	for _, s := range p.slots {
		if s.current != nil {
			s.current.requestStop()
		}
	}
	p.mu.Unlock()
	p.supervisors.Wait()
}

// Utilisation reports the busiest worker over its last heartbeat interval
// (about half a second): the CPU it used, in cores, and the highest Go
// scheduling-latency p99 among the workers. High values mean the client, not
// the server, may be what limits the measurements. An interval in which a
// worker built a target (loaded a tokenizer) is start-up, and does not count.
func (p *Pool) Utilisation() (cpu float64, schedLatencyP99 time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slots {
		if w := s.current; w != nil && !w.late.Load() {
			if st := w.stats(); !st.buildBeat {
				cpu = max(cpu, st.cpuUse)
				schedLatencyP99 = max(schedLatencyP99, st.heartbeat.SchedLatencyP99)
			}
		}
	}
	return cpu, schedLatencyP99
}

// unsent is the record of req if it never left or was lost with its
// worker (record.Unsent). It keeps the request's token counts, as
// Client.Do's record of a request it never sent does.
func unsent(req *prober.Request, outcome record.Outcome, reason record.Reason, msg string) *record.Record {
	rec := record.Unsent(req.Seq, req.ID, req.Scheduled, outcome, reason, msg)
	rec.InputTokens, rec.PinnedOutputTokens = req.InputTokens, req.PinnedOutputTokens
	return rec
}

// unsent is the record of c if it does not come back from a worker.
func (c *call) unsent(outcome record.Outcome, reason record.Reason, msg string) *record.Record {
	return unsent(c.req, outcome, reason, msg)
}
