package main

import (
	"errors"
	"fmt"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/scenarios"
)

// prefillFlags are AIPerf's prefill concurrency options, the run's and the
// warmup's: arrival.max_prefill_concurrency.
type prefillFlags struct {
	n, warmupN             int
	rampOver, warmupRampOv float64
	set                    map[string]*bool
}

func addPrefillFlags(f *benchFlags, flag func(name, help string) *kingpin.FlagClause) *prefillFlags {
	p := &prefillFlags{set: f.set}
	flag("prefill-concurrency", "The most requests waiting for their first token at once: a request holds a slot from its send until its first token (or its end without one), and one due while all are held waits, as the --concurrency cap's waits do. Needs --streaming; at most --concurrency.").SetValue(whole("prefill-concurrency", &p.n, &scenarios.ConcurrencyBound))
	flag("prefill-concurrency-ramp-duration", "Seconds over which --prefill-concurrency rises from 1, one slot at a time.").Float64Var(&p.rampOver)
	flag("warmup-prefill-concurrency", "The warmup's --prefill-concurrency; default --prefill-concurrency.").SetValue(whole("warmup-prefill-concurrency", &p.warmupN, &scenarios.ConcurrencyBound))
	flag("warmup-prefill-concurrency-ramp-duration", "The warmup's --prefill-concurrency-ramp-duration; default --prefill-concurrency-ramp-duration.").Float64Var(&p.warmupRampOv)
	return p
}

func (p *prefillFlags) given(name string) bool { return *p.set[name] }

// apply caps a, the run's arrival (warmup false) or the warmup's, as AIPerf
// builds its phases: the warmup's options, else the run's. b, when set,
// records the fields for the run's scenario.
func (p *prefillFlags) apply(f *benchFlags, b *benchScenario, a *scenarios.Arrival, warmup bool) error {
	prefix, n, set, ramp, rampSet := "", p.n, p.given("prefill-concurrency"), p.rampOver, p.given("prefill-concurrency-ramp-duration")
	if warmup {
		if p.given("warmup-prefill-concurrency") {
			prefix, n, set = "warmup-", p.warmupN, true
		}
		if p.given("warmup-prefill-concurrency-ramp-duration") {
			ramp, rampSet = p.warmupRampOv, true
		}
	}
	if !set {
		return nil // AIPerf takes a ramp without a cap, and it ramps nothing
	}
	flag := "--" + prefix + "prefill-concurrency"
	inFlight := a.MaxConcurrency
	if a.Pattern == scenarios.ArrivalConcurrency {
		inFlight = max(a.Concurrency, int(a.RampTo))
	}
	switch {
	case n < 1:
		return fmt.Errorf("%s %d: must be ≥ 1", flag, n)
	case inFlight > 0 && n > inFlight:
		phase := "profiling"
		if warmup {
			phase = "warmup"
		}
		//lint:ignore ST1005 AIPerf's own words, for scripts that match them
		return fmt.Errorf("Phase '%s': prefill_concurrency must be <= concurrency", phase)
	case !f.streaming:
		return errors.New(flag + " caps the requests waiting for their first token, which only a stream shows: add --streaming (AIPerf: prefill_concurrency requires endpoint.streaming=true)")
	}
	a.MaxPrefillConcurrency = n
	if rampSet {
		over, err := seconds("--"+prefix+"prefill-concurrency-ramp-duration", ramp)
		if err != nil {
			return err
		}
		a.MaxPrefillConcurrencyRampOver = scenarios.Duration(over)
	}
	if b != nil {
		const path = benchProbe + ".arrival"
		b.set(path+".max_prefill_concurrency", "--prefill-concurrency")
		if rampSet {
			b.set(path+".max_prefill_concurrency_ramp_over", "--prefill-concurrency-ramp-duration")
		}
	}
	return nil
}
