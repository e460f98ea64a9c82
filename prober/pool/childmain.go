package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/metrics"
	"sync"
	"syscall"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/wire"
	"github.com/inferprobe/inferprobe/record"
)

// recordQueue bounds the records waiting to be written to the parent; a full
// queue holds finished requests back, not the ones still timing their chunks.
// readyQueue does the same for the answers to target definitions.
const (
	recordQueue = 1024
	readyQueue  = 64
)

// ServeWorker is the worker process's side of the pool, the child's main
// loop, run by the hidden worker command with the process's stdin and
// stdout. After the handshake it builds each target it is sent (tokenizer
// included) and says when it is ready, runs every credit in its own
// goroutine with one shared prober.Client, which timestamps chunks as they
// arrive, writes each record back as it completes and sends a heartbeat
// every 500ms. It returns when in ends (the parent closed it, or died) or a
// shutdown frame arrives, after cancelling the requests still running and
// writing their records. Cancelling ctx cancels the requests.
func ServeWorker(ctx context.Context, in io.Reader, out io.Writer, logger *slog.Logger) error {
	enc := wire.NewEncoder(out)
	if err := enc.Hello(wire.Hello{Version: wire.Version, PID: os.Getpid()}); err != nil {
		return fmt.Errorf("saying hello: %w", err)
	}
	if err := enc.Flush(); err != nil {
		return fmt.Errorf("saying hello: %w", err)
	}
	dec := wire.NewDecoder(in)
	typ, err := dec.Next()
	if err == nil && typ != wire.TypeHello {
		err = fmt.Errorf("got a %s frame", typ)
	}
	if err == nil {
		_, err = dec.Hello()
	}
	if err != nil {
		return fmt.Errorf("reading the parent's hello: %w", err)
	}

	prober.StartWatchdog()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{
		client:  prober.NewClient(),
		logger:  logger,
		cancel:  cancel,
		targets: map[uint64]*workerTarget{},
		byName:  map[string]uint64{},
		running: map[uint64]context.CancelFunc{},
		records: make(chan result, recordQueue),
		readies: make(chan wire.Ready, readyQueue),
	}
	written := make(chan error, 1)
	go func() { written <- s.write(enc) }()
	err = s.read(ctx, dec)
	cancel()
	s.requests.Wait()
	close(s.records)
	return errors.Join(err, <-written)
}

// server is one worker process's state.
type server struct {
	client   *prober.Client
	logger   *slog.Logger
	cancel   context.CancelFunc // cancels every request
	requests sync.WaitGroup     // credits and target builds
	records  chan result
	readies  chan wire.Ready

	// The reader's alone.
	targets map[uint64]*workerTarget
	byName  map[string]uint64

	mu      sync.Mutex
	running map[uint64]context.CancelFunc // by credit id
}

// workerTarget is a target being built, or built: t and err are set before
// built is closed.
type workerTarget struct {
	built chan struct{}
	t     *prober.Target
	err   error // why the definition could not be used
}

// result is a credit's record, or with rec nil word that its first token
// came (the credit holds a prefill slot in the parent).
type result struct {
	id  uint64
	rec *record.Record
}

// firstToken is a credit's prefill slot in the worker: its release is
// word to the parent, which holds the slot.
type firstToken struct {
	id uint64
	to chan<- result
}

func (f *firstToken) Release() { f.to <- result{id: f.id} }

// read serves the parent's frames until in ends or a shutdown arrives.
func (s *server) read(ctx context.Context, dec *wire.Decoder) error {
	for {
		typ, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch typ {
		case wire.TypeTarget:
			t, err := dec.Target()
			if err != nil {
				return err
			}
			s.define(ctx, t)
		case wire.TypeCredit:
			c, err := dec.Credit()
			if err != nil {
				return err
			}
			s.start(ctx, c)
		case wire.TypeCancel:
			id, err := dec.Cancel()
			if err != nil {
				return err
			}
			s.mu.Lock()
			if cancel := s.running[id]; cancel != nil {
				cancel()
			}
			s.mu.Unlock()
		case wire.TypeShutdown:
			return dec.Shutdown()
		default:
			return fmt.Errorf("unexpected %s frame from the parent", typ)
		}
	}
}

// define keeps a target definition, replacing the one with the same name
// (requests already running hold theirs), and builds it in the background:
// loading a tokenizer takes long enough to delay the credits of other
// targets read meanwhile. Then it opens the connections asked for, and the
// parent hears that it is ready.
func (s *server) define(ctx context.Context, t *wire.Target) {
	if old, ok := s.byName[t.Name]; ok {
		delete(s.targets, old)
	}
	wt := &workerTarget{built: make(chan struct{})}
	s.targets[t.ID] = wt
	s.byName[t.Name] = t.ID
	s.requests.Go(func() {
		wt.t, wt.err = prober.NewTarget(t.Name, &t.Spec)
		close(wt.built)
		if wt.err == nil {
			s.client.Preopen(ctx, wt.t, t.Connections)
		}
		ready := wire.Ready{Target: t.ID}
		if wt.err != nil {
			ready.Err = wt.err.Error()
		}
		s.readies <- ready
	})
}

