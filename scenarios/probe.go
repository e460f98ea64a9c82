package scenarios

import (
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
	p.Arrival.validate(l, join(path, "arrival"))
	p.Dataset.validate(l, join(path, "dataset"))
	p.checkParams(l, join(path, "params"))
	p.SLO.validate(l, join(path, "slo"))
}

func (a *Arrival) validate(l *loader, path string) {
	if a.Pattern != ArrivalPoisson && a.Pattern != ArrivalConstant {
		l.errorf(join(path, "pattern"), "must be %s or %s, not %q", ArrivalPoisson, ArrivalConstant, a.Pattern)
	}
	if !(a.Rate > 0) || math.IsInf(a.Rate, 1) {
		l.errorf(join(path, "rate"), "must be > 0, e.g. rate: 0.2 (requests per second)")
	}
}

// sources lists the dataset sources that are set; a new source kind adds its line.
func (d *Dataset) sources() []string {
	var set []string
	if d.Synthetic != nil {
		set = append(set, "synthetic")
	}
	return set
}

func (d *Dataset) validate(l *loader, path string) {
	switch set := d.sources(); len(set) {
	case 0:
		l.errorf(path, "must set exactly one source, e.g. synthetic: {input_tokens: {mean: %d}, output_tokens: {mean: %d}}",
			defaultInputTokens, defaultOutputTokens)
	case 1:
	default:
		l.errorf(path, "sets %v; keep exactly one source", set)
	}
	if s := d.Synthetic; s != nil {
		s.InputTokens.validate(l, join(path, "synthetic.input_tokens"), defaultInputTokens)
		s.OutputTokens.validate(l, join(path, "synthetic.output_tokens"), defaultOutputTokens)
	}
}

func (ln *Lengths) validate(l *loader, path string, example int) {
	if !(ln.Mean >= 1) || math.IsInf(ln.Mean, 1) {
		l.errorf(join(path, "mean"), "must be >= 1, e.g. mean: %d", example)
	}
	if !(ln.Stddev >= 0) || math.IsInf(ln.Stddev, 1) {
		l.errorf(join(path, "stddev"), "must be >= 0 (0 sends exactly mean tokens)")
	}
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
		{"inter_token_latency", s.InterTokenLatency},
		{"request_latency", s.RequestLatency},
	} {
		if f.d < 0 {
			l.errorf(join(path, f.name), "must be >= 0 (0 or absent means no SLO), not %s", f.d)
		}
	}
}
