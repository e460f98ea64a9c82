package loadbench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

var (
	rates   = flag.String("rates", "50,100,200,400,700,1000", "Poisson rates to step through, requests/s")
	step    = flag.Duration("step", 15*time.Second, "measured time per rate")
	warmup  = flag.Duration("warmup", 2*time.Second, "time each rate runs before it is measured (connections, buffers, GC pacing)")
	simTTFT = flag.String("sim.ttft", "20ms", "the simulator's time to first token")
	simITL  = flag.String("sim.itl", "1ms", "the simulator's inter-token latency")
	tokens  = flag.Int("tokens", 64, "output tokens per request (pinned with ignore_eos)")
	lead    = flag.Duration("lead", 0, "emulate a scheduler that hands each request to the executor this long before its send time, and lets the worker's Client.Do wait for the time itself: every scheduled time is moved this much later")
	execute = flag.String("exec", "pool", "what runs the requests: pool (worker processes, as the daemon does), inprocess (a prober.Client in this process) or nop (nothing: the scheduler's own lag)")
)

// TestRateSweep steps a seeded Poisson probe through -rates against the
// simulator, through the real worker pool, and prints per rate: the achieved
// rate, errors, the schedule lag's p50/p99/max, the CPU used by the workers,
// by this process (the scheduler and pool parent) and by the simulator, the
// workers' CPU per 1,000 streamed chunks, and the highest Go scheduling
// latency p99 a worker reported. Each rate gets a fresh pool and runs
// -warmup unmeasured first.
func TestRateSweep(t *testing.T) {
	enabled(t)
	pinSelf(t, "0")
	if *profile != "" {
		f, err := os.Create(filepath.Join(*profile, "parent.pprof"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	sim := startSimulator(t, "--sim.ttft="+*simTTFT, "--sim.itl="+*simITL, "--sim.max-concurrency=0")
	fmt.Printf("\nPoisson sweep: %d tokens/request, simulator ttft=%s itl=%s, pinned=%v, exec=%s, lead=%s, workers=%d, %s measured after %s warm-up\n\n",
		*tokens, *simTTFT, *simITL, *pin, *execute, *lead, numWorkers(), *step, *warmup)
	tb := &table{w: os.Stdout}
	tb.row("rate/s", "achieved/s", "requests", "errors", "lag p50 µs", "lag p99 µs", "lag max µs",
		"worker CPU", "parent CPU", "sim CPU", "worker CPU ms/1k chunks", "worker sched p99 µs", "other CPU", "steal")
	for _, r := range strings.Split(*rates, ",") {
		rate, err := strconv.ParseFloat(r, 64)
		if err != nil {
			t.Fatal(err)
		}
		res := runRate(t, sim, rate)
		tb.row(r, fmt.Sprintf("%.1f", res.achieved), res.n, res.errs,
			µs(quantile(res.lags, 0.5)), µs(quantile(res.lags, 0.99)), µs(res.lags[len(res.lags)-1]),
			cores(res.workerCPU, *step), cores(res.parentCPU, *step), cores(res.simCPU, *step),
			perChunks(res.workerCPU, res.chunks), µs(res.schedP99),
			cores(res.otherCPU, *step), cores(res.steal, *step))
	}
	tb.flush()
}

func perChunks(cpu time.Duration, chunks int) string {
	if chunks == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", cpu.Seconds()*1e3/float64(chunks)*1000)
}

func cores(d, over time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()/over.Seconds()) }

type rateResult struct {
	achieved                     float64         // requests sent in the window per second
	n, errs, chunks              int             // of the requests scheduled in the window
	lags                         []time.Duration // sorted
	workerCPU, parentCPU, simCPU time.Duration   // over the window
	schedP99                     time.Duration
	// otherCPU is what the rest of the machine used meanwhile: other
	// processes and the kernel's own threads. steal is what the hypervisor
	// took. Either makes the figures of that step suspect.
	otherCPU, steal time.Duration
}

// runRate runs one rate for warmup+step and measures the step.
func runRate(t *testing.T, sim *simProcess, rate float64) rateResult {
	t.Helper()
	yml := fmt.Sprintf(`global: {seed: 1}
targets: {sim: {url: %q, model: inferprobe-simulator, timeout: 60s}}
probes:
  p:
    target: sim
    arrival: {pattern: poisson, rate: %g}
    dataset: {synthetic: {input_tokens: {mean: 128}, output_tokens: {mean: %d}}}
    params: {ignore_eos: true}
`, sim.url, rate, *tokens)
	cfg, err := scenarios.Parse([]byte(yml), "loadbench.yml")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := prober.NewTarget("sim", cfg.Targets["sim"])
	if err != nil {
		t.Fatal(err)
	}
	probe, err := prober.NewProbe("p", cfg.Probes["p"], tg, cfg.Global.Seed, record.Shard{})
	if err != nil {
		t.Fatal(err)
	}
	var exec prober.Executor
	utilisation := func() time.Duration { return 0 }
	switch *execute {
	case "pool":
		p := newPool(t, numWorkers())
		defer p.Close()
		exec = p
		utilisation = func() time.Duration { _, lat := p.Utilisation(); return lat }
	case "inprocess":
		exec = prober.NewClient()
	case "nop":
		exec = nopExec{}
	default:
		t.Fatalf("-exec=%s: want pool, inprocess or nop", *execute)
	}
	if *lead > 0 {
		exec = early{exec, *lead}
	}
	pids := workerPIDs()

	rec := &collect{}
	start := time.Now()
	from, to := start.Add(*warmup), start.Add(*warmup+*step)
	ctx, cancel := context.WithDeadline(context.Background(), to)
	defer cancel()

	var res rateResult
	var sampling sync.WaitGroup
	sampling.Go(func() {
		time.Sleep(time.Until(from))
		w0, p0, s0 := sumCPU(pids), selfCPU(), cpuTime(sim.pid())
		m0, st0 := machineCPU()
		every(ctx, 500*time.Millisecond, func() {
			res.schedP99 = max(res.schedP99, utilisation())
		})
		res.workerCPU, res.parentCPU, res.simCPU = sumCPU(pids)-w0, selfCPU()-p0, cpuTime(sim.pid())-s0
		m1, st1 := machineCPU()
		res.otherCPU = max(0, m1-m0-res.workerCPU-res.parentCPU-res.simCPU)
		res.steal = st1 - st0
	})
	probe.Run(ctx, context.Background(), exec, rec)
	sampling.Wait()

	reasons := map[record.Reason]int{}
	sent := 0
	for _, r := range rec.records {
		if !r.Sent.Before(from) && r.Sent.Before(to) {
			sent++
		}
		if r.Scheduled.Before(from) || !r.Scheduled.Before(to) {
			continue
		}
		res.n++
		res.lags = append(res.lags, r.Lag())
		res.chunks += len(r.Chunks)
		if r.Outcome != record.OutcomeOK {
			res.errs++
			reasons[r.Reason]++
		}
	}
	if res.n == 0 {
		t.Fatalf("rate %g: no request in the measured window", rate)
	}
	if res.errs > 0 {
		t.Logf("rate %g: errors %v", rate, reasons)
	}
	slices.Sort(res.lags)
	res.achieved = float64(sent) / step.Seconds()
	return res
}

// nopExec sends nothing: its record's send time is when its goroutine ran.
type nopExec struct{}

func (nopExec) Do(_ context.Context, _ *prober.Target, req *prober.Request) *record.Record {
	return &record.Record{Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(), FirstOutput: -1}
}

// early moves every request's scheduled time lead later before passing it on,
// so that it reaches the executor lead early, as from a scheduler that
// dispatches ahead.
type early struct {
	prober.Executor
	lead time.Duration
}

func (e early) Do(ctx context.Context, t *prober.Target, req *prober.Request) *record.Record {
	req.Scheduled = req.Scheduled.Add(e.lead)
	return e.Executor.Do(ctx, t, req)
}

// collect keeps every record.
type collect struct {
	mu      sync.Mutex
	records []*record.Record
}

func (c *collect) Started() {}

func (c *collect) Observe(r *record.Record) {
	c.mu.Lock()
	c.records = append(c.records, r)
	c.mu.Unlock()
}
