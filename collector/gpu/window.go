package gpu

import (
	"math"
	"strconv"
	"sync"
	"time"
)

// Sample is what the collector read from every GPU at one instant.
type Sample struct {
	Time time.Time
	GPUs []GPUSample
}

// GPUSample is one GPU's values in a Sample; NaN where not read.
type GPUSample struct {
	Device            Device
	PowerWatts        float64 // DCGM_FI_DEV_POWER_USAGE
	EnergyMillijoules float64 // DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION
	GPUUtilPercent    float64 // DCGM_FI_DEV_GPU_UTIL
	FBUsedMiB         float64 // DCGM_FI_DEV_FB_USED
}

// Window keeps the latest samples in a ring buffer, so reports can ask what
// the GPUs did during a run that ended recently. It is safe for concurrent use.
type Window struct {
	mu      sync.Mutex
	samples []Sample // ring, oldest at head once full
	head    int
	full    bool
}

// NewWindow returns a window that keeps the last capacity samples.
func NewWindow(capacity int) *Window {
	return &Window{samples: make([]Sample, 0, max(capacity, 2))}
}

// Add appends a sample; samples must come in time order.
func (w *Window) Add(s Sample) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.full {
		w.samples = append(w.samples, s)
		w.full = len(w.samples) == cap(w.samples)
		return
	}
	w.samples[w.head] = s
	w.head = (w.head + 1) % len(w.samples)
}

// Energy sources of GPUStats.EnergySource.
const (
	// EnergyFromCounter: the delta of DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION.
	EnergyFromCounter = "counter"
	// EnergyFromPower: DCGM_FI_DEV_POWER_USAGE integrated over time, for GPUs
	// without the counter or whose counter reset during the window.
	EnergyFromPower = "power"
	// EnergyMixed: the total of GPUs whose energy came from different sources.
	EnergyMixed = "mixed"
)

// WindowStats is what the GPUs did over [Start, End], per GPU and in total.
type WindowStats struct {
	Start        time.Time  `json:"start"`
	End          time.Time  `json:"end"`
	OutputTokens int64      `json:"output_tokens"`
	GPUs         []GPUStats `json:"gpus"`
	// Total sums power, energy and memory over the GPUs (peaks are of the
	// per-sample sums) and averages utilisation.
	Total GPUStats `json:"total"`
}

// GPUStats is one GPU's (or the total's) statistics; a nil value was not
// available. Averages and energies interpolate linearly between samples, so
// a window need not line up with them; peaks are of the samples inside it.
type GPUStats struct {
	GPU       string `json:"gpu,omitempty"`
	UUID      string `json:"uuid,omitempty"`
	ModelName string `json:"model_name,omitempty"`
	// Samples taken inside the window.
	Samples int `json:"samples"`
	// CoveredSeconds of the window that samples of power bracket.
	CoveredSeconds             float64  `json:"covered_seconds"`
	AvgPowerWatts              *float64 `json:"avg_power_watts,omitempty"`
	PeakPowerWatts             *float64 `json:"peak_power_watts,omitempty"`
	EnergyJoules               *float64 `json:"energy_joules,omitempty"`
	EnergySource               string   `json:"energy_source,omitempty"`
	EnergyPerOutputTokenJoules *float64 `json:"energy_per_output_token_joules,omitempty"`
	AvgGPUUtilPercent          *float64 `json:"avg_gpu_util_percent,omitempty"`
	PeakFBUsedMiB              *float64 `json:"peak_fb_used_mib,omitempty"`
}

// Stats returns the statistics over [start, end]; outputTokens, when
// positive, gives the energy per output token.
func (w *Window) Stats(start, end time.Time, outputTokens int64) WindowStats {
	st := WindowStats{Start: start, End: end, OutputTokens: outputTokens}
	samples := w.around(start, end)
	if !end.After(start) || len(samples) == 0 {
		return st
	}

	// One series per GPU, in order of first appearance.
	type series struct {
		dev    Device
		points []point
	}
	var all []*series
	byKey := map[string]*series{}
	for _, s := range samples {
		for _, g := range s.GPUs {
			key := g.Device.UUID
			if key == "" {
				key = "gpu" + uintString(g.Device.GPU)
			}
			sr := byKey[key]
			if sr == nil {
				sr = &series{dev: g.Device}
				byKey[key] = sr
				all = append(all, sr)
			}
			sr.points = append(sr.points, point{t: s.Time, g: g})
		}
	}

	var (
		energySrc         string
		utilSum           float64
		utilN             int
		totalPower, total float64
		havePower, haveE  bool
	)
	for _, sr := range all {
		gs := gpuStats(sr.points, start, end, outputTokens)
		gs.GPU, gs.UUID, gs.ModelName = uintString(sr.dev.GPU), sr.dev.UUID, sr.dev.ModelName
		st.GPUs = append(st.GPUs, gs)
		if gs.AvgPowerWatts != nil {
			totalPower += *gs.AvgPowerWatts
			havePower = true
			st.Total.CoveredSeconds = max(st.Total.CoveredSeconds, gs.CoveredSeconds)
		}
		if gs.EnergyJoules != nil {
			total += *gs.EnergyJoules
			haveE = true
			switch energySrc {
			case "", gs.EnergySource:
				energySrc = gs.EnergySource
			default:
				energySrc = EnergyMixed
			}
		}
		if gs.AvgGPUUtilPercent != nil {
			utilSum += *gs.AvgGPUUtilPercent
			utilN++
		}
	}
	if havePower {
		st.Total.AvgPowerWatts = &totalPower
	}
	if haveE {
		st.Total.EnergyJoules, st.Total.EnergySource = &total, energySrc
		st.Total.EnergyPerOutputTokenJoules = perToken(total, outputTokens)
	}
	if utilN > 0 {
		st.Total.AvgGPUUtilPercent = ptr(utilSum / float64(utilN))
	}
	for _, s := range samples {
		if s.Time.Before(start) || s.Time.After(end) {
			continue
		}
		st.Total.Samples++
		power, fb := sumOf(s.GPUs, func(g GPUSample) float64 { return g.PowerWatts }),
			sumOf(s.GPUs, func(g GPUSample) float64 { return g.FBUsedMiB })
		st.Total.PeakPowerWatts = maxPtr(st.Total.PeakPowerWatts, power)
		st.Total.PeakFBUsedMiB = maxPtr(st.Total.PeakFBUsedMiB, fb)
	}
	return st
}

