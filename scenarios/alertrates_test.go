package scenarios

import (
	"strings"
	"testing"
)

func TestAlertRateWarnings(t *testing.T) {
	cfg, err := Parse([]byte(`targets:
  t: {url: "http://127.0.0.1:1/v1", model: m}
probes:
  rare: {target: t, arrival: {rate: 0.05}}
  example: {target: t, arrival: {rate: 0.2}}
  enough: {target: t, arrival: {rate: 1}}
  stepped: {target: t, arrival: {series: [{rate: 0.01, duration: 1h}, {rate: 0.01}]}}
  closed: {target: t, arrival: {pattern: concurrency, concurrency: 1}}
`), "rates.yml")
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.AlertRateWarnings()
	if len(got) != 2 {
		t.Fatalf("want warnings for rare and example only, got %q", got)
	}
	for i, want := range []string{`probe "example" runs at 0.2 req/s`, `probe "rare" runs at 0.05 req/s, below the 0.2 req/s`} {
		if !strings.HasPrefix(got[i], want) || !strings.Contains(got[i], "arrival.rate to ") {
			t.Errorf("warning %d = %q, want it to start %q and name the rate that fixes it", i, got[i], want)
		}
	}
}
