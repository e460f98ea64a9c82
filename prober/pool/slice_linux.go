package pool

import (
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// workerSlice is the CPU time slice a worker's threads ask the kernel for:
// the shortest it grants. Since Linux 6.12 (EEVDF) a thread with a shorter
// slice than the one running preempts it when it wakes, instead of waiting
// for the running thread's slice (1.4 ms here, and 3 ms or more under
// load) to end. A worker's threads wake, send or stamp a chunk, and sleep
// again within microseconds, so they give back as much as they take, while
// the server or anything else sharing the CPU no longer delays the instant
// a request goes out or a chunk is timed (BENCHMARKS.md, "Schedule lag in
// bench itself"). Older kernels keep their default slice; nothing else
// changes.
const workerSlice = 100 * time.Microsecond

// shortenSlices gives every thread of this process workerSlice, and returns
// how many it gave it to. Threads the runtime starts later inherit it from
// the thread that starts them; a thread started while the list is walked
// may be missed, so the walk is repeated until it finds no new thread.
func shortenSlices() int {
	done := map[int]bool{}
	for range 3 {
		entries, err := os.ReadDir("/proc/self/task")
		if err != nil {
			break
		}
		found := false
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			found, done[tid] = true, true
			attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Runtime: uint64(workerSlice)}
			if unix.SchedSetAttr(tid, &attr, 0) != nil {
				return 0
			}
		}
		if !found {
			break
		}
	}
	return len(done)
}
