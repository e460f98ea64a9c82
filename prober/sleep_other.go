//go:build !linux

package prober

import (
	"context"
	"time"
)

// sleepUntil waits for the instant at, and reports false if ctx ended first.
// Elsewhere the runtime waits for its timers with nanosecond timeouts
// (kqueue, Windows high-resolution timers).
func sleepUntil(ctx context.Context, at time.Time) bool { return timerSleepUntil(ctx, at) }
