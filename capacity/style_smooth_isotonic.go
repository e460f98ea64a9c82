package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// smoothIsotonic is AIPerf's SmoothIsotonicSLAPlanner, its default style,
// replayed from the steps so far (AIPerf keeps it as state):
//
//   - bracket: double the concurrency until a step fails, as monotonic does;
//   - fit: measure three concurrencies evenly inside the bracket; fit each
//     filter's margin (its distance past the threshold, in the metric's
//     unit) with isotonic regression and PCHIP (isotonic_fit.go); take the
//     binding filter, the one with the largest margin at the highest
//     concurrency (divided by its noise there once that concurrency has
//     two steps); measure where its fit crosses zero. Up to three fits
//     add probes at 1/8 and 5/8 of the bracket while the binding
//     filter's regression has fewer than three levels;
//   - cliff guard: when the highest concurrency's margin lies more than 3
//     σ off the fit and the bracket is still wider than 5 % of
//     --concurrency-max, the boundary is a cliff: bisect the bracket
//     (cliff_bisect) instead of trusting the spline;
//   - replicate (with Plan.Replicates, or on its own when the highest
//     concurrency has two steps): measure the fit's zero R times and stop
//     when the bootstrap interval of the binding margin there leaves out
//     zero, else fit again;
//   - the search ends when the bracket is within 5 % (or one apart).
//
// One step settles a concurrency. The three internal probes are all
// measured, as AIPerf does, even one above a probe that failed: the cliff
// guard reads the margins above the boundary.
type smoothIsotonic struct{}

func init() { registerStyle("smooth_isotonic", smoothIsotonic{}) }

func (smoothIsotonic) trials() int    { return 1 }
func (smoothIsotonic) adaptive() bool { return true }

func (smoothIsotonic) next(p *Plan, steps []Step) (int, string) {
	s := replayIsotonic(p, steps)
	if s.reason != "" {
		return 0, s.reason
	}
	return s.ask(), ""
}

func (smoothIsotonic) report(p *Plan, steps []Step) (feasibleMax, infeasibleMin int, nonMonotonic bool, b *Boundary) {
	s := replayIsotonic(p, steps)
	if s.boundaryType != "" || s.binding >= 0 {
		b = &Boundary{Type: s.boundaryType, CI: s.ci}
		if s.binding >= 0 {
			b.BindingConstraint = s.key(s.binding)
		}
	}
	return s.feasibleMax, s.infeasibleMin, s.nonMonotonic, b
}

// Boundary is smooth_isotonic's account of the boundary, the fields
// AIPerf adds to search_history.json's boundary_summary.
type Boundary struct {
	// Type is "smooth", or "cliff" when the cliff guard fired; "" when
	// the search ended before its fit (no failure or no pass in range).
	Type string
	// BindingConstraint is the binding filter, as AIPerf keys it:
	// index:metric.stat.op.threshold; "" before the first fit.
	BindingConstraint string
	// CI is the bootstrap 95 % interval of the binding margin at the
	// boundary, when the replicate phase ran; nil otherwise.
	CI *[2]float64
}

// The phases and constants of AIPerf's planner.
const (
	phaseBracket, phaseFit, phaseReplicate, phaseCliffBisect = "bracket", "fit", "replicate", "cliff_bisect"

	internalProbes  = 3  // _FIT_INTERNAL_PROBES
	fitMinDistinct  = 3  // _FIT_MIN_DISTINCT
	maxRefitCycles  = 3  // _MAX_REFIT_CYCLES
	maxReplicates   = 20 // the cap on Plan.Replicates
	isotonicPrefix  = "smooth_isotonic"
	reasonPrecision = isotonicPrefix + "_precision_reached"
)

// isotonicState is AIPerf's planner state after some steps.
type isotonicState struct {
	p *Plan
	// feasibleMax and infeasibleMin are the latched bracket (0: none).
	feasibleMax, infeasibleMin int
	nonMonotonic               bool
	// probes are each concurrency's steps' margins, per filter (NaN where
	// the step did not measure the filter's metric).
	probes    map[int][][]float64
	phase     string
	queue     []int
	nextValue int
	candidate int
	fitCount  int
	reason    string

	boundaryType string
	binding      int // the binding filter's index; -1 for none
	ci           *[2]float64
}

func replayIsotonic(p *Plan, steps []Step) *isotonicState {
	s := &isotonicState{p: p, probes: map[int][][]float64{}, phase: phaseBracket, nextValue: p.Min, binding: -1}
	for _, st := range steps {
		s.ask()
		s.tell(st)
	}
	return s
}

// key is AIPerf's key of filter i.
func (s *isotonicState) key(i int) string {
	f := s.p.Filters[i]
	return fmt.Sprintf("%d:%s.%s.%s.%s", i, f.Metric, f.Stat, f.Op, pyFloat(f.Threshold))
}

// pyFloat is Python's repr of a float, as AIPerf's keys hold thresholds.
func pyFloat(v float64) string {
	if a := math.Abs(v); a != 0 && (a >= 1e16 || a < 1e-4) {
		return strconv.FormatFloat(v, 'e', -1, 64)
	}
	out := strconv.FormatFloat(v, 'f', -1, 64)
	if v == math.Trunc(v) {
		out += ".0"
	}
	return out
}

