package pool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/wire"
)

// child is the parent's handle on one worker process it started (what runs
// inside the child is ServeWorker, in childmain.go). Four goroutines serve
// it: a writer (credits, cancels and shutdown down its stdin), a reader
// (records and heartbeats up its stdout, then reaping), a forwarder of its
// stderr to the log, and a watchdog.
type child struct {
	pool  *Pool
	slot  int
	cmd   *exec.Cmd
	pid   int
	born  time.Time
	stdin io.WriteCloser
	enc   *wire.Encoder // the writer's, after the handshake
	dec   *wire.Decoder // the reader's, after the handshake
	queue chan *call    // credits to write; bounded for backpressure
	wake  chan struct{} // capacity 1: cancels are waiting
	stop  chan struct{} // closed to shut the worker down
	gone  chan struct{} // closed when its stdout has ended
	// exited is closed once the process is reaped and its calls returned.
	exited chan struct{}
	// lastFrame is when the worker last said anything, as time since born.
	lastFrame atomic.Int64
	stderr    *tail

	defined map[string]uint64 // the writer's: target name -> id the worker holds

	mu        sync.Mutex
	calls     map[uint64]*call // given and not yet returned
	cancels   []uint64         // written credits to cancel
	stuck     bool
	heartbeat wire.Heartbeat
	beatAt    time.Time
	cpuUse    float64 // cores used over the last heartbeat interval
}

// start starts worker index and waits for its hello.
func (p *Pool) start(index int) (*child, error) {
	cmd := exec.Command(p.exe, p.args...)
	cmd.SysProcAttr = sysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting worker %d from %s: %w", index, p.exe, err)
	}
	w := &child{
		pool:    p,
		slot:    index,
		cmd:     cmd,
		pid:     cmd.Process.Pid,
		born:    time.Now(),
		stdin:   stdin,
		enc:     wire.NewEncoder(stdin),
		dec:     wire.NewDecoder(stdout),
		queue:   make(chan *call, queueSize),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		gone:    make(chan struct{}),
		exited:  make(chan struct{}),
		stderr:  &tail{},
		defined: map[string]uint64{},
		calls:   map[uint64]*call{},
	}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		p.forward(index, stderr, w.stderr)
	}()
	if err := w.handshake(); err != nil {
		w.kill()
		<-stderrDone
		_ = cmd.Wait()
		return nil, fmt.Errorf("worker %d (pid %d, %s) did not start: %w%s", index, w.pid, cmd.ProcessState, err, w.stderr.describe())
	}
	w.lastFrame.Store(int64(time.Since(w.born)))
	go w.write()
	go w.watch()
	go func() {
		readErr := w.read()
		close(w.gone)
		w.kill()
		<-stderrDone
		_ = cmd.Wait()
		why := w.describeExit(readErr)
		p.down(w)
		lost := w.loseAll(why)
		p.logExit(w, why, lost)
		close(w.exited)
	}()
	return w, nil
}

// handshake reads the worker's hello, then says its own. The worker speaks
// first, so a program that exits at once is reported as such rather than
// as a broken pipe.
func (w *child) handshake() error {
	var timedOut atomic.Bool
	timer := time.AfterFunc(helloTimeout, func() {
		timedOut.Store(true)
		w.kill()
	})
	defer timer.Stop()
	typ, err := w.dec.Next()
	switch {
	case timedOut.Load():
		return fmt.Errorf("no hello within %s", helloTimeout)
	case errors.Is(err, io.EOF):
		return errors.New("it exited before its hello")
	case err != nil:
		return fmt.Errorf("reading its hello: %w", err)
	case typ != wire.TypeHello:
		return fmt.Errorf("it sent a %s frame before its hello", typ)
	}
	if _, err := w.dec.Hello(); err != nil {
		return err
	}
	if err := w.enc.Hello(wire.Hello{Version: wire.Version, PID: os.Getpid()}); err != nil {
		return err
	}
	return w.enc.Flush()
}

