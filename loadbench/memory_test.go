package loadbench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
)

var (
	streamsFrom = flag.Int("streams.from", 100, "in-flight streams at the first memory reading")
	streamsTo   = flag.Int("streams.to", 1000, "in-flight streams at the second memory reading")
	settle      = flag.Duration("settle", 3*time.Second, "time the streams run before memory is read")
)

// TestStreamMemory measures the memory one in-flight stream costs the client:
// it holds -streams.from, then -streams.to streams open against a simulator
// that sends a token a second, and divides the growth between the two
// readings by the streams added, so that fixed costs (the binary, the
// runtime, the first connection) drop out. Once through the worker pool (one
// worker: the resident set of its process) and once in this process with a
// prober.Client (the Go heap and goroutine stacks after a GC, which the
// resident set of a worker holds plus garbage not yet collected).
func TestStreamMemory(t *testing.T) {
	enabled(t)
	sim := startSimulator(t, "--sim.ttft=10ms", "--sim.itl=1s", "--sim.max-concurrency=0")
	tg := target(t, sim.url)
	added := *streamsTo - *streamsFrom

	fmt.Printf("\nMemory per in-flight stream: %d then %d streams of 64 tokens, 1 token/s, read after %s\n\n", *streamsFrom, *streamsTo, *settle)
	tb := &table{w: os.Stdout}
	tb.row("client", "measure", "idle", fmt.Sprintf("%d streams", *streamsFrom), fmt.Sprintf("%d streams", *streamsTo), "per stream")

	// Through the pool: the worker's resident set.
	p := newPool(t, 1)
	pid := workerPIDs()[0]
	var readings [3]int64
	readings[0] = rss(pid)
	holdStreams(t, p, tg, func(i int) { readings[i] = rss(pid) })
	_ = p.Close()
	tb.row("worker process", "RSS", kib(readings[0]), kib(readings[1]), kib(readings[2]), kib((readings[2]-readings[1])/int64(added)))

	// In this process: heap and stacks after a GC, and goroutines.
	type mem struct{ heap, stack, goroutines int64 }
	read := func() mem {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return mem{int64(ms.HeapInuse), int64(ms.StackInuse), int64(runtime.NumGoroutine())}
	}
	var m [3]mem
	c := prober.NewClient()
	m[0] = read()
	holdStreams(t, c, tg, func(i int) {
		m[i] = read()
		if i == 2 && *profile != "" {
			writeHeapProfile(t, filepath.Join(*profile, "streams-heap.pprof"))
		}
	})
	tb.row("prober.Client", "Go heap in use", kib(m[0].heap), kib(m[1].heap), kib(m[2].heap), kib((m[2].heap-m[1].heap)/int64(added)))
	tb.row("prober.Client", "goroutine stacks", kib(m[0].stack), kib(m[1].stack), kib(m[2].stack), kib((m[2].stack-m[1].stack)/int64(added)))
	tb.row("prober.Client", "goroutines", m[0].goroutines, m[1].goroutines, m[2].goroutines,
		fmt.Sprintf("%.2f", float64(m[2].goroutines-m[1].goroutines)/float64(added)))

	// The floor net/http sets: a bare reader's streams in this process.
	// Measured last, its stacks reuse the spans prober.Client's freed, so
	// its growth errs low.
	b := bareExec{bareClient(), sim.url + "/chat/completions"}
	m[0] = read()
	holdStreams(t, b, tg, func(i int) { m[i] = read() })
	tb.row("bare net/http reader", "Go heap in use", kib(m[0].heap), kib(m[1].heap), kib(m[2].heap), kib((m[2].heap-m[1].heap)/int64(added)))
	tb.row("bare net/http reader", "goroutine stacks", kib(m[0].stack), kib(m[1].stack), kib(m[2].stack), kib((m[2].stack-m[1].stack)/int64(added)))
	tb.flush()
}

func writeHeapProfile(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
}

func kib(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/1024) }

// holdStreams opens -streams.from streams through exec, calls read(1) once
// they have run -settle, opens more up to -streams.to, calls read(2), then
// cancels them all and checks that none had ended early.
func holdStreams(t *testing.T, exec prober.Executor, tg *prober.Target, read func(i int)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var early atomic.Int64 // streams that ended before they were cancelled
	var stopped atomic.Bool
	open := func(from, to int) {
		for i := from; i < to; i++ {
			req, err := prober.NewRequest(tg, dataset.Prompt{Text: "hold this stream open", InputTokens: 4, OutputTokens: 64},
				map[string]any{"ignore_eos": true})
			if err != nil {
				t.Fatal(err)
			}
			req.Seq, req.Scheduled = uint64(i), time.Now()
			wg.Go(func() {
				rec := exec.Do(ctx, tg, req)
				if !stopped.Load() {
					early.Add(1)
					t.Logf("stream %d ended early: %s %s %s", i, rec.Outcome, rec.Reason, rec.Err)
				}
			})
		}
	}
	open(0, *streamsFrom)
	time.Sleep(*settle)
	read(1)
	open(*streamsFrom, *streamsTo)
	time.Sleep(*settle)
	read(2)
	stopped.Store(true)
	cancel()
	wg.Wait()
	if n := early.Load(); n > 0 {
		t.Fatalf("%d streams ended before the readings were taken", n)
	}
}
