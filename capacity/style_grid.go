package capacity

// grid measures the plan's concurrencies in order (AIPerf's grid style and
// concurrency-ramp: log-spaced from --concurrency-min to
// --concurrency-max), and stops climbing after the first step that breaks
// an SLA filter: on a target that slows with load every step above it
// would break it too, and only load the target.
type grid struct{}

func init() { registerStyle("grid", grid{}) }

func (grid) trials() int    { return 1 }
func (grid) adaptive() bool { return false }

func (grid) next(p *Plan, steps []Step) (int, string) {
	for _, s := range steps {
		if !s.Feasible {
			return 0, "grid_first_breach"
		}
	}
	if len(steps) < len(p.Grid) {
		return p.Grid[len(steps)], ""
	}
	return 0, "grid_complete"
}