// start runs credit c in its own goroutine, once its target is built.
func (s *server) start(ctx context.Context, c *wire.Credit) {
	tg, defined := s.targets[c.Target]
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.running[c.ID] = cancel
	s.mu.Unlock()
	s.requests.Go(func() {
		if defined {
			<-tg.built
		}
		var rec *record.Record
		switch {
		case !defined:
			rec = unsent(&c.Request, record.OutcomeError, record.ReasonProtocol, fmt.Sprintf("target %d was not defined before its credit", c.Target))
		case tg.err != nil:
			rec = unsent(&c.Request, record.OutcomeError, record.ReasonProtocol, tg.err.Error())
		default:
			if c.FirstToken {
				c.Request.Prefill = &firstToken{id: c.ID, to: s.records}
			}
			rec = s.client.Do(ctx, tg.t, &c.Request)
		}
		rec.ClientPaused = prober.ClientPaused(rec.Scheduled, time.Now())
		s.mu.Lock()
		delete(s.running, c.ID)
		s.mu.Unlock()
		cancel()
		s.records <- result{c.ID, rec}
	})
}

func (s *server) inFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.running)
}

// write is the only writer of out: records and readies as they come,
// flushed whenever none is waiting, and heartbeats. It returns when records
// is closed.
func (s *server) write(enc *wire.Encoder) error {
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	var stats procStats
	var failed error
	for {
		var err error
		select {
		case r, ok := <-s.records:
			if !ok {
				if failed == nil {
					failed = enc.Flush()
				}
				return failed
			}
			switch {
			case failed != nil:
			case r.rec == nil:
				err = enc.FirstToken(r.id)
			default:
				err = writeRecord(enc, r)
			}
		case r := <-s.readies:
			if failed == nil {
				err = enc.Ready(r)
			}
		case <-tick.C:
			if failed == nil {
				if err = enc.Heartbeat(stats.heartbeat(s.inFlight())); err == nil {
					err = enc.Flush() // now, even while records keep coming
				}
			}
		}
		if err == nil && failed == nil && len(s.records) == 0 && len(s.readies) == 0 {
			err = enc.Flush()
		}
		if err != nil {
			// Nobody is listening any more: stop the requests, and keep
			// draining records so that none of them blocks.
			failed = fmt.Errorf("writing to the parent: %w", err)
			s.logger.Error("cannot write to the parent; cancelling requests", "err", err)
			s.cancel()
		}
	}
}

// writeRecord writes r; a record too large for a frame goes without its
// chunk times, marked as an error, rather than not at all.
func writeRecord(enc *wire.Encoder, r result) error {
	err := enc.Record(r.id, r.rec)
	if errors.Is(err, wire.ErrFrameTooLarge) {
		rec := *r.rec
		rec.Chunks, rec.FirstOutput = nil, -1
		rec.Outcome, rec.Reason, rec.Err = record.OutcomeError, record.ReasonProtocol, err.Error()
		err = enc.Record(r.id, &rec)
	}
	return err
}

// procStats measures the worker process for its heartbeats.
type procStats struct {
	samples []metrics.Sample
	prev    []uint64 // scheduling-latency bucket counts at the previous heartbeat
}

func (s *procStats) heartbeat(inFlight int) wire.Heartbeat {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // cannot fail for RUSAGE_SELF
	return wire.Heartbeat{
		InFlight:        inFlight,
		CPU:             time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		SchedLatencyP99: s.schedLatencyP99(),
	}
}

// schedLatencyP99 is the 99th percentile of the time goroutines waited to
// run since the previous call: the upper bound of the bucket it falls in.
func (s *procStats) schedLatencyP99() time.Duration {
	if s.samples == nil {
		s.samples = []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	}
	metrics.Read(s.samples)
	h := s.samples[0].Value.Float64Histogram()
	if len(s.prev) != len(h.Counts) {
		s.prev = make([]uint64, len(h.Counts))
	}
	var total uint64
	for i, c := range h.Counts {
		total += c - s.prev[i]
	}
	var p99 float64
	need := (total*99 + 99) / 100 // ceil(0.99 total)
	var seen uint64
	for i, c := range h.Counts {
		if seen += c - s.prev[i]; total > 0 && seen >= need {
			p99 = h.Buckets[i+1]
			if math.IsInf(p99, 1) {
				p99 = h.Buckets[i]
			}
			break
		}
	}
	copy(s.prev, h.Counts)
	return time.Duration(p99 * float64(time.Second))
}
