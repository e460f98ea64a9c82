//go:build !linux

package prober

import "time"

// timerGranularity is zero where the runtime waits for timers with
// nanosecond timeouts (kqueue, Windows high-resolution timers).
const timerGranularity = 0

func preciseSleep(d time.Duration) { time.Sleep(d) }
