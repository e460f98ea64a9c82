package scenarios

import (
	"fmt"
	"math"
	"strings"
)

// The synthetic workloads people benchmark prefix caches and multi-turn
// serving with, as NVIDIA AIPerf synthesises them (its --system-prompt,
// --shared-system-prompt-length, --prompt-prefix-pool-size and
// --prompt-prefix-length, --user-context-prompt-length, --num-dataset-entries
// and --conversation-turn-* options): Dataset.SystemPrompt and the workload
// fields of Synthetic, checked here.

// PrefixPool is AIPerf's prefix prompt pool.
type PrefixPool struct {
	// PoolSize is the number of distinct prefixes; >= 1. Required.
	PoolSize int `yaml:"pool_size"`
	// Length is each prefix's length in tokens; >= 1. Required.
	Length int `yaml:"length"`
}

// Conversation makes synthetic entries multi-turn sessions: each later
// turn is sent its think time after the previous one ended, carrying the
// conversation so far (the earlier user turns, and for each answer a
// stand-in of the length asked for, so that the same seed sends the same
// prompts).
type Conversation struct {
	// Turns is the number of user turns per conversation, drawn as AIPerf
	// draws it: normal(mean, stddev) truncated at 0, rounded up, at least 1
	// (mean rounded when stddev is 0). Mean >= 1, required.
	Turns Lengths `yaml:"turns"`
	// TurnDelay is the think time before each later turn: none when the
	// mean is 0, else whole milliseconds drawn as Turns is. Default 0s.
	TurnDelay Delays `yaml:"turn_delay"`
}

// Delays is a normal distribution of durations, truncated to at least 0.
type Delays struct {
	// Mean is >= 0.
	Mean Duration `yaml:"mean"`
	// Stddev is >= 0; 0 makes every delay Mean.
	Stddev Duration `yaml:"stddev"`
}

// validateShapes checks SequenceDistribution and RangeRatio.
func (s *Synthetic) validateShapes(l *loader, path string) {
	const example = "e.g. sequence_distribution: [{input_tokens: {mean: 256}, output_tokens: {mean: 128}, percent: 40}, {input_tokens: {mean: 512}, output_tokens: {mean: 256}, percent: 60}]"
	if s.SequenceDistribution != nil && s.RangeRatio != nil {
		l.errorf(join(path, "range_ratio"), "cannot be used with sequence_distribution; keep one of them")
	}
	if d := s.SequenceDistribution; d != nil {
		dp := join(path, "sequence_distribution")
		if len(d) == 0 {
			l.errorf(dp, "lists no pair; %s", example)
		}
		var total float64
		for i, p := range d {
			pp := fmt.Sprintf("%s[%d]", dp, i)
			for _, ln := range []struct {
				name string
				l    Lengths
			}{{"input_tokens", p.InputTokens}, {"output_tokens", p.OutputTokens}} {
				if ln.l.Mean != math.Trunc(ln.l.Mean) {
					l.errorf(join(pp, ln.name+".mean"), "must be a whole number of tokens, not %v", ln.l.Mean)
				}
				ln.l.validate(l, join(pp, ln.name), 256, &TokenBound)
			}
			if !(p.Percent >= 0 && p.Percent <= 100) {
				l.errorf(join(pp, "percent"), "must be 0 to 100, not %v", p.Percent)
			}
			total += p.Percent
		}
		if len(d) > 0 && math.Abs(total-100) > 1e-6 {
			l.errorf(dp, "percents add up to %v; they must add up to 100, %s", total, example)
		}
	}
	if r := s.RangeRatio; r != nil {
		rp := join(path, "range_ratio")
		for _, f := range []struct {
			name string
			v    float64
		}{{"input", r.Input}, {"output", r.Output}} {
			if !(f.v >= 0 && f.v < 1) {
				l.errorf(join(rp, f.name), "must be 0 to below 1 (the window's half-width as a fraction of the mean), not %v, e.g. range_ratio: {input: 0.3, output: 0.3}", f.v)
			}
		}
		for _, f := range []struct {
			name string
			l    Lengths
		}{{"input_tokens", s.InputTokens}, {"output_tokens", s.OutputTokens}} {
			if f.l.Stddev != 0 {
				l.errorf(join(path, f.name+".stddev"), "must be 0 with range_ratio, whose window sets the spread")
			}
		}
		if s.OutputTokens.NoLimit() {
			l.errorf(join(path, "output_tokens.mean"), "must be >= 1 with range_ratio: its window is around the mean")
		}
	}
}

