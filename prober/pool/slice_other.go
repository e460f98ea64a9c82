//go:build !linux

package pool

// shortenSlices: a thread's time slice is Linux's (slice_linux.go).
func shortenSlices() int { return 0 }
