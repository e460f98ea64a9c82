package capacity

// monotonic is AIPerf's MonotonicSLASearchPlanner, perf_analyzer's
// --binary-search: double the concurrency from --concurrency-min until a
// step fails, then bisect between the last feasible and the first
// infeasible concurrency until they are within 5 % (or one apart). A
// concurrency's verdict stands once two of its steps agree, so each is
// measured at least twice (AIPerf's monotonic_stability_trials).
type monotonic struct{}

func init() { registerStyle("monotonic", monotonic{}) }

func (monotonic) trials() int    { return 2 }
func (monotonic) adaptive() bool { return true }

func (m monotonic) next(p *Plan, steps []Step) (int, string) {
	if len(steps) == 0 {
		return p.Min, ""
	}
	v := verdicts(steps, m.trials())
	last := steps[len(steps)-1].Concurrency
	if _, settled := v[last]; !settled {
		return last, "" // measure it again until two steps agree
	}
	feasible, infeasible, _ := bracket(v)
	if infeasible == 0 {
		return climb(p, last, "monotonic")
	}
	if feasible == 0 {
		return 0, "monotonic_no_pass_in_range"
	}
	if narrow(feasible, infeasible) {
		return 0, "monotonic_precision_reached"
	}
	return feasible + (infeasible-feasible)/2, ""
}
