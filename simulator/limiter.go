package simulator

import (
	"container/list"
	"context"
	"sync"
)

// limiter hands out a fixed number of decode slots in strict arrival
// order, like a server's scheduler admitting sequences into its batch.
// Written out rather than a buffered channel because FIFO order among
// blocked channel senders is a runtime detail, not a guarantee.
type limiter struct {
	mu      sync.Mutex
	free    int
	waiters list.List // of chan struct{}, closed when granted a slot
}

func newLimiter(slots int) *limiter {
	return &limiter{free: slots}
}

// acquire waits for a slot. It gives up, leaving the queue, when ctx ends.
func (l *limiter) acquire(ctx context.Context) error {
	l.mu.Lock()
	if l.free > 0 && l.waiters.Len() == 0 {
		l.free--
		l.mu.Unlock()
		return nil
	}
	ready := make(chan struct{})
	e := l.waiters.PushBack(ready)
	l.mu.Unlock()

	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		select {
		case <-ready:
			// Granted while giving up: pass the slot on.
			l.mu.Unlock()
			l.release()
		default:
			l.waiters.Remove(e)
			l.mu.Unlock()
		}
		return ctx.Err()
	}
}

// release returns a slot, handing it straight to the longest waiter.
func (l *limiter) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if front := l.waiters.Front(); front != nil {
		close(l.waiters.Remove(front).(chan struct{}))
		return
	}
	l.free++
}
