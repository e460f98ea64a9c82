package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// ownedParams are request fields inferprobe sets itself, with where to set
// what they would control instead. TARGET stands for the probe's target.
var ownedParams = map[string]string{
	"model":                 "the model comes from the target; set targets.TARGET.model",
	"messages":              "prompts come from the dataset; set dataset",
	"prompt":                "prompts come from the dataset; set dataset",
	"stream":                "streaming comes from the target; set targets.TARGET.stream",
	"stream_options":        "inferprobe always asks for usage in the stream; remove it",
	"max_tokens":            "output length comes from dataset.synthetic.output_tokens; set it there",
	"max_completion_tokens": "output length comes from dataset.synthetic.output_tokens; set it there",
}

func (p *Probe) validate(l *loader, path string, targets map[string]*Target) {
	switch {
	case p.Target == "":
		l.errorf(join(path, "target"), "is required; defined targets: %s", names(targets))
	case targets[p.Target] == nil && !l.bad["targets"]: // a rejected targets section defines none
		l.errorf(join(path, "target"), "target %q is not defined; defined targets: %s", p.Target, names(targets))
	}
	if p.Dataset.Replays() {
		p.Arrival.validateReplay(l, join(path, "arrival"))
	} else {
		p.Arrival.validate(l, join(path, "arrival"))
	}
	p.Dataset.validate(l, join(path, "dataset"))
	if s := p.Dataset.Synthetic; s != nil && s.HasMedia() {
		// Chat (the default API) is the one with image and audio parts.
		if t := targets[p.Target]; t != nil && t.Endpoint != DefaultEndpoint {
			l.errorf(join(path, "dataset.synthetic"), "sends images or audio, which only endpoint %s carries; target %s is %s", DefaultEndpoint, p.Target, t.Endpoint)
		}
	}
	if s := p.Dataset.Synthetic; s != nil && s.Rankings != nil {
		if t := targets[p.Target]; t != nil {
			if e, _ := LookupEndpoint(t.Endpoint); !e.Ranks {
				l.errorf(join(path, "dataset.synthetic.rankings"), "applies only to a ranking endpoint (%s); target %s is %s", strings.Join(endpointNamesWhere(func(e EndpointType) bool { return e.Ranks }), ", "), p.Target, t.Endpoint)
			}
		}
	}
	p.validateUserCentricDataset(l, path)
	p.validatePrefill(l, join(path, "arrival"), targets)
	p.checkParams(l, join(path, "params"))
	p.SLO.validate(l, join(path, "slo"))
}

func (a *Arrival) validate(l *loader, path string) {
	written := l.under(path)
	switch a.Pattern {
	case ArrivalPoisson, ArrivalConstant, ArrivalGamma:
		a.validateOpenLoop(l, path, written)
	case ArrivalConcurrency:
		a.validateClosedLoop(l, path, written)
	case ArrivalUserCentric:
		a.validateUserCentric(l, path, written)
	default:
		// Which fields apply depends on the pattern: say only this.
		l.errorf(join(path, "pattern"), "must be %s, %s, %s, %s or %s, not %q",
			ArrivalPoisson, ArrivalConstant, ArrivalGamma, ArrivalConcurrency, ArrivalUserCentric, a.Pattern)
		return
	}
	if a.Pattern != ArrivalUserCentric && written("users") {
		l.errorf(join(path, "users"), "applies only to pattern %s; remove it, or write pattern: %[1]s", ArrivalUserCentric)
	}
	switch {
	case a.Pattern == ArrivalGamma:
		if !(a.Smoothness > 0) || math.IsInf(a.Smoothness, 1) {
			l.errorf(join(path, "smoothness"), "must be > 0, e.g. smoothness: 0.5 (below 1 burstier than poisson, 1 poisson, above 1 smoother)")
		}
	case written("smoothness"):
		l.errorf(join(path, "smoothness"), "applies only to pattern %s; remove it, or write pattern: %s", ArrivalGamma, ArrivalGamma)
	}
}

