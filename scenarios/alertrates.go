package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// What the shipped alert rules (alerts/inferprobe-rules.yml, generated from the mixin's config
// block) need of a probe's rate. The mixin's tests hold these to its config block; alerts/README.md
// has the power table they come from.
const (
	// AlertTestedRate is the lowest probe rate the shipped latency alerts were measured at.
	AlertTestedRate = 0.2
	// The tail regression alerts judge a p99 only over an hour holding this many requests.
	AlertTailMinRequests = 1500
	// AlertRecommendedRate is the rate at which the shipped alerts see every regression of the
	// power table, tail-only ones included.
	AlertRecommendedRate = 1.0
)

// AlertRateWarnings says, for each probe whose rate leaves the shipped alerts blind to part of
// what they detect, what it misses and the rate that fixes it. A probe without a fixed open-loop
// rate (a series, a ramp, a closed loop or a replay) is not judged.
func (c *Config) AlertRateWarnings() []string {
	tailRate := AlertTailMinRequests / time.Hour.Seconds()
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.Probes)) {
		p := c.Probes[name]
		a := &p.Arrival
		if p.Dataset.Replays() || a.Pattern == "concurrency" || len(a.Series) > 0 || a.RampOver > 0 || a.Rate <= 0 {
			continue
		}
		switch {
		case a.Rate < AlertTestedRate:
			out = append(out, fmt.Sprintf("probe %q runs at %g req/s, below the %g req/s the shipped latency alerts were measured at: "+
				"they may miss a 30 %% slowdown or page on noise; set probes.%s.arrival.rate to %g (%g to see tail regressions too)",
				name, a.Rate, AlertTestedRate, name, AlertTestedRate, AlertRecommendedRate))
		case a.Rate < tailRate:
			out = append(out, fmt.Sprintf("probe %q runs at %g req/s: the shipped alerts page on whole-distribution regressions, "+
				"but the tail alerts (p99 up, median unchanged) need %d requests an hour (%.2f req/s) and stay silent; "+
				"set probes.%s.arrival.rate to %g to see tail regressions",
				name, a.Rate, AlertTailMinRequests, tailRate, name, AlertRecommendedRate))
		}
	}
	return out
}
