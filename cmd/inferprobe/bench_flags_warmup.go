package main

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

// benchWarmup names the warmup's probe: its own random streams, so that
// warming up does not change the measured sequence or its digest.
const benchWarmup = "bench-warmup"

// warmupFlags are AIPerf's warmup phase options beyond its length: the
// warmup's own load, its sessions and its grace period.
type warmupFlags struct {
	rate               float64
	concurrency        int
	pattern            string
	grace              float64
	sessions           int
	rateRamp, concRamp float64
	set                map[string]*bool
}

// warmupLoadFlags give the warmup a load of its own.
var warmupLoadFlags = []string{"warmup-request-rate", "warmup-concurrency", "warmup-arrival-pattern",
	"warmup-request-rate-ramp-duration", "warmup-concurrency-ramp-duration",
	"warmup-prefill-concurrency", "warmup-prefill-concurrency-ramp-duration"}

func addWarmupFlags(f *benchFlags, flag func(name, help string) *kingpin.FlagClause) *warmupFlags {
	w := &warmupFlags{set: f.set}
	flag("num-warmup-sessions", "Sessions (conversations) the warmup sends, every turn counted; with --warmup-request-count, whichever ends first. Synthetic prompts only.").SetValue(whole("num-warmup-sessions", &w.sessions, &scenarios.RequestBound))
	flag("warmup-request-rate", "The warmup's request rate; default --request-rate. With it the warmup is an open loop, capped by --warmup-concurrency (or --concurrency) when given.").Float64Var(&w.rate)
	flag("warmup-concurrency", "The warmup's concurrency; default --concurrency: its requests in flight, or with a warmup rate the cap on them.").SetValue(whole("warmup-concurrency", &w.concurrency, &scenarios.ConcurrencyBound))
	flag("warmup-arrival-pattern", "The warmup's gaps at its rate: poisson, constant or gamma; default --arrival-pattern.").SetValue(&aiperfChoice{what: "arrival pattern", flag: "--warmup-arrival-pattern", choices: aiperfArrivals, target: &w.pattern})
	flag("warmup-grace-period", "Seconds the warmup requests in flight when a --warmup-duration warmup ends may take; then they are cut and profiling starts. Without it the warmup waits for them all.").Float64Var(&w.grace)
	flag("warmup-request-rate-ramp-duration", "Ramp the warmup's rate as --request-rate-ramp-duration does; default --request-rate-ramp-duration.").Float64Var(&w.rateRamp)
	flag("warmup-concurrency-ramp-duration", "Ramp the warmup's concurrency as --concurrency-ramp-duration does; default --concurrency-ramp-duration.").Float64Var(&w.concRamp)
	return w
}

func (w *warmupFlags) given(name string) bool { return *w.set[name] }

// ownLoad reports whether a warmup load option was given.
func (w *warmupFlags) ownLoad() bool { return slices.ContainsFunc(warmupLoadFlags, w.given) }

