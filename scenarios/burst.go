package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Burst is heavier, finite load against one target: started on a schedule
// (cron or interval) or on demand through the API, it sends its requests,
// waits for the answers and keeps a report with exact percentiles. Its
// requests also feed the request metrics with phase="burst" and the burst's
// name as the scenario label. A target runs one burst at a time.
type Burst struct {
	// Target names the target to send to. Required.
	Target string `yaml:"target"`
	// Schedule starts the burst at the times of a five-field cron expression
	// (minute hour day-of-month month day-of-week, e.g. "0 3 * * *") or a
	// descriptor (@hourly, @daily, @weekly, @monthly, @yearly), in the
	// daemon's time zone unless prefixed with CRON_TZ=Zone, e.g.
	// "CRON_TZ=Europe/Berlin 0 3 * * *". At most one of schedule and every.
	Schedule string `yaml:"schedule"`
	// Every starts the burst at this interval, the first time one interval
	// after the burst is loaded; > 0. At most one of schedule and every.
	Every Duration `yaml:"every"`
	// OnDemand lets the API start the burst (POST /api/v1/bursts/NAME).
	// Default false. A burst needs at least one of schedule, every and
	// on_demand.
	OnDemand bool `yaml:"on_demand"`
	// Duration ends the burst: no request is sent after this long; > 0.
	// At least one of duration and requests; with both, whichever comes
	// first ends it (AIPerf's --request-count with --benchmark-duration).
	Duration Duration `yaml:"duration"`
	// Requests ends the burst after this many requests (of all replicas
	// together when sharded); >= 1.
	Requests uint64 `yaml:"requests"`
	// Arrival, Dataset, Params and SLO are as for probes; arrival usually
	// sets a higher rate, a ramp, or pattern concurrency.
	Arrival Arrival        `yaml:"arrival"`
	Dataset Dataset        `yaml:"dataset"`
	Params  map[string]any `yaml:"params"`
	SLO     SLO            `yaml:"slo"`
	// Warmup requests are sent first, with the burst's arrival and dataset,
	// and left out of the report and of the phase="burst" metrics. Default
	// none.
	Warmup Warmup `yaml:"warmup"`
	// GracePeriod is how long requests still in flight when a burst with a
	// duration ends may finish; then they are cancelled. A burst that ends
	// by request count waits for them, each up to the target's timeout
	// (finite.GraceFor). Default 30s; >= 0.
	GracePeriod Duration `yaml:"grace_period"`
	// Overlap says what a scheduled start does while the target runs a
	// burst: skip (count it in inferprobe_burst_skipped_total) or queue (run
	// it once the target is free; at most one waiting run per burst, a
	// further start is skipped). Default skip. API starts are refused
	// instead (409).
	Overlap string `yaml:"overlap"`
	// Max bounds what an API start may override; by default the configured
	// values, so that overrides can only lower them.
	Max BurstMax `yaml:"max"`
	// Search makes each run a capacity search over the concurrency of the
	// burst's closed loop; nil for a run at the configured load.
	Search *BurstSearch `yaml:"search"`
}

// Warmup is the traffic sent before a burst is measured; with both fields,
// whichever comes first ends it.
type Warmup struct {
	// Requests is the number of warmup requests; >= 1.
	Requests uint64 `yaml:"requests"`
	// Duration is how long warmup requests are sent for; > 0.
	Duration Duration `yaml:"duration"`
}

// BurstMax holds the largest values an API start may ask for. Each defaults
// to the burst's configured value; a limit the burst does not set (duration
// of a burst that ends by requests, or requests of one that ends by time,
// concurrency of an open loop without max_concurrency) may then only be
// added, never raised, since any value lowers "unbounded".
type BurstMax struct {
	// Duration is the longest duration override; > 0, at least duration.
	Duration Duration `yaml:"duration"`
	// Requests is the largest requests override; >= 1, at least requests.
	Requests uint64 `yaml:"requests"`
	// Rate is the highest arrival.rate override; > 0, at least arrival.rate.
	Rate float64 `yaml:"rate"`
	// Concurrency is the highest override of arrival.concurrency (closed
	// loop) or arrival.max_concurrency (open loop); >= 1, at least the
	// configured one.
	Concurrency int `yaml:"concurrency"`
}

// Overlap policies.
const (
	OverlapSkip  = "skip"
	OverlapQueue = "queue"
)

const defaultBurstGracePeriod = 30 * time.Second

// Probe returns the burst's request stream as a probe, the form the
// scheduler runs.
func (b *Burst) Probe() *Probe {
	return &Probe{Target: b.Target, Arrival: b.Arrival, Dataset: b.Dataset, Params: b.Params, SLO: b.SLO}
}

// ParseSchedule parses a burst's schedule, as validation accepts it.
func ParseSchedule(spec string) (cron.Schedule, error) {
	expr := spec // the schedule without its time zone
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		_, rest, ok := strings.Cut(spec, " ")
		if !ok { // the cron parser panics on a time zone that no expression follows
			return nil, fmt.Errorf("%q has a time zone but no schedule, e.g. \"CRON_TZ=Europe/Berlin 0 3 * * *\"", spec)
		}
		expr = strings.TrimSpace(rest)
	}
	// Behind a time zone too: the cron parser would take "@every 0s" as every second.
	if strings.HasPrefix(expr, "@every") {
		return nil, fmt.Errorf("write every: %s instead of schedule: %q", strings.TrimSpace(strings.TrimPrefix(expr, "@every")), spec)
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("%q is not a cron schedule (%v); write five fields, minute hour day-of-month month day-of-week, e.g. \"0 3 * * *\", or @hourly, @daily, @weekly, @monthly", spec, err)
	}
	if s.Next(time.Now()).IsZero() {
		return nil, fmt.Errorf("%q never fires", spec)
	}
	return s, nil
}

