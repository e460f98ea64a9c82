package scenarios

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Bound is the range a quantity may take. Each one is written here once:
// scenario validation, bench's flags and the burst API consult it, and the
// Bounds table of docs/configuration.md is checked against Bounds by a test.
// Beyond a bound a value is taken as a mistake rather than built: past
// these, a prompt, a pool or a schedule would not fit in memory.
type Bound struct {
	// Quantity says what is bounded, for the docs table and messages.
	Quantity string
	Min, Max float64
	// Unit follows the numbers in messages; empty for a bare count.
	Unit string
}

// The bounds.
var (
	// TokenBound bounds every length in tokens: a prompt's, an output's, a
	// shared system prompt's, a prefix's, a user context's, a block's.
	TokenBound = Bound{Quantity: "tokens of one prompt, output, prefix or block", Min: 1, Max: 1 << 20, Unit: "tokens"}
	// EntryBound bounds a pool of distinct entries or prefixes: its
	// shuffled order is held in memory.
	EntryBound = Bound{Quantity: "distinct entries or prefixes of a synthetic pool", Min: 1, Max: 1 << 20}
	// TurnBound bounds the turns of a conversation: each later turn
	// carries all the earlier ones.
	TurnBound = Bound{Quantity: "user turns of a synthetic conversation", Min: 1, Max: 1000, Unit: "turns"}
	// PassageBound bounds the passages of a synthetic ranking request.
	PassageBound = Bound{Quantity: "passages of a synthetic ranking request", Min: 1, Max: 10_000, Unit: "passages"}
	// RateBound bounds an arrival rate.
	RateBound = Bound{Quantity: "arrival rate", Min: 0, Max: 100_000, Unit: "requests/s"}
	// ConcurrencyBound bounds the requests a probe or burst has in flight.
	ConcurrencyBound = Bound{Quantity: "requests in flight of one probe or burst", Min: 1, Max: 100_000, Unit: "requests"}
	// RequestBound bounds a run's request count.
	RequestBound = Bound{Quantity: "requests of one run or warmup", Min: 1, Max: 1e9, Unit: "requests"}
	// DurationBound bounds every duration; negative ones are refused by the
	// field's own check, which says what its zero means.
	DurationBound = Bound{Quantity: "any duration", Min: 0, Max: float64(30 * 24 * time.Hour), Unit: "duration"}
	// WorkerBound bounds the worker processes.
	WorkerBound = Bound{Quantity: "worker processes", Min: 1, Max: 1024, Unit: "workers"}
	// PromptMemoryBound bounds the estimated memory of the prompts one
	// probe or burst holds at once (see promptMemory).
	PromptMemoryBound = Bound{Quantity: "estimated memory of the prompts one probe or burst holds at once", Min: 0, Max: 16 << 30, Unit: "bytes"}
)

// Bounds lists the bounds in the order of the docs table.
var Bounds = []*Bound{&TokenBound, &EntryBound, &TurnBound, &PassageBound, &RateBound, &ConcurrencyBound,
	&RequestBound, &DurationBound, &WorkerBound, &PromptMemoryBound}

// Format writes v in the bound's unit: durations as Go durations, byte
// counts in GiB, other numbers whole with thousands separators.
func (b *Bound) Format(v float64) string {
	switch b.Unit {
	case "duration":
		return time.Duration(v).String()
	case "bytes":
		return strconv.FormatFloat(v/(1<<30), 'g', 4, 64) + " GiB"
	}
	s := thousands(v)
	if b.Unit != "" {
		s += " " + b.Unit
	}
	return s
}

// Range is the bound as docs and messages write it, e.g. "1 to 1,048,576 tokens".
func (b *Bound) Range() string {
	lo := thousands(b.Min)
	if b.Unit == "duration" {
		lo = "0s"
	}
	return lo + " to " + b.Format(b.Max)
}

// Contains reports whether v lies in the bound (NaN does not).
func (b *Bound) Contains(v float64) bool { return v >= b.Min && v <= b.Max }

// Check returns an error naming what, v and the range when v lies outside it.
func (b *Bound) Check(what string, v float64) error {
	if b.Contains(v) {
		return nil
	}
	return fmt.Errorf("%s %s is out of range: must be %s", what, b.value(v), b.Range())
}

// checkMax reports at path a value above the bound, which the field's own
// check (of its lower end, which says what its zero means) leaves alone.
func (b *Bound) checkMax(l *loader, path string, v float64) {
	if v > b.Max {
		l.errorf(path, "must be at most %s (%s: %s), not %s", b.Format(b.Max), b.Quantity, b.Range(), b.value(v))
	}
}

