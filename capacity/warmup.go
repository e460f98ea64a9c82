package capacity

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// AIPerf's SEARCH_PLANNER environment defaults for smooth_isotonic's
// warm-up: the base when sla_warmup_seconds is not set, and the floors of
// the first step at a concurrency and of the steps that repeat one.
const (
	defaultWarmupSeconds  = 30
	firstProbeWarmupFloor = 60
	replicateWarmupFloor  = 15
)

// isotonicKnobs checks and sets smooth_isotonic's own settings, which
// AIPerf's other planners ignore and a search here refuses.
func (p *Plan) isotonicKnobs(s Settings) error {
	if p.Style != "smooth_isotonic" {
		if s.Replicates != 0 || s.Warmup != nil {
			return fmt.Errorf("--sla-replicates and --sla-warmup-seconds are smooth_isotonic's: --search-style %s has no replicate phase or per-step warm-up", p.Style)
		}
		return nil
	}
	var errs []error
	if s.Replicates < 0 {
		errs = append(errs, fmt.Errorf("--sla-replicates %d: must be 0 (when the highest concurrency has two steps) or more", s.Replicates))
	}
	p.Replicates = s.Replicates
	p.WarmupSeconds = defaultWarmupSeconds
	if s.Warmup != nil {
		if w := *s.Warmup; !(w >= 0) || math.IsInf(w, 0) {
			errs = append(errs, fmt.Errorf("--sla-warmup-seconds %g: must be a number of seconds ≥ 0 (0 turns it off)", w))
		}
		p.WarmupSeconds = *s.Warmup
	}
	return errors.Join(errs...)
}

// warmup is how long AIPerf's smooth_isotonic warms the target up at step
// s's concurrency before measuring it (its _apply_sla_warmup), given the
// steps before: the base, at least 60 s the first time at a concurrency
// and 15 s after; none when the base is 0 or for another style.
func (p *Plan) warmup(before []Step, s Step) time.Duration {
	if p.Style != "smooth_isotonic" || p.WarmupSeconds == 0 {
		return 0
	}
	floor := float64(firstProbeWarmupFloor)
	for _, b := range before {
		if b.Concurrency == s.Concurrency {
			floor = replicateWarmupFloor
			break
		}
	}
	return time.Duration(max(floor, p.WarmupSeconds) * float64(time.Second))
}
