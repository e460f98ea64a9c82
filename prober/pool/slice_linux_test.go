package pool

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Every thread of the process gets the short slice, and threads started
// after inherit it. Kernels before 6.12 accept the slice but keep their own.
func TestShortenSlices(t *testing.T) {
	if n := shortenSlices(); n == 0 {
		t.Fatal("no thread's slice was shortened")
	}
	attr, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if attr.Runtime != uint64(workerSlice) {
		t.Skipf("this kernel keeps its own slice (%d ns): custom slices are Linux 6.12's", attr.Runtime)
	}
	// A locked, blocked goroutine makes the runtime start another thread.
	release := make(chan struct{})
	defer close(release)
	for range 4 {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			<-release
		}()
	}
	runtime.Gosched()
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		sched, err := os.ReadFile("/proc/self/task/" + e.Name() + "/sched")
		if err != nil {
			continue // the thread has exited
		}
		for line := range strings.Lines(string(sched)) {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "se.slice" {
				if got, _ := strconv.Atoi(strings.TrimSpace(value)); got != int(workerSlice) {
					t.Errorf("thread %s has a slice of %d ns, want %d", e.Name(), got, workerSlice)
				}
			}
		}
	}
}