// MultiTurn reports whether the synthetic entries are sessions of turns.
func (s *Synthetic) MultiTurn() bool { return s.Conversation != nil }

// validateSystemPrompt checks the dataset's system prompt, which applies to
// every source.
func (d *Dataset) validateSystemPrompt(l *loader, path string) {
	if l.written(join(path, "system_prompt")) && strings.TrimSpace(d.SystemPrompt) == "" {
		l.errorf(join(path, "system_prompt"), "is empty; write the system message, or remove it")
	}
}

// validateWorkload checks the synthetic workload fields; systemPrompt says
// whether the dataset sets its own system prompt.
func (s *Synthetic) validateWorkload(l *loader, path string, systemPrompt bool) {
	written := l.under(path)
	s.validateShapes(l, path)
	tokens := func(field string, v int, example string) {
		if written(field) && !TokenBound.Contains(float64(v)) {
			l.errorf(join(path, field), "must be %s, not %d, e.g. %s", TokenBound.Range(), v, example)
		}
	}
	tokens("shared_system_prompt_length", s.SharedSystemPromptLength, "shared_system_prompt_length: 1000")
	tokens("user_context_length", s.UserContextLength, "user_context_length: 200")
	if p := s.Prefix; p != nil {
		pp := join(path, "prefix")
		if !EntryBound.Contains(float64(p.PoolSize)) {
			l.errorf(join(pp, "pool_size"), "must be %s (distinct prefixes), not %d, e.g. prefix: {pool_size: 8, length: 512}", EntryBound.Range(), p.PoolSize)
		}
		if !TokenBound.Contains(float64(p.Length)) {
			l.errorf(join(pp, "length"), "must be %s (per prefix), not %d, e.g. prefix: {pool_size: 8, length: 512}", TokenBound.Range(), p.Length)
		}
	}
	if written("entries") && !EntryBound.Contains(float64(s.Entries)) {
		l.errorf(join(path, "entries"), "must be %s (distinct conversations, reused), not %d, e.g. entries: 100", EntryBound.Range(), s.Entries)
	}
	if written("user_context_length") && !written("entries") {
		l.errorf(join(path, "user_context_length"), "needs entries: each entry has its own user context, so write entries: N (the number of distinct users)")
	}
	// AIPerf's exclusions: one kind of shared start per request.
	exclusive := [][2]string{
		{"prefix", "shared_system_prompt_length"},
		{"prefix", "user_context_length"},
	}
	for _, pair := range exclusive {
		if written(pair[0]) && written(pair[1]) {
			l.errorf(join(path, pair[1]), "cannot be used with %s; keep one of them", pair[0])
		}
	}
	for _, field := range []string{"shared_system_prompt_length", "prefix"} {
		if systemPrompt && written(field) {
			l.errorf(join(path, field), "cannot be used with dataset.system_prompt; keep one of them")
		}
	}
	if c := s.Conversation; c != nil {
		cp := join(path, "conversation")
		c.Turns.validate(l, join(cp, "turns"), 3, &TurnBound)
		if c.TurnDelay.Mean < 0 {
			l.errorf(join(cp, "turn_delay.mean"), "must be >= 0 (0s sends the next turn when the last ended), e.g. turn_delay: {mean: 2s, stddev: 500ms}")
		}
		if c.TurnDelay.Stddev < 0 {
			l.errorf(join(cp, "turn_delay.stddev"), "must be >= 0 (0s makes every delay the mean)")
		}
	}
}
