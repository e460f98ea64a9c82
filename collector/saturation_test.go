package collector

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestSaturation(t *testing.T) {
	now := time.Unix(10_000, 0)
	type load struct {
		cpu   float64
		sched time.Duration
	}
	for _, tc := range []struct {
		name      string
		lags      []time.Duration // one per second before now
		oldLags   int             // 20ms lags from before the window
		load      *load
		saturated bool
		why       string
	}{
		{"quiet", repeat(200, time.Millisecond), 0, &load{0.3, time.Millisecond}, false, ""},
		{"lag p99 over threshold", append(repeat(90, time.Millisecond), repeat(2, 20*time.Millisecond)...), 0, nil, true, "schedule lag p99 20ms"},
		{"one late request in a hundred is p99's business", append(repeat(99, time.Millisecond), 50*time.Millisecond), 0, nil, false, ""},
		{"too few requests for a p99", repeat(49, 20*time.Millisecond), 0, nil, false, ""},
		{"late requests outside the window do not count", repeat(60, time.Millisecond), 500, nil, false, ""},
		{"busy worker", nil, 0, &load{0.95, 0}, true, "used 0.95 CPU cores"},
		{"slow Go scheduler", nil, 0, &load{0.2, 15 * time.Millisecond}, true, "scheduling latency p99 15ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			var clientLoad ClientLoad
			if tc.load != nil {
				clientLoad = func() (float64, time.Duration) { return tc.load.cpu, tc.load.sched }
			}
			s := NewSaturation(prometheus.NewRegistry(), slog.New(slog.NewTextHandler(&logs, nil)), clientLoad)
			for i := range tc.oldLags {
				s.observeLag(now.Add(-lagWindow-time.Duration(i+1)*time.Millisecond), 20*time.Millisecond)
			}
			for i, lag := range tc.lags {
				s.observeLag(now.Add(-time.Duration(len(tc.lags)-i)*100*time.Millisecond), lag)
			}
			s.Check(now)
			if got := testutil.ToFloat64(s.gauge) == 1; got != tc.saturated {
				t.Fatalf("saturated = %v, want %v (log %q)", got, tc.saturated, logs.String())
			}
			if tc.saturated && !strings.Contains(logs.String(), tc.why) {
				t.Errorf("log %q does not say %q", logs.String(), tc.why)
			}
		})
	}
}

func TestSaturationRecovers(t *testing.T) {
	var logs bytes.Buffer
	cpu := 0.95
	s := NewSaturation(prometheus.NewRegistry(), slog.New(slog.NewTextHandler(&logs, nil)), func() (float64, time.Duration) { return cpu, 0 })
	now := time.Unix(10_000, 0)
	s.Check(now)
	s.Check(now.Add(time.Second)) // still saturated: warned once, not every check
	cpu = 0.1
	s.Check(now.Add(2 * time.Second))
	if got := testutil.ToFloat64(s.gauge); got != 0 {
		t.Fatalf("gauge %v after recovery, want 0", got)
	}
	if n := strings.Count(logs.String(), "the client is saturated"); n != 1 {
		t.Errorf("warned %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "no longer saturated") {
		t.Errorf("no recovery line in %q", logs.String())
	}

	// Flapping at a threshold: the next flips within the quiet period are
	// not warnings, and the gauge still follows each one.
	cpu = 0.95
	s.Check(now.Add(3 * time.Second))
	if got := testutil.ToFloat64(s.gauge); got != 1 {
		t.Fatalf("gauge %v when saturated again, want 1", got)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings after a flip within %v, want 1:\n%s", n, saturationQuiet, logs.String())
	}
	cpu = 0.1
	s.Check(now.Add(4 * time.Second))
	cpu = 0.95
	s.Check(now.Add(saturationQuiet + 5*time.Second))
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 {
		t.Errorf("%d warnings once the quiet period is over, want 2:\n%s", n, logs.String())
	}
}

func TestSaturationWindowIsBounded(t *testing.T) {
	s := NewSaturation(prometheus.NewRegistry(), slog.New(slog.DiscardHandler), nil)
	now := time.Unix(10_000, 0)
	for i := range 3 * lagCapacity {
		s.observeLag(now, time.Duration(i))
	}
	if len(s.lags) != lagCapacity {
		t.Fatalf("window holds %d lags, want %d", len(s.lags), lagCapacity)
	}
	// Only the newest lagCapacity remain: the smallest is 2·lagCapacity.
	if p99, n := s.lagP99(now); n != lagCapacity || p99 < time.Duration(2*lagCapacity) {
		t.Errorf("p99 %v over %d lags", p99, n)
	}
}

func repeat(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestSaturationPaused: a request that overlapped a pause of the client
// within the window makes the client saturated, whatever its lag; one
// before the window does not.
func TestSaturationPaused(t *testing.T) {
	now := time.Unix(10_000, 0)
	for _, tc := range []struct {
		name      string
		ago       time.Duration
		saturated bool
	}{
		{"within the window", lagWindow / 2, true},
		{"before the window", lagWindow + time.Second, false},
	} {
		var logs bytes.Buffer
		s := NewSaturation(prometheus.NewRegistry(), slog.New(slog.NewTextHandler(&logs, nil)), nil)
		s.observePaused(now.Add(-tc.ago))
		s.Check(now)
		if got := testutil.ToFloat64(s.gauge) == 1; got != tc.saturated {
			t.Errorf("%s: saturated = %v, want %v (log %q)", tc.name, got, tc.saturated, logs.String())
		}
		if tc.saturated && !strings.Contains(logs.String(), "did not run") {
			t.Errorf("%s: log %q does not say the client did not run", tc.name, logs.String())
		}
	}
}
