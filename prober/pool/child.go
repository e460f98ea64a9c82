package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferprobe/inferprobe/prober/wire"
	"github.com/inferprobe/inferprobe/record"
)

// child is the parent's handle on one worker process it started (what runs
// inside the child is ServeWorker, in childmain.go). Four goroutines serve
// it: a writer (definitions, credits, cancels and shutdown down its stdin), a
// reader (records, readies and heartbeats up its stdout, then reaping), a
// forwarder of its stderr to the log, and a watchdog.
type child struct {
	pool     *Pool
	slot     int
	cmd      *exec.Cmd
	pid      int
	born     time.Time
	stdin    *os.File       // the write end of the worker's stdin pipe
	out      *countedWriter // stdin as the encoder writes it: bytes the pipe took
	enc      *wire.Encoder  // the writer's, after the handshake
	dec      *wire.Decoder  // the reader's, after the handshake
	queue    chan *call     // credits to write; bounded for backpressure
	wake     chan struct{}  // capacity 1: cancels or definitions are waiting
	stop     chan struct{}  // closed by requestStop to shut the worker down
	stopOnce sync.Once
	gone     chan struct{} // closed when its stdout has ended
	// written is closed when the writer has stopped.
	written chan struct{}
	// exited is closed once the process is reaped and its calls returned.
	exited chan struct{}
	// lastFrame is when the worker last said anything, as time since born.
	lastFrame atomic.Int64
	// late is set, under Pool.mu, while its heartbeat is late: it then gets
	// no requests. lateNow, also under Pool.mu, is closed when it goes late.
	late    atomic.Bool
	lateNow chan struct{}
	stderr  *tail

	defined map[string]uint64 // the writer's: target name -> id the worker holds

	mu        sync.Mutex
	calls     map[uint64]*call // given and not yet returned
	cancels   []uint64         // written credits to cancel
	pending   []wire.Target    // definitions to send ahead of any credit
	ready     map[uint64]*readiness
	stuck     bool
	heartbeat wire.Heartbeat
	beatAt    time.Time
	cpuUse    float64 // cores used over the last heartbeat interval
	// building counts the definitions written and not yet answered, and
	// builtAt is when the last answer came: a heartbeat interval that saw a
	// target built (a tokenizer loaded) measures start-up, not the load of
	// sending, so it does not count as the client's load (buildBeat).
	building  int
	builtAt   time.Time
	buildBeat bool
}

// readiness is whether a worker has built a target definition: done is
// closed when it said so.
type readiness struct {
	done   chan struct{}
	closed bool
}

// countedWriter counts the bytes its writer took.
type countedWriter struct {
	w io.Writer
	n int64
}

