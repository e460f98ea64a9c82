package backtest

import (
	"flag"
	"iter"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

var (
	generate  = flag.String("generate", "", "write generated records to this CSV file (TestGenerate)")
	days      = flag.Int("days", 28, "days of records TestGenerate writes")
	perSecond = flag.Int("per-second", 1, "probes a second TestGenerate writes")
)

// TestGenerate writes a records file for measuring the command, e.g.
//
//	go test -run TestGenerate -generate /tmp/4w.csv -days 28 -per-second 1
func TestGenerate(t *testing.T) {
	if *generate == "" {
		t.Skip("no -generate file")
	}
	f, err := os.Create(*generate)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(f, synthetic(hour0, time.Duration(*days)*24*time.Hour, *perSecond, 1)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// synthetic yields perSecond probes a second for d from start, to one
// target: log-normal timings, 0.2 % errors, and in each day from start an
// incident from 2h to 3h in which TTFT triples and 10 % fail.
func synthetic(start time.Time, d time.Duration, perSecond int, seed uint64) iter.Seq[Probe] {
	return func(yield func(Probe) bool) {
		rng := rand.New(rand.NewPCG(seed, seed))
		logNormal := func(median, sigma float64) time.Duration {
			return time.Duration(median * math.Exp(sigma*rng.NormFloat64()) * float64(time.Second))
		}
		step := time.Second / time.Duration(perSecond)
		for off := time.Duration(0); off < d; off += step {
			incident := off%(24*time.Hour) >= 2*time.Hour && off%(24*time.Hour) < 3*time.Hour
			p := Probe{Time: start.Add(off), Target: "vllm-a", Model: "llama-3-8b", OK: true}
			p.TTFT = logNormal(0.2, 0.3)
			if incident {
				p.TTFT *= 3
			}
			p.ITL = logNormal(0.02, 0.2)
			p.Latency = p.TTFT + 200*p.ITL
			errorRate := 0.002
			if incident {
				errorRate = 0.1
			}
			if rng.Float64() < errorRate {
				p.OK, p.ITL = false, 0
			}
			p.Good = p.OK && p.TTFT < time.Second && p.ITL < 50*time.Millisecond
			if !yield(p) {
				return
			}
		}
	}
}