// value writes v as it was given: a duration as one (in seconds past what
// a time.Duration holds), a number in full.
func (b *Bound) value(v float64) string {
	switch {
	case b.Unit != "duration":
		return number(v)
	case math.Abs(v) < math.MaxInt64:
		return time.Duration(v).String()
	}
	return number(v/float64(time.Second)) + "s"
}

// number writes v in full, not in e-notation, as far as float64 holds it.
func number(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// thousands writes a whole v with comma separators, e.g. 1,048,576.
func thousands(v float64) string {
	s := number(v)
	if strings.ContainsAny(s, ".e") || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

var durationType = reflect.TypeFor[Duration]()

// checkDurations reports every duration written under v above
// DurationBound, so that a field added later is bounded too.
func checkDurations(l *loader, path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			checkDurations(l, path, v.Elem())
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			checkDurations(l, join(path, k.String()), v.MapIndex(k))
		}
	case reflect.Slice:
		for i := range v.Len() {
			checkDurations(l, fmt.Sprintf("%s[%d]", path, i), v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			checkDurations(l, join(path, name), v.Field(i))
		}
	case reflect.Int64:
		// A default that follows another field (a burst's max.duration) is
		// reported there, where it was written.
		if v.Type() == durationType && l.written(path) {
			DurationBound.checkMax(l, path, float64(v.Int()))
		}
	}
}

// bytesPerToken is what a generated token takes in a prompt: a common
// word and its space, and the request body that carries it.
const bytesPerToken = 16

// promptMemory estimates the bytes of the prompts p holds at once: each
// request or session built ahead (lookahead) or in flight, times its
// tokens. Sizes multiply — a session's turns each carry the history
// before them — so a file whose every value is in range may still ask
// for more memory than a machine has.
func (p *Probe) promptMemory(timeout time.Duration) float64 {
	s := p.Dataset.Synthetic
	if s == nil {
		return 0 // a file's lengths are checked entry by entry as it is read
	}
	length := func(l Lengths) float64 { return l.Mean + 4*l.Stddev }
	shared := float64(s.SharedSystemPromptLength + s.UserContextLength)
	if s.Prefix != nil {
		shared += float64(s.Prefix.Length)
	}
	turn := length(s.InputTokens) + length(s.OutputTokens)
	switch {
	case s.SequenceDistribution != nil:
		turn = 0
		for _, p := range s.SequenceDistribution {
			turn = max(turn, length(p.InputTokens)+length(p.OutputTokens))
		}
	case s.RangeRatio != nil:
		turn = s.InputTokens.Mean*(1+s.RangeRatio.Input) + s.OutputTokens.Mean*(1+s.RangeRatio.Output) + 2
	case s.Rankings != nil:
		r := s.Rankings
		turn = length(r.QueryTokens) + length(r.Passages)*length(r.PassageTokens)
	}
	tokens := shared + turn
	if c := s.Conversation; c != nil {
		turns := length(c.Turns)
		tokens = turns * (shared + turns*turn) // turn k carries the k turns before it
	}
	return tokens * bytesPerToken * (Lookahead + p.Arrival.inFlight(timeout))
}

// Lookahead is the requests (or sessions) a probe builds ahead of their
// send time, so that building never delays sending.
const Lookahead = 64

// inFlight is the most requests the arrival can have in flight: its
// concurrency, its cap, or for an open loop without one its highest rate
// times the longest a request may take, up to the most a cap may be.
func (a *Arrival) inFlight(timeout time.Duration) float64 {
	if a.Pattern == ArrivalConcurrency {
		return max(float64(a.Concurrency), a.RampTo)
	}
	if a.MaxConcurrency > 0 {
		return float64(a.MaxConcurrency)
	}
	rate := max(a.Rate, a.RampTo)
	for _, s := range a.Series {
		rate = max(rate, s.Rate)
	}
	return min(rate*timeout.Seconds(), ConcurrencyBound.Max)
}

// checkPromptMemory reports a probe or burst whose prompts would take more
// memory than PromptMemoryBound.
func checkPromptMemory(l *loader, path string, p *Probe, targets map[string]*Target) {
	t := targets[p.Target]
	if t == nil {
		return
	}
	for _, e := range l.errs {
		if strings.HasPrefix(e.Field, path+".") { // a value it multiplies was refused already
			return
		}
	}
	if m := p.promptMemory(time.Duration(t.Timeout)); m > PromptMemoryBound.Max {
		l.errorf(join(path, "dataset"), "would hold about %s of prompts at once (tokens per request or session × (%d built ahead + requests in flight: %s)), more than the %s allowed (%s); lower the lengths, the turns, the concurrency or the rate, or cap the requests in flight with max_concurrency",
			PromptMemoryBound.Format(m), Lookahead, number(math.Round(p.Arrival.inFlight(time.Duration(t.Timeout)))), PromptMemoryBound.Format(PromptMemoryBound.Max), PromptMemoryBound.Quantity)
	}
}
