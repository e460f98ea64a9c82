package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/inferprobe/inferprobe/scenarios"
)

// ratePoint is one point of AIPerf's --request-rate-series file.
type ratePoint struct {
	TimeS *float64 `json:"time_s"`
	QPS   *float64 `json:"qps"`
}

// readRateSeries reads AIPerf 0.13's request-rate series file — a JSON
// array of {"time_s", "qps"} points, or an object whose only key, points,
// holds one — with AIPerf's checks: at least two points, time_s ≥ 0 and
// strictly increasing, qps > 0.
func readRateSeries(path string) ([]ratePoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--request-rate-series: cannot read %s: %w", path, errors.Unwrap(err))
	}
	var raw json.RawMessage = bytes.TrimSpace(b)
	if len(raw) > 0 && raw[0] == '{' {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(raw, &doc); err != nil || len(doc) != 1 || doc["points"] == nil {
			return nil, fmt.Errorf("--request-rate-series %s: want a JSON array of {\"time_s\", \"qps\"} points, or an object whose only key is points", path)
		}
		raw = doc["points"]
	}
	var points []ratePoint
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&points); err != nil {
		return nil, fmt.Errorf("--request-rate-series %s: want a JSON array of {\"time_s\", \"qps\"} points (%v)", path, err)
	}
	if len(points) < 2 {
		return nil, fmt.Errorf("--request-rate-series %s: needs at least two points, as AIPerf", path)
	}
	for i, p := range points {
		switch {
		case p.TimeS == nil || p.QPS == nil:
			return nil, fmt.Errorf("--request-rate-series %s: point %d needs both time_s and qps", path, i)
		case !(*p.TimeS >= 0) || math.IsInf(*p.TimeS, 0):
			return nil, fmt.Errorf("--request-rate-series %s: point %d: time_s %g must be a number of seconds ≥ 0", path, i, *p.TimeS)
		case i > 0 && *p.TimeS <= *points[i-1].TimeS:
			return nil, fmt.Errorf("--request-rate-series %s: point %d: time_s must be strictly increasing", path, i)
		case !(*p.QPS > 0):
			return nil, fmt.Errorf("--request-rate-series %s: point %d: qps %g must be > 0", path, i, *p.QPS)
		}
		if err := scenarios.RateBound.Check(fmt.Sprintf("--request-rate-series point %d qps", i), *p.QPS); err != nil {
			return nil, err
		}
	}
	return points, nil
}

// rateSteps turns AIPerf's piecewise-linear series into the steps of a
// scenario's rate series, as AIPerf applies it: every rateRampStep it sets
// the rate to the series' value then (the first point's before it, the
// last's from the last point on), and the rate holds until the next update.
// Updates that do not change the rate are merged.
func rateSteps(points []ratePoint) []scenarios.Step {
	at := func(t float64) float64 {
		i := 0
		for i+1 < len(points) && *points[i+1].TimeS <= t {
			i++
		}
		switch {
		case t <= *points[0].TimeS:
			return *points[0].QPS
		case i == len(points)-1:
			return *points[i].QPS
		}
		l, r := points[i], points[i+1]
		return *l.QPS + (*r.QPS-*l.QPS)*(t-*l.TimeS)/(*r.TimeS-*l.TimeS)
	}
	end := *points[len(points)-1].TimeS
	step := rateRampStep.Seconds()
	var steps []scenarios.Step
	for k := 0; float64(k)*step < end; k++ {
		rate := at(float64(k) * step)
		if n := len(steps); n > 0 && steps[n-1].Rate == rate {
			steps[n-1].Duration += scenarios.Duration(rateRampStep)
			continue
		}
		steps = append(steps, scenarios.Step{Rate: rate, Duration: scenarios.Duration(rateRampStep)})
	}
	last := *points[len(points)-1].QPS
	if n := len(steps); n > 0 && steps[n-1].Rate == last {
		steps = steps[:n-1] // the last step holds to the end
	}
	return append(steps, scenarios.Step{Rate: last})
}
