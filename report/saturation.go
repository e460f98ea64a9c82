package report

import (
	"fmt"
	"time"
)

// Thresholds past which the client, not the server, may be what the numbers
// describe: judged live over the last minute (package collector) and over
// a finite run's report alike. They are documented in docs/metrics.md
// (Client saturation).
const (
	// A p99 schedule lag of 10 ms is 1 % of a 1 s TTFT and well above what
	// an unloaded scheduler shows (a few hundred µs).
	saturatedLagP99 = 10 * time.Millisecond
	// Below this many sends in the window a p99 is one unlucky request.
	saturatedLagMinSamples = 50
	// A run too short for the p99 is judged by its median lag, from this many
	// requests: a client that keeps up sends at most 1 % of requests
	// saturatedLagP99 late, so half of 3 or more being that late by chance
	// has a probability below 3e-4, falling fast with more requests.
	shortRunLagMinSamples = 3
	// A worker using 90 % of a core has no slack to stamp chunks on time.
	saturatedWorkerCPU = 0.9
	// Goroutines waiting this long to run take their timestamps late.
	saturatedSchedLatencyP99 = 10 * time.Millisecond
)

// SaturationReason applies the documented thresholds to a schedule-lag p99
// over n requests and to the busiest worker's CPU use and scheduling-latency
// p99. It says why the client was the bottleneck, or "" if it was not.
func SaturationReason(lagP99 time.Duration, n int, workerCPU float64, schedP99 time.Duration) string {
	switch {
	case n >= saturatedLagMinSamples && lagP99 >= saturatedLagP99:
		return fmt.Sprintf("schedule lag p99 %v over %d requests >= %v", lagP99, n, saturatedLagP99)
	case workerCPU >= saturatedWorkerCPU:
		return fmt.Sprintf("a worker process used %.2f CPU cores >= %.1f", workerCPU, saturatedWorkerCPU)
	case schedP99 >= saturatedSchedLatencyP99:
		return fmt.Sprintf("Go scheduling latency p99 %v in a worker >= %v", schedP99, saturatedSchedLatencyP99)
	}
	return ""
}

// PausedReason says why a run whose n requests overlapped a pause of the
// client (a process of it that did not run for longer than the watchdog's
// threshold) is client-bound, or "" for none.
func PausedReason(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("a client process did not run (stopped, CPU-throttled or paused) while %d requests were due or in flight; they are left out of the statistics", n)
}

// ShortRunLagReason judges a finite run with fewer than 50 lag samples, too
// few for SaturationReason's p99: the client was the bottleneck when the
// median lag reached saturatedLagP99. It says why, or "" if it was not.
func ShortRunLagReason(lagP50 time.Duration, n int) string {
	if n >= shortRunLagMinSamples && n < saturatedLagMinSamples && lagP50 >= saturatedLagP99 {
		return fmt.Sprintf("schedule lag p50 %v over a short run of %d requests >= %v", lagP50, n, saturatedLagP99)
	}
	return ""
}