// read takes records and heartbeats until the worker's stdout ends. It
// returns nil at a clean end, else what was wrong with the stream.
func (w *child) read() error {
	for {
		typ, err := w.dec.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		w.lastFrame.Store(int64(time.Since(w.born)))
		switch typ {
		case wire.TypeRecord:
			id, rec, err := w.dec.Record()
			if err != nil {
				return err
			}
			w.finish(id, rec)
		case wire.TypeHeartbeat:
			h, err := w.dec.Heartbeat()
			if err != nil {
				return err
			}
			w.beat(h)
		default:
			return fmt.Errorf("unexpected %s frame", typ)
		}
	}
}

// write sends credits and cancels, flushing whenever nothing more is waiting
// so that frames batch under load and go at once when idle.
func (w *child) write() {
	for {
		var err error
		select {
		case c := <-w.queue:
			err = w.send(c)
		case <-w.wake:
			err = w.sendCancels()
		case <-w.stop:
			w.shutdown()
			return
		case <-w.gone:
			return
		}
		if err == nil && len(w.queue) == 0 {
			err = w.enc.Flush()
		}
		if err != nil {
			// The pipe is broken: the worker is gone or going, and the
			// reader will account for its calls.
			w.kill()
			return
		}
	}
}

// send writes c's credit, after its target's definition if the worker does
// not hold it.
func (w *child) send(c *call) error {
	w.mu.Lock()
	_, ok := w.calls[c.id]
	c.written = ok
	w.mu.Unlock()
	if !ok {
		return nil // cancelled while queued
	}
	def := &c.target.def
	var err error
	if w.defined[def.Name] != def.ID {
		if err = w.enc.Target(def); err == nil {
			w.defined[def.Name] = def.ID
		}
	}
	if err == nil {
		err = w.enc.Credit(&wire.Credit{ID: c.id, Target: def.ID, Request: *c.req})
	}
	if errors.Is(err, wire.ErrFrameTooLarge) {
		// Refused before anything was written: the stream is intact.
		w.finish(c.id, c.unsent(prober.OutcomeError, prober.ReasonProtocol, err.Error()))
		return nil
	}
	return err
}

func (w *child) sendCancels() error {
	w.mu.Lock()
	ids := w.cancels
	w.cancels = nil
	w.mu.Unlock()
	for _, id := range ids {
		if err := w.enc.Cancel(id); err != nil {
			return err
		}
	}
	return nil
}

// shutdown returns the credits not yet written as cancelled and asks the
// worker to cancel the rest, send their records and exit; one that takes
// longer than stopTimeout is killed.
func (w *child) shutdown() {
	var unwritten []*call
	w.mu.Lock()
	for id, c := range w.calls {
		if !c.written {
			delete(w.calls, id)
			unwritten = append(unwritten, c)
		}
	}
	w.mu.Unlock()
	for _, c := range unwritten {
		w.deliver(c, c.unsent(prober.OutcomeCancelled, prober.ReasonNone, "not sent: inferprobe is shutting down"))
	}
	if err := w.enc.Shutdown(); err == nil {
		_ = w.enc.Flush()
	}
	_ = w.stdin.Close()
	kill := time.AfterFunc(stopTimeout, w.kill)
	<-w.gone
	kill.Stop()
}

// watch kills the worker when it has been silent for stuckAfter: a stopped
// or wedged process would otherwise hold its requests forever.
func (w *child) watch() {
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-w.gone:
			return
		case <-tick.C:
			silent := time.Since(w.born) - time.Duration(w.lastFrame.Load())
			if silent < stuckAfter {
				continue
			}
			w.mu.Lock()
			w.stuck = true
			w.mu.Unlock()
			w.pool.logger.Error("worker stopped answering; killing and replacing it",
				"worker", w.slot, "pid", w.pid, "silent", silent.Round(time.Millisecond))
			w.kill()
			return
		}
	}
}