func (s *isotonicState) ask() int {
	if len(s.queue) > 0 {
		s.nextValue, s.queue = s.queue[0], s.queue[1:]
	}
	return s.nextValue
}

func (s *isotonicState) tell(st Step) {
	x := st.Concurrency
	margins := make([]float64, len(s.p.Filters))
	for i, f := range s.p.Filters {
		margins[i] = math.NaN()
		if v, ok := f.observe(st.Metrics); ok {
			margins[i] = f.margin(v)
		}
	}
	s.probes[x] = append(s.probes[x], margins)
	s.absorb(x, st.Feasible)
	switch s.phase {
	case phaseBracket:
		s.bracketStep(x, st.Feasible)
	case phaseFit:
		s.fitStep()
	case phaseCliffBisect:
		s.cliffBisectStep()
	default:
		s.replicateStep()
	}
}

// absorb latches the bracket, as AIPerf's _absorb_verdict: a verdict
// that contradicts it is flagged and left out.
func (s *isotonicState) absorb(x int, feasible bool) {
	switch {
	case feasible && s.infeasibleMin != 0 && x >= s.infeasibleMin,
		!feasible && s.feasibleMax != 0 && x <= s.feasibleMax:
		s.nonMonotonic = true
	case feasible:
		s.feasibleMax = max(s.feasibleMax, x)
	case s.infeasibleMin == 0 || x < s.infeasibleMin:
		s.infeasibleMin = x
	}
}

func (s *isotonicState) bracketStep(x int, feasible bool) {
	if !feasible {
		if s.feasibleMax == 0 {
			s.reason = isotonicPrefix + "_no_pass_in_range"
			return
		}
		s.phase = phaseFit
		s.queueInternal()
		return
	}
	if x >= s.p.Max {
		s.feasibleMax = s.p.Max
		s.reason = isotonicPrefix + "_no_failure_in_range"
		return
	}
	s.nextValue = min(2*x, s.p.Max)
}

// inBracket is x plus a share of the bracket, rounded as Python does and
// kept strictly inside it.
func (s *isotonicState) inBracket(frac float64) int {
	gap := s.infeasibleMin - s.feasibleMax
	x := s.feasibleMax + max(1, int(math.RoundToEven(float64(gap)*frac)))
	return max(min(x, s.infeasibleMin-1), s.feasibleMax+1)
}

func (s *isotonicState) queueInternal() {
	if s.infeasibleMin-s.feasibleMax <= 1 {
		return
	}
	for k := 1; k <= internalProbes; k++ {
		x := s.inBracket(float64(k) / (internalProbes + 1))
		if _, seen := s.probes[x]; !seen && !slices.Contains(s.queue, x) {
			s.queue = append(s.queue, x)
		}
	}
}

func (s *isotonicState) queueRefit() {
	if s.infeasibleMin-s.feasibleMax <= 1 {
		return
	}
	for _, frac := range []float64{0.125, 0.625} {
		x := s.inBracket(frac)
		if _, seen := s.probes[x]; !seen && !slices.Contains(s.queue, x) {
			s.queue = append(s.queue, x)
		}
	}
}

func (s *isotonicState) fitStep() {
	if len(s.queue) > 0 {
		return
	}
	s.fitCount++
	candidate := s.fitAndSolve()
	if candidate == 0 {
		if gap := s.infeasibleMin - s.feasibleMax; gap > 1 {
			candidate = s.feasibleMax + gap/2
		} else {
			s.finish(isotonicPrefix + "_pchip_fallback_bisection")
			return
		}
	}
	if s.needsMoreFitData() && s.fitCount < maxRefitCycles {
		s.queueRefit()
		return
	}
	s.candidate = candidate
	s.replicateOrTerminate(candidate)
}