func (c *countedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// start starts worker index and waits for its hello.
func (p *Pool) start(index int) (*child, error) {
	cmd := exec.Command(p.exe, p.args...)
	cmd.SysProcAttr = sysProcAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	// The pipe's write end is the pool's own (StdinPipe's would be closed by
	// Wait), so that once the worker is dead the bytes it never read can
	// still be counted: the credits among them never reached it.
	stdinR, stdin, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = stdinR
	err = cmd.Start()
	_ = stdinR.Close()
	if err != nil {
		_ = stdin.Close()
		return nil, fmt.Errorf("starting worker %d from %s: %w", index, p.exe, err)
	}
	out := &countedWriter{w: stdin}
	w := &child{
		pool:    p,
		slot:    index,
		cmd:     cmd,
		pid:     cmd.Process.Pid,
		born:    time.Now(),
		stdin:   stdin,
		out:     out,
		enc:     wire.NewEncoder(out),
		dec:     wire.NewDecoder(stdout),
		queue:   make(chan *call, queueSize),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		gone:    make(chan struct{}),
		written: make(chan struct{}),
		exited:  make(chan struct{}),
		lateNow: make(chan struct{}),
		stderr:  &tail{},
		defined: map[string]uint64{},
		calls:   map[uint64]*call{},
		ready:   map[uint64]*readiness{},
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
		_ = stdin.Close()
		return nil, fmt.Errorf("worker %d (pid %d, %s) did not start: %w%s", index, w.pid, cmd.ProcessState, err, w.stderr.describe())
	}
	w.lastFrame.Store(int64(time.Since(w.born)))
	go func() {
		defer close(w.written)
		w.write()
	}()
	go w.watch()
	go func() {
		readErr := w.read()
		close(w.gone)
		w.kill()
		<-stderrDone // the process has let go of its pipes: it is dead
		<-w.written
		consumed := w.consumed()
		_ = cmd.Wait()
		_ = stdin.Close()
		why := w.describeExit(readErr)
		p.down(w)
		lost, back := w.loseAll(why, consumed)
		p.logExit(w, why, lost, back)
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

// read takes records, readies and heartbeats until the worker's stdout
// ends. It returns nil at a clean end, else what was wrong with the stream.
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
		if w.late.Load() {
			w.pool.onTime(w)
		}
		switch typ {
		case wire.TypeRecord:
			id, rec, err := w.dec.Record()
			if err != nil {
				return err
			}
			w.finish(id, rec)
		case wire.TypeFirstToken:
			id, err := w.dec.FirstToken()
			if err != nil {
				return err
			}
			w.firstToken(id)
		case wire.TypeReady:
			r, err := w.dec.Ready()
			if err != nil {
				return err
			}
			w.readied(r, time.Now())
		case wire.TypeHeartbeat:
			h, err := w.dec.Heartbeat()
			if err != nil {
				return err
			}
			w.beat(h, time.Now())
		default:
			return fmt.Errorf("unexpected %s frame", typ)
		}
	}
}

// write sends definitions, credits and cancels, flushing whenever nothing
// more is waiting so that frames batch under load and go at once when idle.
func (w *child) write() {
	for {
		var err error
		select {
		case c := <-w.queue:
			err = w.send(c)
		case <-w.wake:
			if err = w.sendDefinitions(); err == nil {
				err = w.sendCancels()
			}
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
	// Not ours (cancelled or given back while queued), or queued twice: a
	// worker that was late and is back may get again a call it gave back.
	ok = ok && !c.written
	if ok {
		// Until the whole credit is in the stream, the worker cannot hold it.
		c.written, c.end = true, math.MaxInt64
	}
	w.mu.Unlock()
	if !ok {
		return nil
	}
	def := &c.target.def
	err := w.define(def)
	if err == nil {
		err = w.enc.CreditOf(c.id, def.ID, c.req)
	}
	if errors.Is(err, wire.ErrFrameTooLarge) {
		// Refused before anything was written: the stream is intact.
		w.finish(c.id, c.unsent(record.OutcomeError, record.ReasonProtocol, err.Error()))
		return nil
	}
	if err == nil {
		c.end = w.enc.Written()
	}
	return err
}

// define writes def unless the worker holds it already.
func (w *child) define(def *wire.Target) error {
	if w.defined[def.Name] == def.ID {
		return nil
	}
	if err := w.enc.Target(def); err != nil {
		return err
	}
	w.defined[def.Name] = def.ID
	w.mu.Lock()
	w.building++
	w.mu.Unlock()
	return nil
}

// sendDefinitions writes the definitions Prepare asked for.
func (w *child) sendDefinitions() error {
	w.mu.Lock()
	defs := w.pending
	w.pending = nil
	w.mu.Unlock()
	for i := range defs {
		if err := w.define(&defs[i]); err != nil {
			return err
		}
	}
	return nil
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
		w.deliver(c, c.unsent(record.OutcomeCancelled, record.ReasonNone, "not sent: inferprobe is shutting down"))
	}
	if err := w.enc.Shutdown(); err == nil {
		_ = w.enc.Flush()
	}
	_ = w.stdin.Close()
	kill := time.AfterFunc(stopTimeout, w.kill)
	<-w.gone
	kill.Stop()
}

// silence is how long the worker has said nothing.
func (w *child) silence() time.Duration {
	return time.Since(w.born) - time.Duration(w.lastFrame.Load())
}

// watch takes the worker out of service as soon as its heartbeat is late
// (lateAfter of silence), and kills it once it has been silent for
// stuckAfter: a stopped or wedged process would otherwise hold its requests
// forever.
func (w *child) watch() {
	timer := time.NewTimer(lateAfter)
	defer timer.Stop()
	for {
		select {
		case <-w.gone:
			return
		case <-timer.C:
		}
		switch silent := w.silence(); {
		case silent >= stuckAfter:
			w.mu.Lock()
			w.stuck = true
			w.mu.Unlock()
			w.pool.logger.Error("worker stopped answering; killing and replacing it",
				"worker", w.slot, "pid", w.pid, "silent", silent.Round(time.Millisecond))
			w.kill()
			return
		case silent >= lateAfter:
			if !w.late.Load() {
				w.pool.isLate(w)
			}
			timer.Reset(stuckAfter - silent)
		default:
			timer.Reset(lateAfter - silent)
		}
	}
}

// add records a call given to the worker.
func (w *child) add(c *call) {
	w.mu.Lock()
	w.calls[c.id] = c
	w.mu.Unlock()
}

// run queues c on w and waits for its record; nil means that w gave it back
// unstarted, for another worker.
func (w *child) run(ctx context.Context, c *call) *record.Record {
	select {
	case w.queue <- c:
	case rec := <-c.done:
		return rec
	case <-ctx.Done():
		return w.cancel(c)
	}
	select {
	case rec := <-c.done:
		return rec
	case <-ctx.Done():
		return w.cancel(c)
	}
}

// load is the number of calls the worker holds.
func (w *child) load() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.calls)
}

