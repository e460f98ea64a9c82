// Package traffic makes the probe records of simulated servers, for backtesting alert rules:
// heavy-tailed latencies that follow a daily and weekly load cycle with day-to-day jitter,
// short bursts of queueing, and regressions injected at known times. The models are built to
// be hard on the rules: every source of variation a real endpoint shows that is not a
// regression, at the strength that makes a naive rule page.
package traffic

import (
	"container/heap"
	"iter"
	"math"
	"math/rand/v2"
	"time"

	"github.com/inferprobe/inferprobe/alerts/backtest"
)

// Server is a simulated endpoint, as its probes see it.
type Server struct {
	Name string

	// The TTFT body is lognormal: median TTFTMedian at no load, (1+TTFTLoad)x that at full
	// load, log standard deviation TTFTSigma.
	TTFTMedian time.Duration
	TTFTSigma  float64
	TTFTLoad   float64

	// Long prompts: a share LongShare of requests has LongFactor x the TTFT of the body, a
	// second mode (0: none).
	LongShare  float64
	LongFactor float64

	// The queueing tail: a request waits in the queue for an extra delay with probability
	// TailShare at full load (a third of it at no load). The delay has mean TailMean, and is
	// exponential when TailShape is 0, else Pareto with that shape (heavier as it nears 1).
	TailShare float64
	TailMean  time.Duration
	TailShape float64

	// Each request's inter-token latency is lognormal: median ITLMedian, (1+ITLLoad)x at full
	// load, log standard deviation ITLSigma. OutputTokens is the median output length.
	ITLMedian    time.Duration
	ITLSigma     float64
	ITLLoad      float64
	OutputTokens int

	// ErrorRatio is the share of requests that fail on an unchanged server.
	ErrorRatio float64

	// The load cycle: 1 at PeakHour (UTC) and 0 twelve hours later, times WeekendLoad on
	// Saturdays and Sundays, each day's amplitude scaled by a uniform factor in 1 ± DayJitter;
	// one day's level turns into the next over the 4 hours around midnight.
	PeakHour    float64
	WeekendLoad float64
	DayJitter   float64

	// Bursts of queueing: BurstsPerDay on average (a Poisson process), each lasting a uniform
	// time from a third of BurstLength to 5/3 of it, during which every TTFT is BurstFactor x
	// longer. Bounded, so that a burst stays a burst: one that lasts a quarter of an hour is
	// an incident, and paging for it is right.
	BurstsPerDay float64
	BurstLength  time.Duration
	BurstFactor  float64

	// A request is good when it succeeds with a TTFT within TTFTSLO and an ITL within ITLSLO.
	TTFTSLO time.Duration
	ITLSLO  time.Duration
}

// Kind is what a regression changes.
type Kind string

const (
	Slower   Kind = "slower" // TTFT and ITL, and so request latency, Factor x longer
	TTFTOnly Kind = "ttft"   // TTFT Factor x longer
	ITLOnly  Kind = "itl"    // ITL Factor x longer
	TailOnly Kind = "tail"   // queueing tail Factor x as frequent and as long: median unchanged
	Errors   Kind = "errors" // a share Factor of requests fail
	Silent   Kind = "silent" // no probe finishes
)

// Regression is a change of the server from Start for Length.
type Regression struct {
	Kind   Kind
	Factor float64
	Start  time.Time
	Length time.Duration
}

func (r Regression) active(t time.Time) bool {
	return !t.Before(r.Start) && t.Before(r.Start.Add(r.Length))
}

// Model is the model label of every simulated probe; the target label is the server's name.
const Model = "simulated"

// maxTail caps a queueing delay, as a client's timeout would.
const maxTail = 60 * time.Second

// Probes returns the records of probes sent to s at a Poisson rate (per second) from from for
// span, in the order they end, with regs applied to the requests sent while they are active.
// The same seed gives the same records.
func (s Server) Probes(from time.Time, span time.Duration, rate float64, seed uint64, regs ...Regression) iter.Seq[backtest.Probe] {
	return func(yield func(backtest.Probe) bool) {
		rng := rand.New(rand.NewPCG(seed, 0x1f2e3d4c))
		bursts := s.bursts(from, span, seed)
		days := s.dayScales(from, span, seed)
		var pending endHeap
		end := from.Add(span)
		t := from
		for {
			t = t.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
			for len(pending) > 0 && !pending[0].Time.After(t) {
				if !yield(heap.Pop(&pending).(backtest.Probe)) {
					return
				}
			}
			if !t.Before(end) {
				break
			}
			p, ok := s.request(rng, t, bursts, days, from, regs)
			if ok {
				p.Target, p.Model = s.Name, Model
				heap.Push(&pending, p)
			}
		}
		for len(pending) > 0 {
			p := heap.Pop(&pending).(backtest.Probe)
			if !p.Time.Before(end) {
				return
			}
			if !yield(p) {
				return
			}
		}
	}
}