// validateOpenLoop checks the patterns that send at a rate.
func (a *Arrival) validateOpenLoop(l *loader, path string, written func(string) bool) {
	if written("concurrency") {
		l.errorf(join(path, "concurrency"), "applies only to pattern %s; write pattern: %[1]s for a closed loop, or max_concurrency: %d to cap the requests %s has in flight",
			ArrivalConcurrency, max(a.Concurrency, 1), a.Pattern)
	}
	if written("max_concurrency") && a.MaxConcurrency < 1 {
		l.errorf(join(path, "max_concurrency"), "must be >= 1; leave it out for no cap")
	}
	ConcurrencyBound.checkMax(l, join(path, "max_concurrency"), float64(a.MaxConcurrency))
	a.validateCapRamp(l, path, written)
	if written("series") {
		for _, f := range []string{"rate", "ramp_to", "ramp_over"} {
			if written(f) {
				l.errorf(join(path, f), "cannot be used with series, whose steps set the rate; remove it, or write the rates as steps")
			}
		}
		a.validateSeries(l, join(path, "series"))
		return
	}
	if written("ramp_to") || written("ramp_over") {
		if !written("rate") || !(a.Rate >= 0) {
			l.errorf(join(path, "rate"), "must be >= 0 when ramping (the rate the ramp starts from), e.g. rate: 0.2")
		}
		RateBound.checkMax(l, join(path, "rate"), a.Rate)
		RateBound.checkMax(l, join(path, "ramp_to"), a.RampTo)
		a.validateRamp(l, path, written, !(a.RampTo > 0),
			"must be > 0 (the rate held after the ramp), e.g. ramp_to: 2", "the rate the ramp reaches, e.g. ramp_to: 2")
		return
	}
	if !(a.Rate > 0) {
		l.errorf(join(path, "rate"), "must be > 0, e.g. rate: 0.2 (requests per second)")
	}
	RateBound.checkMax(l, join(path, "rate"), a.Rate)
}

// validateUserCentric checks pattern user_centric: users sharing a steady
// rate (AIPerf refuses a rate series with it; a ramp is not taken here).
func (a *Arrival) validateUserCentric(l *loader, path string, written func(string) bool) {
	for _, f := range []string{"concurrency", "series", "ramp_to", "ramp_over"} {
		if written(f) {
			l.errorf(join(path, f), "does not apply to pattern %s, whose users share a steady rate; remove it", ArrivalUserCentric)
		}
	}
	if !(a.Rate > 0) {
		l.errorf(join(path, "rate"), "must be > 0, e.g. rate: 2 (requests per second, shared by the users)")
	}
	RateBound.checkMax(l, join(path, "rate"), a.Rate)
	if !written("users") || a.Users < 1 {
		l.errorf(join(path, "users"), "must be >= 1, e.g. users: 8 (each sends a turn every users/rate seconds)")
	}
	ConcurrencyBound.checkMax(l, join(path, "users"), float64(a.Users))
	if written("max_concurrency") && a.MaxConcurrency < 1 {
		l.errorf(join(path, "max_concurrency"), "must be >= 1; leave it out for no cap")
	}
	ConcurrencyBound.checkMax(l, join(path, "max_concurrency"), float64(a.MaxConcurrency))
	a.validateCapRamp(l, path, written)
}

// validateUserCentricDataset checks that a user_centric probe's users have
// conversations to send, as AIPerf requires --session-turns-mean >= 2.
func (p *Probe) validateUserCentricDataset(l *loader, path string) {
	if p.Arrival.Pattern != ArrivalUserCentric {
		return
	}
	if s := p.Dataset.Synthetic; s == nil || s.Conversation == nil || !(s.Conversation.Turns.Mean >= 2) {
		l.errorf(join(path, "dataset.synthetic.conversation.turns.mean"),
			"must be >= 2 for pattern %s, whose users each send a conversation (for single-turn requests, use pattern %s)", ArrivalUserCentric, ArrivalPoisson)
	}
}

