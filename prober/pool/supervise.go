package pool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"slices"
	"time"
)

// supervise keeps slot s running a worker, starting from w, until the pool
// stops: it restarts a worker that exits, with backoff.
func (p *Pool) supervise(s *slot, w *child) {
	backoff := minBackoff
	for {
		if w != nil && p.run(s, w) {
			backoff = minBackoff
		}
		select {
		case <-p.stopped:
			return
		default:
		}
		if p.noteExit(s, w) {
			backoff = maxBackoff
		}
		select {
		case <-time.After(backoff):
		case <-p.stopped:
			return
		}
		backoff = min(2*backoff, maxBackoff)
		p.restarts.Add(1)
		var err error
		if w, err = p.start(s.index); err != nil {
			p.logger.Error("cannot restart worker", "worker", s.index, "err", err)
		}
	}
}

// run puts w in service and waits for it to exit. It reports whether w ran
// long enough to count as healthy, which also ends a crash loop.
func (p *Pool) run(s *slot, w *child) (healthy bool) {
	p.up(s, w)
	timer := time.NewTimer(healthyAfter)
	defer timer.Stop()
	select {
	case <-w.exited:
		return false
	case <-timer.C:
	}
	p.mu.Lock()
	if s.crashLooping {
		p.logger.Info("worker recovered from its crash loop", "worker", s.index, "pid", w.pid)
	}
	s.exits, s.crashLooping = nil, false
	p.mu.Unlock()
	<-w.exited
	return true
}

// up makes w the slot's worker once it has built every target prepared for
// (see Prepare), so that its first requests do not wait for a tokenizer to
// load; or shuts it down if the pool is stopping. A target prepared for
// meanwhile is seen by the check under p.mu, or else Prepare finds w in
// service.
func (p *Pool) up(s *slot, w *child) {
	for {
		p.mu.Lock()
		if p.stopping {
			w.requestStop()
			p.mu.Unlock()
			return
		}
		var waits []<-chan struct{}
		for _, d := range p.targets {
			if d.users > 0 && !w.holds(d) {
				waits = append(waits, w.prepare(d, 0))
			}
		}
		if len(waits) == 0 {
			s.current = w
			p.signal()
			p.mu.Unlock()
			p.logger.Debug("worker up", "worker", s.index, "pid", w.pid)
			return
		}
		p.mu.Unlock()
		for _, ready := range waits {
			select {
			case <-ready:
			case <-p.stopped:
			case <-w.gone:
				return
			}
		}
	}
}

// isLate takes w out of service: its heartbeat is late. The requests it holds
// whose credits were not written to it go to other workers at once; the
// others stay, for it may be running them.
func (p *Pool) isLate(w *child) {
	p.mu.Lock()
	w.late.Store(true)
	close(w.lateNow)
	p.mu.Unlock()
	if w.silence() < lateAfter {
		p.onTime(w) // it spoke meanwhile
		return
	}
	back := w.giveBack(func(c *call) bool { return !c.written })
	p.logger.Warn("worker's heartbeat is late; sending it no more requests until it answers",
		"worker", w.slot, "pid", w.pid, "silent", w.silence().Round(time.Millisecond),
		"given_back", back, "kept", w.load())
}

// onTime puts a late worker back in service: it spoke again.
func (p *Pool) onTime(w *child) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !w.late.Load() {
		return
	}
	w.late.Store(false)
	w.lateNow = make(chan struct{})
	p.signal()
	p.logger.Info("late worker answers again; back in service", "worker", w.slot, "pid", w.pid)
}

// down takes w out of service. It runs before w's calls are lost, so that no
// call is given to it afterwards.
func (p *Pool) down(w *child) {
	cpu := w.cpu()
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.slots[w.slot]; s.current == w {
		s.current = nil
	}
	p.exitedCPU += cpu
}

// logExit logs w's exit with the requests it lost and those it gave back,
// never started, to other workers.
func (p *Pool) logExit(w *child, why string, lost, back int) {
	p.mu.Lock()
	stopping := p.stopping
	p.mu.Unlock()
	switch {
	case !stopping:
		p.logger.Warn("worker lost; restarting it", "worker", w.slot, "pid", w.pid, "why", why,
			"lost_requests", lost, "given_back", back)
	case lost > 0:
		p.logger.Warn("worker lost while stopping", "worker", w.slot, "pid", w.pid, "why", why, "lost_requests", lost)
	default:
		p.logger.Debug("worker stopped", "worker", w.slot, "pid", w.pid)
	}
}

// noteExit counts an exit of slot s (w is nil when the worker did not even
// start) and reports whether the slot is crash-looping.
func (p *Pool) noteExit(s *slot, w *child) bool {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	s.exits = slices.DeleteFunc(s.exits, func(t time.Time) bool { return now.Sub(t) > crashLoopWindow })
	s.exits = append(s.exits, now)
	if len(s.exits) < crashLoopExits {
		return false
	}
	if !s.crashLooping {
		output := ""
		if w != nil {
			output = w.stderr.describe()
		}
		p.logger.Error("worker is crash-looping; restarting it every "+maxBackoff.String(),
			"worker", s.index, "exits", len(s.exits), "within", crashLoopWindow, "last_output", output)
	}
	s.crashLooping = true
	return true
}

// maxLine bounds a forwarded line of worker output.
const maxLine = 4096

// forward logs the worker's stderr, line by line, labelled with its index.
// Lines that are JSON log records (what the worker command writes) keep their
// level, message and attributes; others, such as a panic's stack trace, are
// logged as they are. It also keeps the last lines in t.
func (p *Pool) forward(index int, r io.Reader, t *tail) {
	br := bufio.NewReaderSize(r, maxLine)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Keep the start of an overlong line and skip the rest.
			line = bytes.Clone(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		}
		if line = bytes.TrimRight(line, "\r\n"); len(line) > 0 {
			t.add(string(line))
			p.logLine(index, line)
		}
		if err != nil {
			return
		}
	}
}

func (p *Pool) logLine(index int, line []byte) {
	var rec map[string]any
	if json.Unmarshal(line, &rec) != nil {
		p.logger.Warn("worker output", "worker", index, "line", string(line))
		return
	}
	var level slog.Level
	if s, ok := rec["level"].(string); !ok || level.UnmarshalText([]byte(s)) != nil {
		level = slog.LevelInfo
	}
	msg, _ := rec["msg"].(string)
	attrs := []any{"worker", index}
	for _, k := range slices.Sorted(maps.Keys(rec)) {
		switch k {
		case "time", "level", "msg", "source":
		default:
			attrs = append(attrs, k, rec[k])
		}
	}
	p.logger.Log(context.Background(), level, msg, attrs...)
}