func (b *Burst) setDefaults(written func(field string) bool) {
	p := Probe{Arrival: b.Arrival, Dataset: b.Dataset}
	p.setDefaults(written)
	b.Arrival, b.Dataset = p.Arrival, p.Dataset
	if !written("grace_period") {
		b.GracePeriod = Duration(defaultBurstGracePeriod)
	}
	if !written("overlap") {
		b.Overlap = OverlapSkip
	}
	if !written("max.duration") {
		b.Max.Duration = b.Duration
	}
	if !written("max.requests") {
		b.Max.Requests = b.Requests
	}
	if !written("max.rate") {
		b.Max.Rate = b.Arrival.Rate
	}
	if !written("max.concurrency") {
		b.Max.Concurrency = b.concurrency()
	}
}

// concurrency is the setting a concurrency override replaces: the closed
// loop's requests in flight, or the open loop's cap (0: none).
func (b *Burst) concurrency() int {
	if b.Arrival.Pattern == ArrivalConcurrency {
		return b.Arrival.Concurrency
	}
	return b.Arrival.MaxConcurrency
}

func (b *Burst) validate(l *loader, path string, targets map[string]*Target) {
	written := l.under(path)
	b.Probe().validate(l, path, targets)

	if written("schedule") {
		if _, err := ParseSchedule(b.Schedule); err != nil {
			l.errorf(join(path, "schedule"), "%s", err)
		}
		if written("every") {
			l.errorf(join(path, "every"), "cannot be used with schedule; keep one")
		}
	}
	if written("every") && b.Every <= 0 {
		l.errorf(join(path, "every"), "must be > 0, e.g. every: 6h")
	}
	if !written("schedule") && !written("every") && !b.OnDemand {
		l.errorf(path, "never starts: set schedule (e.g. schedule: \"0 3 * * *\"), every (e.g. every: 6h) or on_demand: true")
	}

	if written("duration") && b.Duration <= 0 {
		l.errorf(join(path, "duration"), "must be > 0, e.g. duration: 2m")
	}
	if written("requests") && b.Requests < 1 {
		l.errorf(join(path, "requests"), "must be >= 1, e.g. requests: 1000")
	}
	RequestBound.checkMax(l, join(path, "requests"), float64(b.Requests))
	if !written("duration") && !written("requests") {
		l.errorf(path, "never ends: set duration (e.g. duration: 2m), requests (e.g. requests: 1000), or both (whichever comes first)")
	}

	b.Warmup.validate(l, join(path, "warmup"))
	if b.GracePeriod < 0 {
		l.errorf(join(path, "grace_period"), "must be >= 0, not %s", b.GracePeriod)
	}
	if b.Overlap != OverlapSkip && b.Overlap != OverlapQueue {
		l.errorf(join(path, "overlap"), "must be %s or %s, not %q", OverlapSkip, OverlapQueue, b.Overlap)
	}
	b.validateMax(l, join(path, "max"))
	if b.Search != nil {
		b.Search.validate(l, join(path, "search"), b, targets[b.Target])
	}
}

func (w *Warmup) validate(l *loader, path string) {
	written := l.under(path)
	if written("requests") && w.Requests < 1 {
		l.errorf(join(path, "requests"), "must be >= 1, e.g. requests: 20 (leave warmup out for none)")
	}
	RequestBound.checkMax(l, join(path, "requests"), float64(w.Requests))
	if written("duration") && w.Duration <= 0 {
		l.errorf(join(path, "duration"), "must be > 0, e.g. duration: 10s (leave warmup out for none)")
	}
	if l.written(path) && !written("requests") && !written("duration") {
		l.errorf(path, "must set requests (e.g. requests: 20), duration (e.g. duration: 10s), or both (whichever comes first)")
	}
}

// validateMax checks the maxima that are written; defaults are the
// configured values and need no check.
func (b *Burst) validateMax(l *loader, path string) {
	written := l.under(path)
	if written("duration") {
		switch {
		case b.Max.Duration <= 0:
			l.errorf(join(path, "duration"), "must be > 0, e.g. duration: 10m")
		case b.Max.Duration < b.Duration:
			l.errorf(join(path, "duration"), "must be at least duration (%s)", b.Duration)
		}
	}
	if written("requests") {
		switch {
		case b.Max.Requests < 1:
			l.errorf(join(path, "requests"), "must be >= 1, e.g. requests: 10000")
		case b.Max.Requests < b.Requests:
			l.errorf(join(path, "requests"), "must be at least requests (%d)", b.Requests)
		}
		RequestBound.checkMax(l, join(path, "requests"), float64(b.Max.Requests))
	}
	if written("rate") {
		switch {
		case b.Arrival.Pattern == ArrivalConcurrency || len(b.Arrival.Series) > 0:
			l.errorf(join(path, "rate"), "applies only to an arrival with a rate; remove it")
		case !(b.Max.Rate > 0):
			l.errorf(join(path, "rate"), "must be > 0, e.g. rate: 50")
		case b.Max.Rate < b.Arrival.Rate:
			l.errorf(join(path, "rate"), "must be at least arrival.rate (%g)", b.Arrival.Rate)
		}
		RateBound.checkMax(l, join(path, "rate"), b.Max.Rate)
	}
	if written("concurrency") {
		switch c := b.concurrency(); {
		case b.Max.Concurrency < 1:
			l.errorf(join(path, "concurrency"), "must be >= 1, e.g. concurrency: 64")
		case b.Max.Concurrency < c:
			l.errorf(join(path, "concurrency"), "must be at least the configured concurrency (%d)", c)
		}
		ConcurrencyBound.checkMax(l, join(path, "concurrency"), float64(b.Max.Concurrency))
	}
}
