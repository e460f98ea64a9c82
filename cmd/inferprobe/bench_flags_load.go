package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/scenarios"
)

// rateRampStep is AIPerf's rate-ramp update interval
// (AIPERF_TIMING_RATE_RAMP_UPDATE_INTERVAL, 0.1 s): its ramp starts at the
// target rate times this over the ramp's duration.
const rateRampStep = 100 * time.Millisecond

// defaultGracePeriod is AIPerf's --benchmark-grace-period.
const defaultGracePeriod = 30 * time.Second

// loadFlags are AIPerf's load-generator, warmup, cancellation and fixed
// schedule options, with AIPerf's names and meanings.
type loadFlags struct {
	warmupDuration     float64
	rateSeries         string
	gracePeriod        string
	rateRamp, concRamp float64
	cancelRate         float64
	cancelDelay        float64
	replaySpeedup      float64
	startOffset        int64
	endOffset          int64
	autoOffset         bool
	blockSize          int
	legacyMaxTokens    bool
	warmup             *warmupFlags
	set                map[string]*bool
}

// addLoadFlags adds the load flags to bench; flag registers each as
// addBenchFlags does, so f.set tells which were given.
func addLoadFlags(f *benchFlags, flag func(name, help string) *kingpin.FlagClause) *loadFlags {
	l := &loadFlags{set: f.set}
	flag("warmup-duration", "Longest the warmup may send, in seconds; with --warmup-request-count, whichever ends first.").Float64Var(&l.warmupDuration)
	flag("benchmark-grace-period", "Seconds the requests still in flight when --benchmark-duration ends may take; then they are cancelled (counted cancelled, not failed). 'inf' waits for them all. Only with --benchmark-duration; default 30.").StringVar(&l.gracePeriod)
	flag("request-rate-ramp-duration", "Seconds over which --request-rate rises linearly from rate × 0.1 s / duration (AIPerf's start) to the rate. Ramp requests are measured and reported with the rest.").Float64Var(&l.rateRamp)
	flag("request-rate-series", `A JSON file of {"time_s": S, "qps": R} points (an array, or {"points": [...]}), as AIPerf's: the rate follows the straight lines between them, updated every 0.1 s as AIPerf does, from the first point's rate until the first point, and holds the last point's rate after it; at --arrival-pattern times. Instead of --request-rate.`).StringVar(&l.rateSeries)
	flag("concurrency-ramp-duration", "Seconds over which --concurrency rises from 1, one step at a time: the closed loop's requests in flight, or with --request-rate the cap on them. Ramp requests are measured and reported with the rest.").Float64Var(&l.concRamp)
	flag("request-cancellation-rate", "Percentage (0-100) of requests the client cancels, chosen by --random-seed; counted as cancelled, not as errors.").Float64Var(&l.cancelRate)
	flag("request-cancellation-delay", "Seconds after a request was sent whole before it is cancelled; 0 hangs up at once. Needs --request-cancellation-rate.").Float64Var(&l.cancelDelay)
	flag("replay-speedup", "Divide a replayed trace's timestamps and think times by this (10 = ten times faster).").Float64Var(&l.replaySpeedup)
	flag("fixed-schedule-start-offset", "Replay only the trace entries stamped at or after this many milliseconds; that timestamp is sent at the start.").Int64Var(&l.startOffset)
	flag("fixed-schedule-end-offset", "Replay no trace entry stamped after this many milliseconds (one stamped exactly then is sent).").Int64Var(&l.endOffset)
	flag("fixed-schedule-auto-offset", "Start the replay at the trace's first timestamp (the default, as in AIPerf 0.13, unless --fixed-schedule-start-offset is given).").BoolVar(&l.autoOffset)
	flag("prompt-input-tokens-block-size", "Tokens per hash id of a trace's hash_ids (mooncake; default 512).").SetValue(whole("prompt-input-tokens-block-size", &l.blockSize, &scenarios.TokenBound))
	flag("use-legacy-max-tokens", "Send the chat output length as max_tokens instead of max_completion_tokens.").BoolVar(&l.legacyMaxTokens)
	l.warmup = addWarmupFlags(f, flag)
	return l
}

func (l *loadFlags) given(names ...string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return *l.set[n] })
}