// finish returns call id's record, unless the call has already returned:
// whatever happens, a call returns once.
func (w *child) finish(id uint64, rec *record.Record) {
	w.mu.Lock()
	c, ok := w.calls[id]
	delete(w.calls, id)
	w.mu.Unlock()
	if ok {
		w.deliver(c, rec)
	}
}

// firstToken frees the prefill slot of call id, whose first token came.
func (w *child) firstToken(id uint64) {
	w.mu.Lock()
	c := w.calls[id]
	w.mu.Unlock()
	if c != nil {
		c.req.FirstToken()
	}
}

// deliver hands c its record, or nil to give it back unstarted; c must just
// have left w.calls.
func (w *child) deliver(c *call, rec *record.Record) { c.done <- rec }

// cancel cancels c for its Do and returns its record: at once if its credit
// was not written yet, else by asking the worker, whose record then says
// cancelled.
func (w *child) cancel(c *call) *record.Record {
	cancelled := c.unsent(record.OutcomeCancelled, record.ReasonNone, "cancelled before it was sent")
	w.mu.Lock()
	if _, ok := w.calls[c.id]; ok {
		if !c.written {
			delete(w.calls, c.id)
			w.mu.Unlock()
			return cancelled
		}
		w.cancels = append(w.cancels, c.id)
		w.wakeWriter()
	}
	w.mu.Unlock()
	if rec := <-c.done; rec != nil {
		return rec
	}
	return cancelled // given back meanwhile
}

func (w *child) wakeWriter() {
	select {
	case w.wake <- struct{}{}:
	default: // already woken
	}
}

// giveBack hands the calls that pass keep back to their Do, for another
// worker, and returns how many there were.
func (w *child) giveBack(keep func(*call) bool) int {
	var back []*call
	w.mu.Lock()
	for id, c := range w.calls {
		if keep(c) {
			delete(w.calls, id)
			back = append(back, c)
		}
	}
	w.mu.Unlock()
	for _, c := range back {
		w.deliver(c, nil)
	}
	return len(back)
}

// consumed is how many bytes of its input the dead worker read: all the pipe
// took, less what is still in it. Where the pipe cannot say, every byte it
// took counts as read.
func (w *child) consumed() int64 {
	n := w.out.n
	if unread, err := unreadBytes(w.stdin); err == nil {
		n -= int64(unread)
	}
	return n
}

// loseAll empties the dead worker: a call whose credit it never read whole
// goes to another worker, one it may have started comes back worker_lost.
// It returns how many were lost and how many given back.
func (w *child) loseAll(why string, consumed int64) (lost, back int) {
	back = w.giveBack(func(c *call) bool { return !c.written || c.end > consumed })
	w.mu.Lock()
	calls := w.calls
	w.calls = map[uint64]*call{}
	w.mu.Unlock()
	for _, c := range calls {
		w.deliver(c, c.unsent(record.OutcomeError, record.ReasonWorkerLost, why))
	}
	return len(calls), back
}

// prepare asks the worker to build d and open conns connections to it,
// unless it has been asked already, and returns a channel closed once it
// has. Called with Pool.mu held.
func (w *child) prepare(d *target, conns int) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.ready[d.def.ID]; r != nil {
		return r.done
	}
	r := &readiness{done: make(chan struct{})}
	w.ready[d.def.ID] = r
	def := d.def
	def.Connections = conns
	w.pending = append(w.pending, def)
	w.wakeWriter()
	return r.done
}

// holds reports whether the worker has built d. Called with Pool.mu held.
func (w *child) holds(d *target) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.ready[d.def.ID]
	return r != nil && r.closed
}

// readied notes that the worker has built a target, or could not; the
// answer arrived at now.
func (w *child) readied(r wire.Ready, now time.Time) {
	if r.Err != "" {
		w.pool.logger.Warn("a worker cannot build a target; its requests to it fail as protocol errors",
			"worker", w.slot, "pid", w.pid, "err", r.Err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.building = max(w.building-1, 0)
	w.builtAt = now
	rd := w.ready[r.Target]
	if rd == nil {
		// Defined along with a credit, not by prepare.
		rd = &readiness{done: make(chan struct{})}
		w.ready[r.Target] = rd
	}
	if !rd.closed {
		rd.closed = true
		close(rd.done)
	}
}

// beat takes heartbeat h, which arrived at now.
func (w *child) beat(h wire.Heartbeat, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buildBeat = w.building > 0 || w.builtAt.After(w.beatAt)
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
	buildBeat bool // the last heartbeat interval saw a target built
}

func (w *child) stats() childStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return childStats{calls: len(w.calls), heartbeat: w.heartbeat, beaten: !w.beatAt.IsZero(), cpuUse: w.cpuUse, buildBeat: w.buildBeat}
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

// requestStop asks the worker to shut down. New and the slot's supervisor
// both put a first worker up, so a stop can reach it through either: it must
// not close stop twice.
func (w *child) requestStop() { w.stopOnce.Do(func() { close(w.stop) }) }
