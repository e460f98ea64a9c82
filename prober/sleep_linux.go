package prober

import (
	"syscall"
	"time"
)

// timerGranularity is how late a runtime timer may fire. Go's runtime on Linux
// waits for its timers with epoll_wait, whose timeout is in whole
// milliseconds, so an otherwise idle process wakes up to 1 ms after a timer
// is due: too coarse for a schedule whose lag should stay well under 1 ms.
const timerGranularity = time.Millisecond

// preciseSleep sleeps for d with nanosleep, which wakes within the kernel's
// timer slack (50 µs by default). It holds its thread while it sleeps, so it
// is used only for the last stretch before a send.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	// Signals (the runtime's preemption among them) cut it short; rem is the rest.
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