// arrival is the warmup's own load, built as AIPerf 0.13 builds its warmup
// phase: each warmup option, else the run's; a rate makes an open loop
// (capped by a concurrency when one is given), else a closed loop at the
// concurrency (1 by default). Nil when no warmup load option is given: the
// warmup then runs at the run's load, which is what AIPerf derives too —
// but for a --request-rate-series or a --user-centric-rate, which AIPerf's
// warmup does not follow (it is a closed loop at the concurrency then).
func (w *warmupFlags) arrival(f *benchFlags) (*scenarios.Arrival, error) {
	if !w.ownLoad() && !*f.set["request-rate-series"] && !f.users.given() {
		return nil, nil
	}
	if f.replays() {
		return nil, errors.New("the warmup of a replayed trace is sent at the trace's times; drop the --warmup-* load options, or give the run a load with --no-fixed-schedule")
	}
	rate, hasRate := f.requestRate, *f.set["request-rate"]
	if w.given("warmup-request-rate") {
		rate, hasRate = w.rate, true
		if err := scenarios.RateBound.Check("--warmup-request-rate", rate); err != nil || !(rate > 0) {
			return nil, fmt.Errorf("--warmup-request-rate %g: must be requests per second > 0, up to %s", rate, scenarios.RateBound.Format(scenarios.RateBound.Max))
		}
	}
	conc, hasConc := f.concurrency, *f.set["concurrency"]
	if w.given("warmup-concurrency") {
		conc, hasConc = w.concurrency, true
	}
	pattern := f.arrivalPattern
	if w.given("warmup-arrival-pattern") {
		pattern = w.pattern
	}
	a := &scenarios.Arrival{}
	switch {
	case hasRate:
		// AIPerf sends a warmup rate as poisson unless constant or gamma.
		a.Pattern, a.Rate = scenarios.ArrivalPoisson, rate
		switch pattern {
		case scenarios.ArrivalConstant:
			a.Pattern = pattern
		case scenarios.ArrivalGamma:
			if !(f.smoothness > 0) {
				return nil, errors.New("a gamma warmup takes its shape from --arrival-smoothness; give it (> 0), or choose poisson or constant")
			}
			a.Pattern, a.Smoothness = pattern, f.smoothness
		}
		if hasConc {
			a.MaxConcurrency = conc
		}
	default:
		a.Pattern, a.Concurrency = scenarios.ArrivalConcurrency, 1
		if hasConc {
			a.Concurrency = conc
		}
	}
	rateRamp := f.load.value("request-rate-ramp-duration", f.load.rateRamp)
	if w.given("warmup-request-rate-ramp-duration") {
		rateRamp = &w.rateRamp
		if !hasRate {
			return nil, errors.New("--warmup-request-rate-ramp-duration ramps the warmup's rate; give --warmup-request-rate (or --request-rate), or drop it")
		}
	} else if !hasRate {
		rateRamp = nil // AIPerf drops the run's rate ramp from a warmup without a rate
	}
	concRamp := f.load.value("concurrency-ramp-duration", f.load.concRamp)
	if w.given("warmup-concurrency-ramp-duration") {
		concRamp = &w.concRamp
	}
	if err := ramp(a, rateRamp, concRamp, "warmup-"); err != nil {
		return nil, err
	}
	if err := f.prefill.apply(f, nil, a, true); err != nil {
		return nil, err
	}
	return a, nil
}

// requests is the warmup's length in requests: --warmup-request-count and
// --num-warmup-sessions, whichever ends first (0: neither).
func (w *warmupFlags) requests(f *benchFlags) (uint64, error) {
	n := uint64(f.warmupRequests)
	if !w.given("num-warmup-sessions") {
		return n, nil
	}
	if f.inputFile != "" {
		return 0, errors.New("--num-warmup-sessions counts synthetic conversations; with --input-file give --warmup-request-count")
	}
	if w.sessions < 1 {
		return 0, errors.New("--num-warmup-sessions 0: must be ≥ 1")
	}
	s := f.workload.sessionRequests(f.seed, benchWarmup, w.sessions)
	if n > 0 {
		return min(n, s), nil
	}
	return s, nil
}

// graceFor is the warmup's grace period: nil waits for every warmup
// request. AIPerf allows one only for a warmup with a duration.
func (w *warmupFlags) graceFor(hasDuration bool) (*time.Duration, error) {
	if !w.given("warmup-grace-period") {
		return nil, nil
	}
	if !hasDuration {
		return nil, errors.New("--warmup-grace-period applies to a --warmup-duration warmup, as in AIPerf; add --warmup-duration, or drop it")
	}
	d := w.grace * float64(time.Second)
	if !(w.grace >= 0) || !scenarios.DurationBound.Contains(d) && w.grace != 0 {
		return nil, fmt.Errorf("--warmup-grace-period %g: must be a number of seconds ≥ 0, %s", w.grace, scenarios.DurationBound.Range())
	}
	g := time.Duration(d)
	return &g, nil
}

// export describes the warmup in the artifacts' configuration, as AIPerf
// writes its warmup phase; the flags were checked when the run was planned.
func (w *warmupFlags) export(f *benchFlags, limit prober.Limit, c *export.Config) {
	c.WarmupDuration = limit.Duration.Seconds()
	if w.given("num-warmup-sessions") {
		c.WarmupSessions = w.sessions
	}
	if g, _ := w.graceFor(limit.Duration > 0); g != nil {
		s := g.Seconds()
		c.WarmupGrace = &s
	}
	a, _ := w.arrival(f)
	switch {
	case a == nil:
	case a.Pattern == scenarios.ArrivalConcurrency:
		n := a.Concurrency
		if a.RampOver > 0 {
			n = int(a.RampTo)
		}
		c.WarmupLoad = &export.Load{Type: scenarios.ArrivalConcurrency, Concurrency: n, PrefillConcurrency: a.MaxPrefillConcurrency}
	default:
		rate := a.Rate
		if a.RampOver > 0 {
			rate = a.RampTo
		}
		c.WarmupLoad = &export.Load{Type: a.Pattern, Concurrency: a.MaxConcurrency, Rate: rate, PrefillConcurrency: a.MaxPrefillConcurrency}
	}
}
