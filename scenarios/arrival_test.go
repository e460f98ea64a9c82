package scenarios

import (
	"reflect"
	"testing"
	"time"
)

// TestArrivalPatterns parses one valid arrival of each shape.
func TestArrivalPatterns(t *testing.T) {
	for _, tc := range []struct {
		name, arrival string
		want          Arrival
	}{
		{"poisson by default", "{rate: 0.2}", Arrival{Pattern: ArrivalPoisson, Rate: 0.2}},
		{"constant", "{pattern: constant, rate: 3}", Arrival{Pattern: ArrivalConstant, Rate: 3}},
		{"gamma", "{pattern: gamma, rate: 10, smoothness: 0.5}", Arrival{Pattern: ArrivalGamma, Rate: 10, Smoothness: 0.5}},
		{"capped", "{rate: 10, max_concurrency: 4}", Arrival{Pattern: ArrivalPoisson, Rate: 10, MaxConcurrency: 4}},
		{"ramp from zero", "{pattern: constant, rate: 0, ramp_to: 5, ramp_over: 2m}",
			Arrival{Pattern: ArrivalConstant, RampTo: 5, RampOver: Duration(2 * time.Minute)}},
		{"series with a pause", "{pattern: gamma, smoothness: 4, series: [{rate: 1, duration: 1m}, {rate: 0, duration: 30s}, {rate: 2}]}",
			Arrival{Pattern: ArrivalGamma, Smoothness: 4, Series: []Step{
				{Rate: 1, Duration: Duration(time.Minute)}, {Rate: 0, Duration: Duration(30 * time.Second)}, {Rate: 2},
			}}},
		{"concurrency", "{pattern: concurrency, concurrency: 8}", Arrival{Pattern: ArrivalConcurrency, Concurrency: 8}},
		{"concurrency ramp from zero", "{pattern: concurrency, concurrency: 0, ramp_to: 64, ramp_over: 1m}",
			Arrival{Pattern: ArrivalConcurrency, RampTo: 64, RampOver: Duration(time.Minute)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(edit(t, "{rate: 0.2}", tc.arrival)), "s.yml")
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Probes["steady"].Arrival; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
