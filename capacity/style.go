package capacity

// style chooses the concurrency of the next step from the steps so far.
type style interface {
	// next returns the next concurrency to measure, or 0 and the reason
	// the search is over (AIPerf's convergence_reason).
	next(p *Plan, steps []Step) (int, string)
	// trials is how many agreeing steps at one concurrency settle its
	// verdict.
	trials() int
	adaptive() bool
}

// reporter is a style that keeps its own bracket, latched in the order of
// the steps as AIPerf's planner keeps it, and an account of the boundary.
type reporter interface {
	report(p *Plan, steps []Step) (feasibleMax, infeasibleMin int, nonMonotonic bool, b *Boundary)
}

var styles = map[string]style{}

func registerStyle(name string, s style) { styles[name] = s }

// precision is AIPerf's SLA_PRECISION_DEFAULT: an adaptive search ends when
// the bracket between the last feasible and the first infeasible
// concurrency is narrower than this share of the latter (or one apart).
const precision = 0.05

// verdicts are the settled verdicts of the concurrencies measured: a
// concurrency is settled once n of its steps agree.
func verdicts(steps []Step, n int) map[int]bool {
	passes, fails := map[int]int{}, map[int]int{}
	out := map[int]bool{}
	for _, s := range steps {
		if _, done := out[s.Concurrency]; done {
			continue
		}
		if s.Feasible {
			passes[s.Concurrency]++
		} else {
			fails[s.Concurrency]++
		}
		switch {
		case passes[s.Concurrency] >= n:
			out[s.Concurrency] = true
		case fails[s.Concurrency] >= n:
			out[s.Concurrency] = false
		}
	}
	return out
}

// bracket is the boundary the verdicts show: the lowest infeasible
// concurrency, and the highest feasible one below it (0 when there is
// none); nonMonotonic when a feasible one lies above an infeasible one.
func bracket(v map[int]bool) (feasibleMax, infeasibleMin int, nonMonotonic bool) {
	for c, ok := range v {
		if !ok && (infeasibleMin == 0 || c < infeasibleMin) {
			infeasibleMin = c
		}
	}
	for c, ok := range v {
		switch {
		case ok && infeasibleMin != 0 && c > infeasibleMin:
			nonMonotonic = true
		case ok && c > feasibleMax:
			feasibleMax = c
		}
	}
	return feasibleMax, infeasibleMin, nonMonotonic
}

// narrow says whether the bracket is as narrow as a search makes it.
func narrow(feasibleMax, infeasibleMin int) bool {
	gap := infeasibleMin - feasibleMax
	return gap <= 1 || float64(gap)/float64(infeasibleMin) < precision
}

// climb is the exponential probe both adaptive styles start with, while
// no step has failed: from --concurrency-min, double the last concurrency,
// up to --concurrency-max; at the maximum the search is over.
func climb(p *Plan, last int, prefix string) (int, string) {
	if last >= p.Max {
		return 0, prefix + "_no_failure_in_range"
	}
	return min(last*2, p.Max), ""
}