// apply sets the fields of b's scenario that the load flags control, after
// the flags of bench_config.go set theirs.
func (l *loadFlags) apply(f *benchFlags, b *benchScenario) error {
	p := b.cfg.Probes["bench"]
	t := b.cfg.Targets["bench"]
	if e, _ := scenarios.LookupEndpoint(t.Endpoint); e.MaxTokensField {
		t.MaxTokensField = scenarios.MaxCompletionTokens
		if l.legacyMaxTokens {
			t.MaxTokensField = scenarios.MaxTokens
		}
		b.set(benchTarget+".max_tokens_field", "--use-legacy-max-tokens")
	}
	if err := l.arrival(f, b, &p.Arrival); err != nil {
		return err
	}
	if err := l.cancel(b, &p.Dataset); err != nil {
		return err
	}
	return l.file(f, b, p.Dataset.File)
}

func (l *loadFlags) arrival(f *benchFlags, b *benchScenario, a *scenarios.Arrival) error {
	const path = benchProbe + ".arrival"
	if err := ramp(a, l.value("request-rate-ramp-duration", l.rateRamp), l.value("concurrency-ramp-duration", l.concRamp), ""); err != nil {
		return err
	}
	switch {
	case a.RampOver > 0 && a.Pattern == scenarios.ArrivalConcurrency:
		b.set(path+".ramp_to", "--concurrency")
		b.set(path+".ramp_over", "--concurrency-ramp-duration")
	case a.RampOver > 0:
		b.set(path+".ramp_to", "--request-rate")
		b.set(path+".ramp_over", "--request-rate-ramp-duration")
	}
	if a.MaxConcurrencyRampOver > 0 {
		b.set(path+".max_concurrency_ramp_over", "--concurrency-ramp-duration")
	}
	return f.prefill.apply(f, b, a, false)
}

// value is a float flag's value when it was given; nil when not.
func (l *loadFlags) value(name string, v float64) *float64 {
	if !l.given(name) {
		return nil
	}
	return &v
}

// ramp applies AIPerf's ramps to a: a rate ramp over rateRamp seconds and a
// concurrency ramp over concRamp (nil: none); prefix is "warmup-" for the
// warmup's flags, which the errors name.
func ramp(a *scenarios.Arrival, rateRamp, concRamp *float64, prefix string) error {
	rateFlag, concFlag := "--"+prefix+"request-rate-ramp-duration", "--"+prefix+"concurrency-ramp-duration"
	if rateRamp != nil {
		if a.Pattern == scenarios.ArrivalConcurrency || a.Rate <= 0 {
			return fmt.Errorf("%s ramps --%srequest-rate; give one, or ramp a closed loop with %s", rateFlag, prefix, concFlag)
		}
		over, err := seconds(rateFlag, *rateRamp)
		if err != nil {
			return err
		}
		a.RampTo, a.RampOver = a.Rate, scenarios.Duration(over)
		a.Rate *= float64(rateRampStep) / float64(over)
	}
	if concRamp != nil {
		over, err := seconds(concFlag, *concRamp)
		if err != nil {
			return err
		}
		switch {
		case a.Pattern == scenarios.ArrivalConcurrency:
			a.RampTo, a.RampOver, a.Concurrency = float64(a.Concurrency), scenarios.Duration(over), 1
		case a.MaxConcurrency > 0: // a rate or a replay under a cap: the cap ramps
			a.MaxConcurrencyRampOver = scenarios.Duration(over)
		default:
			return fmt.Errorf("%s ramps --%sconcurrency from 1; give --%sconcurrency (with --%srequest-rate it caps the requests in flight, and the cap ramps)", concFlag, prefix, prefix, prefix)
		}
	}
	return nil
}

