//go:build !linux

package prober

import (
	"context"
	"time"
)

// sleepUntil waits for the instant at, and reports false if ctx ended first.
// Elsewhere the runtime waits for its timers with nanosecond timeouts
// (kqueue, Windows high-resolution timers).
func sleepUntil(ctx context.Context, at time.Time) bool {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