// request simulates one request sent at t; false when it does not finish (a silent server).
func (s Server) request(rng *rand.Rand, t time.Time, bursts []span, days []float64, from time.Time, regs []Regression) (backtest.Probe, bool) {
	load := s.load(t, days, from)
	ttftScale, itlScale, tailScale, errRatio := 1.0, 1.0, 1.0, s.ErrorRatio
	for _, r := range regs {
		if !r.active(t) {
			continue
		}
		switch r.Kind {
		case Slower:
			ttftScale *= r.Factor
			itlScale *= r.Factor
		case TTFTOnly:
			ttftScale *= r.Factor
		case ITLOnly:
			itlScale *= r.Factor
		case TailOnly:
			tailScale *= r.Factor
		case Errors:
			errRatio = r.Factor
		case Silent:
			return backtest.Probe{}, false
		}
	}
	// Draw every variate for every request, so a regression changes the values it scales and
	// nothing else: the same seed gives the same requests with and without it.
	body := math.Exp(rng.NormFloat64() * s.TTFTSigma)
	tailDraw, tailSize := rng.Float64(), rng.Float64()
	itlDraw := math.Exp(rng.NormFloat64() * s.ITLSigma)
	outDraw := math.Exp(rng.NormFloat64() * 0.5)
	errDraw := rng.Float64()
	errLatency := time.Duration((0.02 + 2*rng.Float64()) * float64(time.Second))
	long := false
	if s.LongShare > 0 { // drawn only by models that have long prompts, so the others' draws stay as they were
		long = rng.Float64() < s.LongShare
	}

	if errDraw < errRatio {
		return backtest.Probe{Time: t.Add(errLatency), Latency: errLatency}, true
	}
	ttft := float64(s.TTFTMedian) * (1 + s.TTFTLoad*load) * body
	if long {
		ttft *= s.LongFactor
	}
	if tailDraw < s.TailShare*(1+2*load)/3*tailScale {
		ttft += min(s.tailDelay(tailSize)*tailScale, float64(maxTail))
	}
	if burstAt(bursts, t) {
		ttft *= s.BurstFactor
	}
	ttft *= ttftScale
	itl := float64(s.ITLMedian) * (1 + s.ITLLoad*load) * itlDraw * itlScale
	out := max(2, int(float64(s.OutputTokens)*outDraw))
	latency := ttft + itl*float64(out-1)
	p := backtest.Probe{
		Time:    t.Add(time.Duration(latency)),
		TTFT:    time.Duration(ttft),
		ITL:     time.Duration(itl),
		Latency: time.Duration(latency),
		OK:      true,
	}
	p.Good = p.TTFT <= s.TTFTSLO && p.ITL <= s.ITLSLO
	return p, true
}

// tailDelay is the queueing delay of uniform draw u.
func (s Server) tailDelay(u float64) float64 {
	mean := float64(s.TailMean)
	if s.TailShape == 0 {
		return -mean * math.Log(1-u)
	}
	// Pareto of shape a and scale xm has mean a xm / (a-1).
	a := s.TailShape
	xm := mean * (a - 1) / a
	return xm / math.Pow(1-u, 1/a)
}

// load is the server's load in [0, 1] at t.
func (s Server) load(t time.Time, days []float64, from time.Time) float64 {
	u := t.UTC()
	hour := float64(u.Hour()) + float64(u.Minute())/60 + float64(u.Second())/3600
	l := 0.5 + 0.5*math.Cos(2*math.Pi*(hour-s.PeakHour)/24)
	return min(l*s.dayFactor(u, days, from), 1)
}

// loadChange is how long the load takes to move from one day's level to the next (into or out
// of a weekend, and each day's jitter), centred on midnight UTC: the hours over which the users
// of a service in a few time zones start their day. A load that stepped at midnight would look
// like a deploy to any rule that pages on a step, which no traffic does: the rules would be
// judged on an artefact of the model.
const loadChange = 4 * time.Hour

// dayFactor is the weekend and jitter factor at t (UTC), each midnight's change spread over
// loadChange by a smoothstep.
func (s Server) dayFactor(t time.Time, days []float64, from time.Time) float64 {
	midnight := t.Add(12 * time.Hour).Truncate(24 * time.Hour) // the nearest
	x := float64(t.Sub(midnight)+loadChange/2) / float64(loadChange)
	if x <= 0 || x >= 1 {
		return s.dayLevel(t, days, from)
	}
	before, after := s.dayLevel(midnight.Add(-time.Nanosecond), days, from), s.dayLevel(midnight, days, from)
	return before + (after-before)*x*x*(3-2*x)
}

// dayLevel is the factor of t's day: WeekendLoad on Saturdays and Sundays, times the day's
// jitter (days counted from the midnight that begins from's day).
func (s Server) dayLevel(t time.Time, days []float64, from time.Time) float64 {
	f := 1.0
	if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
		f *= s.WeekendLoad
	}
	if d := int(t.Sub(from.UTC().Truncate(24*time.Hour)) / (24 * time.Hour)); d >= 0 && d < len(days) {
		f *= days[d]
	}
	return f
}

func (s Server) dayScales(from time.Time, span time.Duration, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0xda75))
	days := make([]float64, int(span/(24*time.Hour))+2)
	for i := range days {
		days[i] = 1 + s.DayJitter*(2*rng.Float64()-1)
	}
	return days
}

type span struct{ from, to time.Time }

func (s Server) bursts(from time.Time, length time.Duration, seed uint64) []span {
	if s.BurstsPerDay == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, 0xb0757))
	var out []span
	mean := 24 * time.Hour.Seconds() / s.BurstsPerDay
	for t := from; ; {
		t = t.Add(time.Duration(rng.ExpFloat64() * mean * float64(time.Second)))
		if t.After(from.Add(length)) {
			return out
		}
		out = append(out, span{t, t.Add(time.Duration((1 + 4*rng.Float64()) / 3 * float64(s.BurstLength)))})
	}
}

func burstAt(bursts []span, t time.Time) bool {
	for _, b := range bursts {
		if t.Before(b.from) {
			return false
		}
		if t.Before(b.to) {
			return true
		}
	}
	return false
}

type endHeap []backtest.Probe

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].Time.Before(h[j].Time) }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(backtest.Probe)) }
func (h *endHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}