// add records a call given to the worker.
func (w *child) add(c *call) {
	w.mu.Lock()
	w.calls[c.id] = c
	w.mu.Unlock()
	w.pool.inFlight.Add(1)
}

// load is the number of calls the worker holds.
func (w *child) load() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.calls)
}

// finish returns call id's record, unless the call has already returned:
// whatever happens, a call returns once.
func (w *child) finish(id uint64, rec *prober.Record) {
	w.mu.Lock()
	c, ok := w.calls[id]
	delete(w.calls, id)
	w.mu.Unlock()
	if ok {
		w.deliver(c, rec)
	}
}

// deliver hands c its record; c must just have left w.calls.
func (w *child) deliver(c *call, rec *prober.Record) {
	c.done <- rec
	w.pool.inFlight.Done()
}

// cancel cancels c for its Do: at once if its credit was not written yet,
// else by asking the worker, whose record then says cancelled.
func (w *child) cancel(c *call) {
	w.mu.Lock()
	if _, ok := w.calls[c.id]; !ok {
		w.mu.Unlock()
		return
	}
	if !c.written {
		delete(w.calls, c.id)
		w.mu.Unlock()
		w.deliver(c, c.unsent(prober.OutcomeCancelled, prober.ReasonNone, "cancelled before it was sent"))
		return
	}
	w.cancels = append(w.cancels, c.id)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // already woken
	}
}

// loseAll returns every call the worker still holds as worker_lost, and
// returns how many there were.
func (w *child) loseAll(why string) int {
	w.mu.Lock()
	calls := w.calls
	w.calls = map[uint64]*call{}
	w.mu.Unlock()
	for _, c := range calls {
		w.deliver(c, c.unsent(prober.OutcomeError, prober.ReasonWorkerLost, why))
	}
	return len(calls)
}

func (w *child) beat(h wire.Heartbeat) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if dt := now.Sub(w.beatAt); !w.beatAt.IsZero() && dt > 0 {
		w.cpuUse = (h.CPU - w.heartbeat.CPU).Seconds() / dt.Seconds()
	}
	w.heartbeat, w.beatAt = h, now
}

// childStats is a consistent snapshot of a worker for metrics.
type childStats struct {
	calls     int
	heartbeat wire.Heartbeat
	beaten    bool // a heartbeat has arrived
	cpuUse    float64
}

func (w *child) stats() childStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return childStats{calls: len(w.calls), heartbeat: w.heartbeat, beaten: !w.beatAt.IsZero(), cpuUse: w.cpuUse}
}

// cpu is the CPU time the process used: from the kernel once it has been
// reaped, else from its last heartbeat.
func (w *child) cpu() time.Duration {
	w.mu.Lock()
	t := w.heartbeat.CPU
	w.mu.Unlock()
	if st := w.cmd.ProcessState; st != nil {
		t = max(t, st.UserTime()+st.SystemTime())
	}
	return t
}

func (w *child) kill() { _ = w.cmd.Process.Kill() }

// describeExit says why the worker went, for logs and worker_lost records.
func (w *child) describeExit(readErr error) string {
	w.mu.Lock()
	stuck := w.stuck
	w.mu.Unlock()
	prefix := fmt.Sprintf("worker %d (pid %d)", w.slot, w.pid)
	switch {
	case stuck:
		return fmt.Sprintf("%s stopped answering (no heartbeat for %s) and was killed", prefix, stuckAfter)
	case readErr != nil && !errors.Is(readErr, io.ErrUnexpectedEOF): // a frame cut short is a death, not a lie
		return fmt.Sprintf("%s sent a malformed stream (%v) and was killed", prefix, readErr)
	}
	return fmt.Sprintf("%s exited: %s", prefix, w.cmd.ProcessState)
}

// tail keeps a process's last lines of output, for the error that explains
// why it died.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 10

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == tailLines {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, line)
}

// describe returns "; its last output: ..." or "" when there was none.
func (t *tail) describe() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	return "; its last output: " + strings.Join(t.lines, " | ")
}
