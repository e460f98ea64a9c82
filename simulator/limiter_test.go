package simulator

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// queued reports how many acquirers wait.
func (l *limiter) queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiters.Len()
}

// enqueue starts an acquire and returns once it waits in the queue.
func enqueue(t *testing.T, l *limiter, ctx context.Context, got chan<- int, id int) <-chan error {
	t.Helper()
	before := l.queued()
	res := make(chan error, 1)
	go func() {
		err := l.acquire(ctx)
		if err == nil {
			got <- id
		}
		res <- err
	}()
	for l.queued() == before {
		// Spin until the goroutine is in the queue; this is an ordering
		// barrier, not a timing assumption.
		runtime.Gosched()
	}
	return res
}

func TestLimiterFIFO(t *testing.T) {
	l := newLimiter(2)
	for range 2 {
		if err := l.acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan int, 4)
	var results []<-chan error
	for id := range 4 {
		results = append(results, enqueue(t, l, context.Background(), got, id))
	}
	for want := range 4 {
		l.release()
		if id := waitFor(t, got, "a waiter to be admitted"); id != want {
			t.Fatalf("admitted waiter %d, want %d (arrival order)", id, want)
		}
		if err := waitFor(t, results[want], "acquire to return"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLimiterCancelWhileQueued(t *testing.T) {
	l := newLimiter(1)
	if err := l.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 2)
	ctx, cancel := context.WithCancel(context.Background())
	leaver := enqueue(t, l, ctx, got, 0)
	stayer := enqueue(t, l, context.Background(), got, 1)

	cancel()
	if err := waitFor(t, leaver, "the cancelled waiter"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled acquire returned %v", err)
	}
	if n := l.queued(); n != 1 {
		t.Fatalf("%d waiting after one left, want 1", n)
	}
	l.release()
	if id := waitFor(t, got, "the remaining waiter"); id != 1 {
		t.Fatalf("admitted %d, want 1", id)
	}
	if err := waitFor(t, stayer, "acquire to return"); err != nil {
		t.Fatal(err)
	}
	// Slots are conserved: the one in use comes back, and no more.
	l.release()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.free != 1 {
		t.Errorf("free slots %d, want 1", l.free)
	}
}
