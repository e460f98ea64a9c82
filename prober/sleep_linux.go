package prober

import (
	"context"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// sleepUntil waits for the instant at, and reports false if ctx ended first.
//
// It waits on a timerfd, which the kernel fires on time to the nanosecond
// and the runtime's netpoller waits for like any socket: the goroutine parks
// and holds neither a thread nor a P. The runtime's own timers are waited
// for with epoll_wait, whose timeout is in whole milliseconds, so an idle
// process wakes up to 1 ms after one is due; the nanosleep that made up the
// last millisecond before held its thread and its P, so that a worker's
// stream readers queued behind it and, once the runtime had taken the P back
// for them, the woken sender itself queued for a P at the instant it was due
// to send (BENCHMARKS.md, "Schedule lag in bench itself").
func sleepUntil(ctx context.Context, at time.Time) bool {
	d := time.Until(at)
	if d <= 0 {
		// A scheduler that is behind catches up at full speed.
		return ctx.Err() == nil
	}
	t := timerfds.get()
	if t == nil {
		return timerSleepUntil(ctx, at) // a system without timerfd
	}
	// A cancelled wait ends the read; that timerfd may still be armed, and is
	// not reused.
	stop := context.AfterFunc(ctx, func() { _ = t.f.SetReadDeadline(time.Unix(1, 0)) })
	fired := t.sleep(d)
	if !stop() || !fired {
		_ = t.f.Close()
		if ctx.Err() != nil {
			return false
		}
		return timerSleepUntil(ctx, at)
	}
	timerfds.put(t)
	return ctx.Err() == nil
}

// timerFile is a one-shot timerfd, registered with the netpoller.
type timerFile struct {
	f  *os.File
	fd int
}

func newTimerFile() *timerFile {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil // a sandbox without timerfd
	}
	return &timerFile{os.NewFile(uintptr(fd), "timerfd"), fd}
}

// sleep arms the timer d from now and waits for it to fire.
func (t *timerFile) sleep(d time.Duration) bool {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if unix.TimerfdSettime(t.fd, 0, &spec, nil) != nil {
		return false
	}
	var expirations [8]byte
	_, err := t.f.Read(expirations[:])
	return err == nil
}

// timerfds keeps the timers of waits that have ended, a few of them, so that
// a wait costs a settime and a read rather than opening a descriptor and
// registering it with the netpoller.
var timerfds = &timerFilePool{}

type timerFilePool struct {
	mu   sync.Mutex
	free []*timerFile
}

// maxIdleTimerFiles bounds the descriptors kept: waits that end at the same
// time are few; beyond this many, they are opened and closed.
const maxIdleTimerFiles = 16

func (p *timerFilePool) get() *timerFile {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		t := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return t
	}
	p.mu.Unlock()
	return newTimerFile()
}

func (p *timerFilePool) put(t *timerFile) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < maxIdleTimerFiles {
		p.free = append(p.free, t)
		return
	}
	_ = t.f.Close()
}