// xs are the concurrencies measured, in order.
func (s *isotonicState) xs() []int {
	xs := make([]int, 0, len(s.probes))
	for x := range s.probes {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	return xs
}

// samples are filter i's margins at x.
func (s *isotonicState) samples(x, i int) []float64 {
	var out []float64
	for _, m := range s.probes[x] {
		if !math.IsNaN(m[i]) {
			out = append(out, m[i])
		}
	}
	return out
}

func mean(xs []float64) float64 {
	var t float64
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// series is filter i's mean margin at each concurrency that measured it.
func (s *isotonicState) series(i int) []point {
	var out []point
	for _, x := range s.xs() {
		if m := s.samples(x, i); len(m) > 0 {
			out = append(out, point{x, mean(m)})
		}
	}
	return out
}

// fitAndSolve fits each filter, picks the binding one and returns where
// its fit crosses zero, inside the bracket; 0 for no crossing.
func (s *isotonicState) fitAndSolve() int {
	xs := s.xs()
	if len(xs) < 2 {
		return 0
	}
	n := len(s.p.Filters)
	fits := make([]*pchip, n)
	margins, sigmas := make([]float64, n), make([]float64, n)
	for i := range n {
		pts := s.series(i)
		if len(pts) < len(xs) {
			continue // a filter some step did not measure is not fitted
		}
		ys := make([]float64, len(pts))
		for j, p := range pts {
			ys[j] = p.y
		}
		f := isotonicFit(xs, ys)
		fits[i] = &f
		margins[i] = ys[len(ys)-1]
		sigmas[i] = sampleSD(s.samples(xs[len(xs)-1], i))
	}
	s.binding = s.bindingFilter(margins, sigmas)
	f := fits[s.binding]
	if f == nil || s.feasibleMax == 0 || s.infeasibleMin == 0 {
		return 0
	}
	r, ok := f.findRoot(float64(s.feasibleMax), float64(s.infeasibleMin))
	if !ok {
		return 0
	}
	return max(min(int(math.RoundToEven(r)), s.infeasibleMin-1), s.feasibleMax+1)
}

// bindingFilter is AIPerf's normalize_margins: the filter with the
// largest margin, each divided by its standard deviation (floored at 1 %
// of its threshold) once some filter has one; the first on a tie.
func (s *isotonicState) bindingFilter(margins, sigmas []float64) int {
	noisy := slices.ContainsFunc(sigmas, func(v float64) bool { return v > 0 })
	best, bestV := 0, math.Inf(-1)
	for i, m := range margins {
		if sd := max(sigmas[i], 0.01*math.Abs(s.p.Filters[i].Threshold)); noisy && sd != 0 {
			m /= sd
		}
		if m > bestV {
			best, bestV = i, m
		}
	}
	return best
}

func (s *isotonicState) needsMoreFitData() bool {
	if s.binding < 0 {
		return false
	}
	pts := s.series(s.binding)
	if len(pts) < 4 {
		return true
	}
	ys := make([]float64, len(pts))
	for i, p := range pts {
		ys[i] = p.y
	}
	levels := map[float64]bool{}
	for _, v := range pava(ys) {
		levels[math.RoundToEven(v*1e9)/1e9] = true
	}
	return len(levels) < fitMinDistinct
}

func (s *isotonicState) replicateOrTerminate(candidate int) {
	cliff := s.cliff()
	s.boundaryType = "smooth"
	if cliff {
		s.boundaryType = "cliff"
		s.phase = phaseCliffBisect
		s.cliffBisectStep()
		return
	}
	if s.narrow() {
		s.finish(reasonPrecision)
		return
	}
	budget := s.replicateBudget()
	if budget <= 0 {
		if _, seen := s.probes[candidate]; !seen {
			s.queue = append(s.queue, candidate)
			s.phase = phaseFit
			return
		}
		s.finish(reasonPrecision)
		return
	}
	for range budget {
		s.queue = append(s.queue, candidate)
	}
	s.phase = phaseReplicate
}

// cliff is AIPerf's _check_cliff: detectCliff on the binding filter.
func (s *isotonicState) cliff() bool {
	if s.binding < 0 {
		return false
	}
	pts := s.series(s.binding)
	if len(pts) < 2 {
		return false
	}
	xs, ys := make([]int, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i], ys[i] = p.x, p.y
	}
	return detectCliff(pts, isotonicFit(xs, ys), s.feasibleMax, s.infeasibleMin, s.p.Max)
}

// cliffBisectStep halves the bracket until it is narrow, fitting nothing:
// a spline across a step would mislead.
func (s *isotonicState) cliffBisectStep() {
	if len(s.queue) > 0 {
		return
	}
	gap := s.infeasibleMin - s.feasibleMax
	if s.narrow() || gap <= 1 {
		s.finish(isotonicPrefix + "_cliff_precision_reached")
		return
	}
	s.queue = append(s.queue, s.feasibleMax+gap/2)
}

func (s *isotonicState) replicateBudget() int {
	if s.p.Replicates > 0 {
		return min(maxReplicates, s.p.Replicates)
	}
	if s.binding < 0 || len(s.probes) == 0 {
		return 0
	}
	xs := s.xs()
	m := s.samples(xs[len(xs)-1], s.binding)
	if len(m) < 2 {
		return 0
	}
	return replicateCount(sampleSD(m), s.p.Filters[s.binding].Threshold)
}

func (s *isotonicState) replicateStep() {
	if len(s.queue) > 0 {
		return
	}
	m := s.samples(s.candidate, s.binding)
	if s.candidate == 0 || s.binding < 0 || len(m) < 2 {
		s.finish(reasonPrecision)
		return
	}
	lo, hi, ok := boundaryCI(m)
	if ok {
		s.ci = &[2]float64{lo, hi}
	}
	if ok && lo <= 0 && 0 <= hi {
		s.queueRefit()
		s.phase = phaseFit
		return
	}
	s.finish(reasonPrecision)
}

func (s *isotonicState) narrow() bool {
	return s.feasibleMax != 0 && s.infeasibleMin != 0 && narrow(s.feasibleMax, s.infeasibleMin)
}

func (s *isotonicState) finish(reason string) {
	if s.reason == "" {
		s.reason = reason
	}
	if s.boundaryType == "" {
		s.boundaryType = "smooth"
	}
}
