package capacity

import "errors"

// max-concurrency-under-sla: the highest concurrency at which every SLA
// filter holds. AIPerf's default style is smooth_isotonic.
func init() {
	registerRecipe(recipe{
		name:         "max-concurrency-under-sla",
		styles:       []string{"smooth_isotonic", "monotonic", "grid"},
		maxIteration: map[string]int{"smooth_isotonic": 30, "monotonic": 20},
		plan: func(s Settings, p *Plan) error {
			filters, err := slaFilters(s)
			if err != nil {
				return err
			}
			if len(filters) == 0 {
				return errors.New("--search-recipe max-concurrency-under-sla needs at least one of --ttft-sla-ms, --tpot-sla-ms (--itl-sla-ms), --e2e-sla-ms, --error-rate-sla")
			}
			p.Filters = append(filters, s.Filters...)
			p.Objective = "output_token_throughput"
			return needStreaming(s, p)
		},
	})
}