// around returns, oldest first, the samples in [start, end] and the nearest
// one on each side, which interpolation at the edges needs.
func (w *Window) around(start, end time.Time) []Sample {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.samples)
	at := func(i int) Sample { return w.samples[(w.head+i)%n] }
	if n == 0 {
		return nil
	}
	first := 0 // the last sample at or before start, else the oldest
	for i := range n {
		if at(i).Time.After(start) {
			break
		}
		first = i
	}
	last := first // the first sample after end, else the newest
	for last < n-1 && !at(last).Time.After(end) {
		last++
	}
	out := make([]Sample, 0, last-first+1)
	for i := first; i <= last; i++ {
		out = append(out, at(i))
	}
	return out
}

type point struct {
	t time.Time
	g GPUSample
}

func gpuStats(points []point, start, end time.Time, outputTokens int64) GPUStats {
	var gs GPUStats
	for _, p := range points {
		if p.t.Before(start) || p.t.After(end) {
			continue
		}
		gs.Samples++
		gs.PeakPowerWatts = maxPtr(gs.PeakPowerWatts, p.g.PowerWatts)
		gs.PeakFBUsedMiB = maxPtr(gs.PeakFBUsedMiB, p.g.FBUsedMiB)
	}

	powerJ, covered := integrate(points, start, end, func(g GPUSample) float64 { return g.PowerWatts })
	if covered > 0 {
		gs.CoveredSeconds = covered
		gs.AvgPowerWatts = ptr(powerJ / covered)
	}
	if util, c := integrate(points, start, end, func(g GPUSample) float64 { return g.GPUUtilPercent }); c > 0 {
		gs.AvgGPUUtilPercent = ptr(util / c)
	}
	if mj, ok := counterDelta(points, start, end, func(g GPUSample) float64 { return g.EnergyMillijoules }); ok {
		gs.EnergyJoules, gs.EnergySource = ptr(mj/1000), EnergyFromCounter
	} else if covered > 0 {
		gs.EnergyJoules, gs.EnergySource = ptr(powerJ), EnergyFromPower
	}
	if gs.EnergyJoules != nil {
		gs.EnergyPerOutputTokenJoules = perToken(*gs.EnergyJoules, outputTokens)
	}
	return gs
}

// segments calls f for each pair of consecutive valid values of get that
// overlaps [start, end], with the overlap [lo, hi] and the values
// interpolated linearly at its ends. Invalid (NaN) values are bridged.
func segments(points []point, start, end time.Time, get func(GPUSample) float64, f func(lo, hi, vlo, vhi float64)) {
	var (
		prev   point
		pv     float64
		havePv bool
	)
	s, e := float64(start.UnixNano())/1e9, float64(end.UnixNano())/1e9
	for _, p := range points {
		v := get(p.g)
		if math.IsNaN(v) {
			continue
		}
		if havePv {
			ta, tb := float64(prev.t.UnixNano())/1e9, float64(p.t.UnixNano())/1e9
			lo, hi := max(ta, s), min(tb, e)
			if hi > lo && tb > ta {
				at := func(t float64) float64 { return pv + (v-pv)*(t-ta)/(tb-ta) }
				f(lo, hi, at(lo), at(hi))
			}
		}
		prev, pv, havePv = p, v, true
	}
}

// integrate returns the trapezoidal integral of get over the part of
// [start, end] its samples cover, and that part's length in seconds.
func integrate(points []point, start, end time.Time, get func(GPUSample) float64) (area, covered float64) {
	segments(points, start, end, get, func(lo, hi, vlo, vhi float64) {
		area += (vlo + vhi) / 2 * (hi - lo)
		covered += hi - lo
	})
	return area, covered
}

// counterDelta returns how much a counter grew over [start, end]; false when
// there are too few samples or it went down (a driver reload resets it).
func counterDelta(points []point, start, end time.Time, get func(GPUSample) float64) (delta float64, ok bool) {
	reset := false
	segments(points, start, end, get, func(_, _, vlo, vhi float64) {
		if vhi < vlo {
			reset = true
		}
		delta += vhi - vlo
		ok = true
	})
	return delta, ok && !reset
}

func sumOf(gs []GPUSample, get func(GPUSample) float64) float64 {
	sum, seen := 0.0, false
	for _, g := range gs {
		if v := get(g); !math.IsNaN(v) {
			sum += v
			seen = true
		}
	}
	if !seen {
		return math.NaN()
	}
	return sum
}

func perToken(joules float64, tokens int64) *float64 {
	if tokens <= 0 {
		return nil
	}
	return ptr(joules / float64(tokens))
}

func maxPtr(cur *float64, v float64) *float64 {
	if math.IsNaN(v) || cur != nil && *cur >= v {
		return cur
	}
	return ptr(v)
}

func ptr(v float64) *float64 { return &v }

func uintString(u uint) string { return strconv.FormatUint(uint64(u), 10) }