// validatePrefill checks the cap on requests waiting for their first
// token, which only a stream shows, as AIPerf does.
func (p *Probe) validatePrefill(l *loader, path string, targets map[string]*Target) {
	a := &p.Arrival
	written := l.under(path)
	if written("max_prefill_concurrency_ramp_over") {
		switch {
		case !written("max_prefill_concurrency"):
			l.errorf(join(path, "max_prefill_concurrency_ramp_over"), "ramps the cap max_prefill_concurrency from 1; set max_prefill_concurrency, e.g. max_prefill_concurrency: 4")
		case a.MaxPrefillConcurrencyRampOver <= 0:
			l.errorf(join(path, "max_prefill_concurrency_ramp_over"), "must be > 0 (the time the cap takes to rise from 1 to max_prefill_concurrency), e.g. max_prefill_concurrency_ramp_over: 30s")
		}
	}
	if !written("max_prefill_concurrency") {
		return
	}
	fp := join(path, "max_prefill_concurrency")
	ConcurrencyBound.checkMax(l, fp, float64(a.MaxPrefillConcurrency))
	inFlight := a.MaxConcurrency
	if a.Pattern == ArrivalConcurrency {
		inFlight = max(a.Concurrency, int(a.RampTo))
	}
	switch t := targets[p.Target]; {
	case a.MaxPrefillConcurrency < 1:
		l.errorf(fp, "must be >= 1; leave it out for no cap")
	case inFlight > 0 && a.MaxPrefillConcurrency > inFlight:
		l.errorf(fp, "must be at most the requests in flight (%d): only requests in flight wait for a first token", inFlight)
	case t != nil && !t.Streaming():
		l.errorf(fp, "needs a streaming target (targets.%s.stream: true): only a stream shows the first token", p.Target)
	}
}

// validateClosedLoop checks pattern concurrency.
func (a *Arrival) validateClosedLoop(l *loader, path string, written func(string) bool) {
	for _, f := range []struct{ name, msg string }{
		{"rate", "does not apply to pattern %[1]s, which sends the next request as one finishes; remove it (for a rate with a cap on requests in flight, write pattern: %[2]s with max_concurrency)"},
		{"series", "does not apply to pattern %[1]s; ramp the requests in flight with ramp_to and ramp_over instead"},
		{"max_concurrency", "does not apply to pattern %[1]s, which keeps exactly concurrency requests in flight; remove it"},
		{"max_concurrency_ramp_over", "does not apply to pattern %[1]s; ramp the requests in flight with ramp_to and ramp_over instead"},
	} {
		if written(f.name) {
			l.errorf(join(path, f.name), f.msg, ArrivalConcurrency, ArrivalPoisson)
		}
	}
	if written("ramp_to") || written("ramp_over") {
		if !written("concurrency") || a.Concurrency < 0 {
			l.errorf(join(path, "concurrency"), "must be >= 0 when ramping (the requests in flight the ramp starts from), e.g. concurrency: 1")
		}
		ConcurrencyBound.checkMax(l, join(path, "concurrency"), float64(a.Concurrency))
		ConcurrencyBound.checkMax(l, join(path, "ramp_to"), a.RampTo)
		a.validateRamp(l, path, written, !(a.RampTo >= 1) || a.RampTo != math.Trunc(a.RampTo),
			"must be a whole number >= 1 (the requests in flight held after the ramp), e.g. ramp_to: 32",
			"the requests in flight the ramp reaches, e.g. ramp_to: 32")
		return
	}
	if !written("concurrency") || a.Concurrency < 1 {
		l.errorf(join(path, "concurrency"), "must be >= 1, e.g. concurrency: 8 (requests kept in flight)")
	}
	ConcurrencyBound.checkMax(l, join(path, "concurrency"), float64(a.Concurrency))
}

// validateRamp checks ramp_to and ramp_over once either is written. badTo
// says ramp_to's value is out of range, with badToMsg; missingTo says what
// ramp_to is, for when only ramp_over is written.
func (a *Arrival) validateRamp(l *loader, path string, written func(string) bool, badTo bool, badToMsg, missingTo string) {
	switch {
	case !written("ramp_to"):
		l.errorf(join(path, "ramp_to"), "is required with ramp_over: %s", missingTo)
	case badTo:
		l.errorf(join(path, "ramp_to"), "%s", badToMsg)
	}
	switch {
	case !written("ramp_over"):
		l.errorf(join(path, "ramp_over"), "is required with ramp_to: the time the ramp takes, e.g. ramp_over: 10m")
	case a.RampOver <= 0:
		l.errorf(join(path, "ramp_over"), "must be > 0 (the time the ramp takes), e.g. ramp_over: 10m")
	}
}

