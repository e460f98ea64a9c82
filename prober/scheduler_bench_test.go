package prober

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// nopExec answers every request at once, and stops the run after n.
type nopExec struct {
	n    int64
	done atomic.Int64
	stop context.CancelFunc
}

func (e *nopExec) Do(_ context.Context, _ *Target, req *Request) *record.Record {
	if e.done.Add(1) == e.n {
		e.stop()
	}
	return &record.Record{Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(), FirstOutput: -1}
}

type nopRecorder struct{}

func (nopRecorder) Started()               {}
func (nopRecorder) Observe(*record.Record) {}

// BenchmarkSchedulerDispatch measures the scheduler's own cost per request,
// with every request already due and an executor that answers at once: drawing
// the send time and the prompt (default lengths: 128 words in, 64 out),
// encoding the body, folding the digest, and handing the request to a
// goroutine. Its inverse bounds the rate one scheduler can sustain at all.
// The 1-token case leaves out most of the prompt's cost, to show the loop's.
func BenchmarkSchedulerDispatch(b *testing.B) {
	const oneToken = ", dataset: {synthetic: {input_tokens: {mean: 1}, output_tokens: {mean: 1}}}"
	for _, bc := range []struct{ name, probe string }{
		{"open", "arrival: {pattern: constant, rate: 1}"},
		{"open-1-token", "arrival: {pattern: constant, rate: 1}" + oneToken},
		{"open-capped", "arrival: {pattern: constant, rate: 1, max_concurrency: 100000}"},
		{"closed-64", "arrival: {pattern: concurrency, concurrency: 64}"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newDueProbe(b, "targets: {t: {url: http://127.0.0.1:9/v1, model: m}}\nprobes: {a: {target: t, "+bc.probe+"}}\n")
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			exec := &nopExec{n: int64(b.N), stop: stop}
			b.ReportAllocs()
			b.ResetTimer()
			p.Run(ctx, context.Background(), exec, nopRecorder{})
		})
	}
}

// newDueProbe is newProbe with every open-loop request due at once: a rate
// far past scenarios.RateBound, set after validation, which refuses it.
func newDueProbe(b *testing.B, yml string) *Probe {
	b.Helper()
	cfg, err := scenarios.Parse([]byte(yml), "s.yml")
	if err != nil {
		b.Fatal(err)
	}
	tg, err := NewTarget("t", cfg.Targets["t"])
	if err != nil {
		b.Fatal(err)
	}
	if a := &cfg.Probes["a"].Arrival; a.Pattern != scenarios.ArrivalConcurrency {
		a.Rate = 1e9
	}
	p, err := NewProbe("a", cfg.Probes["a"], tg, cfg.Global.Seed, record.Shard{})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// lagRecorder keeps every request's schedule lag.
type lagRecorder struct {
	mu   sync.Mutex
	lags []time.Duration
}

func (r *lagRecorder) Started() {}

func (r *lagRecorder) Observe(rec *record.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lags = append(r.lags, rec.Lag())
}

// BenchmarkScheduleLag runs Poisson arrivals in real time against an executor
// that answers at once and reports the schedule lag's p50 and p99 (µs), as
// the executor's goroutine sees it: the scheduler's share of the lag that
// the end-to-end benchmark against the simulator measures. b.N requests take
// b.N/rate seconds; use -benchtime=Nx to choose N.
func BenchmarkScheduleLag(b *testing.B) {
	for _, rate := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			p := newProbe(b, fmt.Sprintf("targets: {t: {url: http://127.0.0.1:9/v1, model: m}}\nprobes: {a: {target: t, arrival: {rate: %d}}}\n", rate), record.Shard{})
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			rec := &lagRecorder{}
			b.ResetTimer()
			p.Run(ctx, context.Background(), &nopExec{n: int64(b.N), stop: stop}, rec)
			b.StopTimer()
			slices.Sort(rec.lags)
			q := func(f float64) float64 { return float64(rec.lags[int(f*float64(len(rec.lags)-1))]) / 1e3 }
			b.ReportMetric(q(0.5), "lag-p50-µs")
			b.ReportMetric(q(0.99), "lag-p99-µs")
		})
	}
}
