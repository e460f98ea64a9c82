package loadbench

import (
	"context"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
)

// BenchmarkPoolOverhead is what a request costs end to end through the worker
// pool against in this process, one request at a time against a simulator
// process that answers at once with one token: the difference in ns/op is
// the pool's added latency per request (the credit down the pipe, the
// record back, four goroutine hand-offs), and cpu-µs/op adds this process's
// CPU time to the workers' (not the simulator's).
func BenchmarkPoolOverhead(b *testing.B) {
	sim := startSimulator(b, "--sim.ttft=0s", "--sim.itl=0s", "--sim.max-concurrency=0")
	tg := target(b, sim.url)
	req, err := prober.NewRequest(tg, dataset.Prompt{Text: "one token please", InputTokens: 3, OutputTokens: 1},
		map[string]any{"ignore_eos": true})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		exec func(b *testing.B) (prober.Executor, func())
	}{
		{"inprocess", func(*testing.B) (prober.Executor, func()) { return prober.NewClient(), func() {} }},
		{"pool", func(b *testing.B) (prober.Executor, func()) {
			p := newPool(b, 1)
			return p, func() { _ = p.Close() }
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			exec, done := bc.exec(b)
			defer done()
			do := func() {
				r := *req
				r.Scheduled = time.Now()
				if rec := exec.Do(context.Background(), tg, &r); rec.Outcome != record.OutcomeOK || len(rec.Chunks) != 1 {
					b.Fatalf("request failed: %s %s %s", rec.Outcome, rec.Reason, rec.Err)
				}
			}
			for range 100 { // connections, buffers, the worker's first target
				do()
			}
			pids := workerPIDs()
			cpu0 := selfCPU() + sumCPU(pids)
			b.ResetTimer()
			for b.Loop() {
				do()
			}
			b.StopTimer()
			b.ReportMetric(float64((selfCPU()+sumCPU(pids)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