func (a *Arrival) validateSeries(l *loader, path string) {
	if len(a.Series) == 0 {
		l.errorf(path, "must list at least one step, e.g. series: [{rate: 1, duration: 5m}, {rate: 4}]")
		return
	}
	for i, s := range a.Series {
		sp := fmt.Sprintf("%s[%d]", path, i)
		written := l.under(sp)
		if i == len(a.Series)-1 {
			if !written("rate") || !(s.Rate > 0) {
				l.errorf(join(sp, "rate"), "must be > 0 in the last step, whose rate holds to the end, e.g. rate: 1")
			}
			RateBound.checkMax(l, join(sp, "rate"), s.Rate)
			if written("duration") {
				l.errorf(join(sp, "duration"), "is not allowed in the last step, whose rate holds to the end; remove it")
			}
			continue
		}
		if !written("rate") || !(s.Rate >= 0) {
			l.errorf(join(sp, "rate"), "must be >= 0 (0 pauses), e.g. rate: 1")
		}
		RateBound.checkMax(l, join(sp, "rate"), s.Rate)
		if !written("duration") || s.Duration <= 0 {
			l.errorf(join(sp, "duration"), "must be > 0 in every step but the last, e.g. duration: 5m")
		}
	}
}

// validateOutput is validate for an output length, which may also ask for
// no limit.
func (ln *Lengths) validateOutput(l *loader, path string) {
	if ln.NoLimit() {
		return
	}
	if !(ln.Mean >= 1) {
		l.errorf(join(path, "mean"), "must be >= 1 (or 0, with stddev 0, to send no max_tokens), e.g. mean: %d", defaultOutputTokens)
		return
	}
	ln.validate(l, path, defaultOutputTokens, &TokenBound)
}

func (ln *Lengths) validate(l *loader, path string, example int, b *Bound) {
	if !(ln.Mean >= 1) {
		l.errorf(join(path, "mean"), "must be >= 1, e.g. mean: %d", example)
	}
	b.checkMax(l, join(path, "mean"), ln.Mean)
	if !(ln.Stddev >= 0) {
		l.errorf(join(path, "stddev"), "must be >= 0 (0 sends exactly mean tokens)")
	}
	b.checkMax(l, join(path, "stddev"), ln.Stddev)
}

func (p *Probe) checkParams(l *loader, path string) {
	for _, key := range slices.Sorted(maps.Keys(p.Params)) {
		kp := join(path, key)
		if where, ok := ownedParams[key]; ok {
			if p.Target != "" {
				where = strings.ReplaceAll(where, "TARGET", p.Target)
			}
			l.keyErrorf(kp, "is set by inferprobe: %s", where)
			continue
		}
		switch v := p.Params[key]; key {
		case "min_tokens":
			if !isWholeNonNegative(v) {
				l.errorf(kp, "must be a whole number >= 0, e.g. min_tokens: %d", defaultOutputTokens)
			} else if n, ok := v.(int); ok {
				TokenBound.checkMax(l, kp, float64(n))
			}
		case "ignore_eos":
			if _, ok := v.(bool); !ok {
				l.errorf(kp, "must be true or false")
			}
		}
	}
}

// isWholeNonNegative accepts the integer types yaml decodes whole numbers into.
func isWholeNonNegative(v any) bool {
	switch v := v.(type) {
	case int:
		return v >= 0
	case int64:
		return v >= 0
	case uint64:
		return true
	}
	return false
}

func (s *SLO) validate(l *loader, path string) {
	for _, f := range []struct {
		name string
		d    Duration
	}{
		{"time_to_first_token", s.TimeToFirstToken},
		{"time_to_first_output_token", s.TimeToFirstOutputToken},
		{"inter_token_latency", s.InterTokenLatency},
		{"request_latency", s.RequestLatency},
	} {
		if f.d < 0 {
			l.errorf(join(path, f.name), "must be >= 0 (0 or absent means no SLO), not %s", f.d)
		}
	}
	if v := s.OutputTokenThroughputPerUser; !(v >= 0) || math.IsInf(v, 1) {
		l.errorf(join(path, "output_token_throughput_per_user"), "must be a number of tokens per second >= 0 (0 or absent means no SLO), not %v", v)
	}
}

// validateCapRamp checks max_concurrency_ramp_over, of an open loop or a replay.
func (a *Arrival) validateCapRamp(l *loader, path string, written func(string) bool) {
	switch {
	case !written("max_concurrency_ramp_over"):
	case !written("max_concurrency"):
		l.errorf(join(path, "max_concurrency_ramp_over"), "ramps the cap max_concurrency from 1; set max_concurrency, e.g. max_concurrency: 32")
	case a.MaxConcurrencyRampOver <= 0:
		l.errorf(join(path, "max_concurrency_ramp_over"), "must be > 0 (the time the cap takes to rise from 1 to max_concurrency), e.g. max_concurrency_ramp_over: 30s")
	}
}
