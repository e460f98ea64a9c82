package prober

import (
	"context"
	"sync"
	"testing"
	"time"
)

// sleepUntil must never return early, alone or with more waits at once than
// the idle timerfds kept, and must keep working after.
func TestSleepUntilNeverEarly(t *testing.T) {
	const d = 300 * time.Microsecond
	var wg sync.WaitGroup
	early := make(chan time.Duration, 4*maxIdleTimerFiles)
	for range 4 * maxIdleTimerFiles {
		wg.Go(func() {
			start := time.Now()
			if !sleepUntil(context.Background(), start.Add(d)) {
				t.Error("sleepUntil reported a cancellation that did not happen")
			}
			if got := time.Since(start); got < d {
				early <- got
			}
		})
	}
	wg.Wait()
	close(early)
	for got := range early {
		t.Errorf("sleepUntil %s ahead returned after %s", d, got)
	}
	timerfds.mu.Lock()
	idle := len(timerfds.free)
	timerfds.mu.Unlock()
	if idle == 0 || idle > maxIdleTimerFiles {
		t.Errorf("%d idle timerfds kept, want 1 to %d", idle, maxIdleTimerFiles)
	}
	start := time.Now()
	sleepUntil(context.Background(), start.Add(d))
	if got := time.Since(start); got < d {
		t.Errorf("sleepUntil %s ahead on a reused timerfd returned after %s", d, got)
	}
}

// A cancelled wait ends at once, and the armed timerfd it leaves is not
// given to the next wait, which would then end early.
func TestSleepUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan bool)
	go func() { ended <- sleepUntil(ctx, time.Now().Add(time.Minute)) }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case ok := <-ended:
		if ok {
			t.Error("a cancelled wait reported that its time came")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled wait did not end")
	}
	if sleepUntil(ctx, time.Now().Add(time.Millisecond)) {
		t.Error("a wait on an ended context reported that its time came")
	}
	for range 2 * maxIdleTimerFiles {
		const d = 2 * time.Millisecond
		start := time.Now()
		sleepUntil(context.Background(), start.Add(d))
		if got := time.Since(start); got < d {
			t.Fatalf("a wait after a cancelled one returned after %s of %s", got, d)
		}
	}
}
