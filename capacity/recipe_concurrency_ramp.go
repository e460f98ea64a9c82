package capacity

import (
	"fmt"
	"slices"
	"strings"
)

// concurrency-ramp: a log-spaced grid of concurrencies, and the first one
// whose latency degrades past the lowest's by more than
// --degradation-threshold (AIPerf's degradation_knee_detect).
func init() {
	registerRecipe(recipe{
		name:   "concurrency-ramp",
		styles: []string{"grid"},
		plan: func(s Settings, p *Plan) error {
			k := &Knee{Threshold: 0.20, Metric: "request_latency", Stat: "p99"}
			if s.DegradationThreshold != 0 {
				k.Threshold = s.DegradationThreshold
			}
			if s.DegradationMetric != "" {
				k.Metric = s.DegradationMetric
			}
			if s.DegradationStat != "" {
				k.Stat = s.DegradationStat
			}
			if kneeStats := []string{"avg", "p50", "p90", "p95", "p99"}; !slices.Contains(kneeStats, k.Stat) {
				return fmt.Errorf("--degradation-stat %q: use one of %s", k.Stat, strings.Join(kneeStats, ", "))
			}
			steps := 8
			if s.Steps != 0 {
				steps = s.Steps
			}
			if steps >= 2 && p.Min >= 1 && p.Min < p.Max {
				p.Grid = logspace(p.Min, p.Max, steps)
			}
			p.Knee = k
			p.Filters = s.Filters
			return needStreaming(s, p)
		},
	})
}