func (l *loadFlags) cancel(b *benchScenario, d *scenarios.Dataset) error {
	switch {
	case l.given("request-cancellation-delay") && !l.given("request-cancellation-rate"):
		return errors.New("--request-cancellation-delay needs --request-cancellation-rate (the percentage of requests to cancel)")
	case !l.given("request-cancellation-rate"):
		return nil
	case !(l.cancelRate >= 0 && l.cancelRate <= 100):
		return fmt.Errorf("--request-cancellation-rate %g: must be a percentage from 0 to 100", l.cancelRate)
	case !scenarios.DurationBound.Contains(l.cancelDelay * float64(time.Second)):
		return fmt.Errorf("--request-cancellation-delay %g: must be a number of seconds, %s", l.cancelDelay, scenarios.DurationBound.Range())
	}
	d.Cancel = &scenarios.Cancel{Rate: l.cancelRate / 100, After: scenarios.Duration(l.cancelDelay * float64(time.Second))}
	b.set(benchProbe+".dataset.cancel.rate", "--request-cancellation-rate")
	b.set(benchProbe+".dataset.cancel.after", "--request-cancellation-delay")
	return nil
}

// file sets the trace options; fl is nil without --input-file.
func (l *loadFlags) file(f *benchFlags, b *benchScenario, fl *scenarios.File) error {
	const path = benchProbe + ".dataset.file"
	trace := []string{"replay-speedup", "fixed-schedule-start-offset", "fixed-schedule-end-offset", "fixed-schedule-auto-offset",
		"prompt-input-tokens-block-size"}
	if fl == nil {
		for _, n := range trace {
			if *l.set[n] {
				return fmt.Errorf("--%s applies to a trace given with --input-file", n)
			}
		}
		return nil
	}
	if l.given("fixed-schedule-auto-offset") && l.given("fixed-schedule-start-offset") {
		return errors.New("--fixed-schedule-auto-offset cannot be used with --fixed-schedule-start-offset, which makes that timestamp the start; keep one")
	}
	if l.given("replay-speedup") {
		fl.Speedup = l.replaySpeedup
		b.set(path+".speedup", "--replay-speedup")
	}
	if l.given("fixed-schedule-start-offset") {
		fl.StartOffset = scenarios.Duration(time.Duration(l.startOffset) * time.Millisecond)
		b.set(path+".start_offset", "--fixed-schedule-start-offset")
	}
	if l.given("fixed-schedule-end-offset") {
		fl.EndOffset = scenarios.Duration(time.Duration(l.endOffset) * time.Millisecond)
		b.set(path+".end_offset", "--fixed-schedule-end-offset")
	}
	if l.given("prompt-input-tokens-block-size") {
		fl.BlockSize = l.blockSize
		b.set(path+".block_size", "--prompt-input-tokens-block-size")
	}
	return nil
}

// limits returns the run's measured limit (--request-count and
// --benchmark-duration, whichever ends first), its warmup's and its grace
// period, in AIPerf's terms.
func (l *loadFlags) limits(f *benchFlags) (limit, warmup prober.Limit, grace time.Duration, err error) {
	limit = f.limit()
	if warmup.Requests, err = l.warmup.requests(f); err != nil {
		return
	}
	if l.given("warmup-duration") {
		if warmup.Duration, err = seconds("--warmup-duration", l.warmupDuration); err != nil {
			return
		}
	}
	// finite.GraceFor uses it for a run that ends by its duration only: a
	// run that ends by count waits for every request, as AIPerf.
	grace = defaultGracePeriod
	switch {
	case l.given("benchmark-grace-period") && limit.Duration == 0:
		err = errors.New("--benchmark-grace-period applies only after a --benchmark-duration; drop it or add --benchmark-duration")
	case l.gracePeriod == "inf":
		grace = finite.NoGrace
	case l.given("benchmark-grace-period"):
		var s float64
		if s, err = strconv.ParseFloat(l.gracePeriod, 64); err != nil || !scenarios.DurationBound.Contains(s*float64(time.Second)) {
			err = fmt.Errorf("--benchmark-grace-period %q: want a number of seconds, %s, or inf", l.gracePeriod, scenarios.DurationBound.Range())
			return
		}
		grace = time.Duration(s * float64(time.Second))
	}
	return
}

// seconds converts a flag's seconds > 0 to a duration.
func seconds(flag string, s float64) (time.Duration, error) {
	if !(s > 0) {
		return 0, fmt.Errorf("%s %g: must be a number of seconds > 0", flag, s)
	}
	d := s * float64(time.Second)
	if err := scenarios.DurationBound.Check(flag, d); err != nil {
		return 0, err
	}
	return time.Duration(d), nil
}
