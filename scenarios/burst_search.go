package scenarios

import (
	"time"

	"github.com/inferprobe/inferprobe/capacity"
)

// BurstSearch makes a burst's runs capacity searches (package capacity,
// AIPerf's SLA-search recipes, as bench --search-recipe runs them): each
// run measures the burst's closed loop at one concurrency after another,
// each step a run of the burst's requests or duration, and answers with
// the highest concurrency that meets the SLA.
type BurstSearch struct {
	// Recipe is max-concurrency-under-sla, max-goodput-under-slo or
	// concurrency-ramp. Required.
	Recipe string `yaml:"recipe"`
	// Style is smooth_isotonic (default), monotonic or grid.
	Style string `yaml:"style"`
	// The SLA: TTFT and inter-token latency at p95, request latency at
	// p99, and the share of requests failed (AIPerf's --ttft-sla-ms,
	// --itl-sla-ms, --e2e-sla-ms, --error-rate-sla).
	TTFT      Duration `yaml:"ttft_sla"`
	ITL       Duration `yaml:"itl_sla"`
	E2E       Duration `yaml:"e2e_sla"`
	ErrorRate float64  `yaml:"error_rate_sla"`
	// Attainment is max-goodput-under-slo's share of requests that must
	// meet every SLO; default 0.95.
	Attainment float64 `yaml:"slo_attainment_fraction"`
	// ConcurrencyMin and ConcurrencyMax bound the steps; default 1 and
	// 1000.
	ConcurrencyMin int `yaml:"concurrency_min"`
	ConcurrencyMax int `yaml:"concurrency_max"`
	// MaxIterations bounds an adaptive style's steps; default 30
	// (smooth_isotonic) or 20 (monotonic).
	MaxIterations int `yaml:"max_iterations"`
	// TimeLimit bounds the whole search: no step starts after it, the step
	// running is cut and not judged. Default none.
	TimeLimit Duration `yaml:"time_limit"`
	// SLAReplicates and SLAWarmup are smooth_isotonic's replicate count and
	// per-step warm-up base (bench's --sla-replicates and
	// --sla-warmup-seconds, AIPerf's sla_replicates and sla_warmup_seconds);
	// the warm-up replaces the burst's warmup. Default 0 and 30s; a
	// warm-up of 0s turns it off.
	SLAReplicates int       `yaml:"sla_replicates"`
	SLAWarmup     *Duration `yaml:"sla_warmup"`
}

// Settings are the search's settings as capacity takes them; streaming
// says whether the target streams.
func (s *BurstSearch) Settings(streaming bool) capacity.Settings {
	ms := func(d Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var warmup *float64
	if s.SLAWarmup != nil {
		w := time.Duration(*s.SLAWarmup).Seconds()
		warmup = &w
	}
	return capacity.Settings{Recipe: s.Recipe, Style: s.Style, TTFT: ms(s.TTFT), ITL: ms(s.ITL), E2E: ms(s.E2E),
		ErrorRate: s.ErrorRate, Attainment: s.Attainment, Min: s.ConcurrencyMin, Max: s.ConcurrencyMax,
		MaxIterations: s.MaxIterations, Streaming: streaming, Replicates: s.SLAReplicates, Warmup: warmup}
}

func (s *BurstSearch) validate(l *loader, path string, b *Burst, target *Target) {
	if b.Arrival.Pattern != ArrivalConcurrency || len(b.Arrival.Series) > 0 {
		l.errorf(path, "a search steps the concurrency of a closed loop: set arrival: {pattern: concurrency} without a series")
	}
	if s.TimeLimit < 0 {
		l.errorf(join(path, "time_limit"), "must be >= 0, not %s", s.TimeLimit)
	}
	if target == nil {
		return // the probe's validation names the missing target
	}
	// capacity names AIPerf's flags; each is the field of the same name here.
	if _, err := capacity.NewPlan(s.Settings(target.Streaming())); err != nil {
		l.errorf(path, "%s (the flags are bench's; here they are this block's fields: ttft_sla, itl_sla, e2e_sla, error_rate_sla, slo_attainment_fraction, concurrency_min, concurrency_max, max_iterations, sla_replicates, sla_warmup)", err)
	}
}
