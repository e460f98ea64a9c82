package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Distributions a Profile can draw latencies from.
const (
	Constant  = "constant"
	Normal    = "normal"
	LogNormal = "lognormal"
)

var distributions = []string{Constant, Normal, LogNormal}

// Profile is the latency and fault profile. It can be changed at run time;
// a request keeps the profile it started with.
type Profile struct {
	TTFT            time.Duration // base time to first token, after admission (queue wait comes on top)
	PrefillPerToken time.Duration // extra time to first token per prompt token (prefill grows with prompt length)
	ITL             time.Duration // mean time between output tokens
	Distribution    string        // "constant" ("" means the same), "normal" or "lognormal": how TTFT and each ITL sample are drawn around their means
	Jitter          float64       // coefficient of variation for normal/lognormal (stddev/mean); ignored for constant
	ErrorRate       float64       // fraction of requests answered at once with HTTP 500 (OpenAI error JSON) instead of a completion
	StallRate       float64       // fraction of streams that go silent once, mid-stream, for StallDuration
	StallDuration   time.Duration
}

// Validate reports every problem with the profile at once.
func (p Profile) Validate() error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"ttft", p.TTFT}, {"prefill_per_token", p.PrefillPerToken}, {"itl", p.ITL}, {"stall_duration", p.StallDuration}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %s", d.name, d.v))
		}
	}
	if p.Distribution != "" && !slices.Contains(distributions, p.Distribution) {
		errs = append(errs, fmt.Errorf("distribution must be one of %s, got %q", strings.Join(distributions, ", "), p.Distribution))
	}
	if !(p.Jitter >= 0) || math.IsInf(p.Jitter, 1) { // the negation also catches NaN
		errs = append(errs, fmt.Errorf("jitter must be a finite number >= 0 (stddev/mean), got %v", p.Jitter))
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"error_rate", p.ErrorRate}, {"stall_rate", p.StallRate}} {
		if !(r.v >= 0 && r.v <= 1) {
			errs = append(errs, fmt.Errorf("%s must be a fraction between 0 and 1, got %v", r.name, r.v))
		}
	}
	if p.StallRate > 0 && p.StallDuration <= 0 {
		errs = append(errs, errors.New("stall_rate > 0 needs a stall_duration > 0"))
	}
	return errors.Join(errs...)
}

// normalized spells the default distribution out, so that the profile
// reads the same over the admin API whichever way it was set.
func (p Profile) normalized() Profile {
	if p.Distribution == "" {
		p.Distribution = Constant
	}
	return p
}

// LogValue logs a profile with the names the admin API uses.
func (p Profile) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Duration("ttft", p.TTFT),
		slog.Duration("prefill_per_token", p.PrefillPerToken),
		slog.Duration("itl", p.ITL),
		slog.String("distribution", p.Distribution),
		slog.Float64("jitter", p.Jitter),
		slog.Float64("error_rate", p.ErrorRate),
		slog.Float64("stall_rate", p.StallRate),
		slog.Duration("stall_duration", p.StallDuration),
	)
}

// profileJSON is the wire form: snake_case names, Go duration strings.
type profileJSON struct {
	TTFT            string  `json:"ttft"`
	PrefillPerToken string  `json:"prefill_per_token"`
	ITL             string  `json:"itl"`
	Distribution    string  `json:"distribution"`
	Jitter          float64 `json:"jitter"`
	ErrorRate       float64 `json:"error_rate"`
	StallRate       float64 `json:"stall_rate"`
	StallDuration   string  `json:"stall_duration"`
}

// MarshalJSON writes durations as Go duration strings ("250ms").
func (p Profile) MarshalJSON() ([]byte, error) {
	return json.Marshal(profileJSON{
		TTFT:            p.TTFT.String(),
		PrefillPerToken: p.PrefillPerToken.String(),
		ITL:             p.ITL.String(),
		Distribution:    p.Distribution,
		Jitter:          p.Jitter,
		ErrorRate:       p.ErrorRate,
		StallRate:       p.StallRate,
		StallDuration:   p.StallDuration.String(),
	})
}

// UnmarshalJSON overrides only the fields present in the object, so a
// decode into the current profile is a partial update. It is strict: an
// unknown field or a malformed value is an error naming the field, and
// then p is left unchanged. It does not validate ranges; call Validate.
func (p *Profile) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return fmt.Errorf("a profile must be a JSON object: %w", err)
	}
	q := *p
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		raw := fields[name]
		var err error
		switch name {
		case "ttft":
			err = unmarshalDuration(raw, &q.TTFT)
		case "prefill_per_token":
			err = unmarshalDuration(raw, &q.PrefillPerToken)
		case "itl":
			err = unmarshalDuration(raw, &q.ITL)
		case "stall_duration":
			err = unmarshalDuration(raw, &q.StallDuration)
		case "distribution":
			err = json.Unmarshal(raw, &q.Distribution)
		case "jitter":
			err = json.Unmarshal(raw, &q.Jitter)
		case "error_rate":
			err = json.Unmarshal(raw, &q.ErrorRate)
		case "stall_rate":
			err = json.Unmarshal(raw, &q.StallRate)
		default:
			return fmt.Errorf("unknown field %q (known fields: ttft, prefill_per_token, itl, distribution, jitter, error_rate, stall_rate, stall_duration)", name)
		}
		if err != nil {
			return fmt.Errorf("field %q: %w", name, err)
		}
	}
	*p = q
	return nil
}

func unmarshalDuration(raw json.RawMessage, d *time.Duration) error {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf(`want a Go duration string like "250ms": %w`, err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf(`want a Go duration string like "250ms": %w`, err)
	}
	*d = v
	return nil
}
