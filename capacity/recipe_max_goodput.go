package capacity

import (
	"fmt"
	"strings"
)

// max-goodput-under-slo: DistServe's goodput, the highest concurrency at
// which at least --slo-attainment-fraction of the requests meet the TTFT,
// TPOT and end-to-end SLOs at once. AIPerf searches it with a Bayesian
// planner; here it is the same deterministic search as
// max-concurrency-under-sla, over the share of good requests.
func init() {
	registerRecipe(recipe{
		name:         "max-goodput-under-slo",
		styles:       []string{"smooth_isotonic", "monotonic", "grid"},
		maxIteration: map[string]int{"smooth_isotonic": 30, "monotonic": 20},
		plan: func(s Settings, p *Plan) error {
			tpot, err := interTokenSLA(s)
			if err != nil {
				return err
			}
			var missing []string
			for _, f := range []struct {
				flag string
				v    float64
			}{{"--ttft-sla-ms", s.TTFT}, {"--tpot-sla-ms", tpot}, {"--e2e-sla-ms", s.E2E}} {
				if f.v == 0 {
					missing = append(missing, f.flag)
				}
			}
			if len(missing) > 0 {
				return fmt.Errorf("--search-recipe max-goodput-under-slo needs %s: all three of --ttft-sla-ms, --tpot-sla-ms (or --itl-sla-ms) and --e2e-sla-ms say when a request is good", strings.Join(missing, ", "))
			}
			attainment := s.Attainment
			if attainment == 0 {
				attainment = 0.95 // DistServe's, and AIPerf's default
			}
			p.SLOs = map[string]float64{"time_to_first_token": s.TTFT, "inter_token_latency": tpot, "request_latency": s.E2E}
			p.Filters = append([]Filter{{Metric: "good_request_fraction", Stat: "avg", Op: "ge", Threshold: attainment}}, s.Filters...)
			p.Objective = "goodput"
			return needStreaming(s, p)
		},
	})
}
