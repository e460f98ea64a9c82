package backtest

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestRecorderCountsAsTheRowsSay checks that the collector, fed through
// record, counts each probe with exactly its TTFT, ITL, latency, outcome
// and goodness.
func TestRecorderCountsAsTheRowsSay(t *testing.T) {
	probes := []Probe{
		{TTFT: 200 * time.Millisecond, ITL: 20 * time.Millisecond, Latency: 3 * time.Second, OK: true, Good: true},
		{TTFT: 900 * time.Millisecond, ITL: 70 * time.Millisecond, Latency: 8 * time.Second, OK: true}, // missed its SLO
		{TTFT: 300 * time.Millisecond, Latency: 400 * time.Millisecond, OK: true, Good: true},          // one chunk: no ITL
		{Latency: 2 * time.Second, OK: true},                                                              // no chunk at all
		{Latency: 30 * time.Second},                                                                       // failed before a token
		{TTFT: 250 * time.Millisecond, Latency: 10 * time.Second},                                         // stalled after its first token
		{TTFT: 3 * time.Nanosecond, ITL: time.Nanosecond, Latency: 2 * time.Nanosecond, OK: true},         // tiny, but missed its SLO
		{TTFT: time.Nanosecond, ITL: time.Nanosecond, Latency: 5 * time.Nanosecond, OK: true, Good: true}, // tiny and good
	}
	reg := prometheus.NewRegistry()
	r := newRecorder(reg)
	for i := range probes {
		probes[i].Target, probes[i].Model, probes[i].Time = "t", "m", at(time.Duration(i)*time.Second)
		if err := probes[i].check(); err != nil {
			t.Fatalf("probe %d: %v", i, err)
		}
		r.observe(&probes[i])
	}
	var want struct{ ok, failed, good, ttfts, itls, durations int }
	var ttftSum, itlSum, durationSum float64
	for _, p := range probes {
		if p.OK {
			want.ok++
			want.durations++
			durationSum += p.Latency.Seconds()
		} else {
			want.failed++
		}
		if p.Good {
			want.good++
		}
		if p.TTFT > 0 {
			want.ttfts++
			ttftSum += p.TTFT.Seconds()
		}
		if p.ITL > 0 {
			want.itls++
			itlSum += p.ITL.Seconds()
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*dto.MetricFamily{}
	for _, mf := range families {
		got[mf.GetName()] = mf
	}
	counter := func(name, outcome string) int {
		for _, m := range got[name].GetMetric() {
			if outcome == "" || labelValue(m, "outcome") == outcome {
				return int(m.GetCounter().GetValue())
			}
		}
		return -1
	}
	checkInt := func(what string, got, want int) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %d, want %d", what, got, want)
		}
	}
	checkInt("ok", counter("inferprobe_requests_total", "ok"), want.ok)
	checkInt("error", counter("inferprobe_requests_total", "error"), want.failed)
	checkInt("good", counter("inferprobe_good_requests_total", ""), want.good)
	byReason := 0
	for _, m := range got["inferprobe_request_errors_total"].GetMetric() {
		byReason += int(m.GetCounter().GetValue())
	}
	checkInt("errors by reason", byReason, want.failed)
	for _, h := range []struct {
		name  string
		count int
		sum   float64
	}{
		{"inferprobe_time_to_first_token_seconds", want.ttfts, ttftSum},
		{"inferprobe_inter_token_latency_seconds", want.itls, itlSum},
		{"inferprobe_request_duration_seconds", want.durations, durationSum},
	} {
		m := got[h.name].GetMetric()[0].GetHistogram()
		checkInt(h.name+" count", int(m.GetSampleCount()), h.count)
		if math.Abs(m.GetSampleSum()-h.sum) > 1e-12 {
			t.Errorf("%s sum = %v, want %v", h.name, m.GetSampleSum(), h.sum)
		}
	}
	for _, m := range got["inferprobe_requests_total"].GetMetric() {
		for l, v := range map[string]string{"target": "t", "model": "m", "scenario": "backtest", "phase": "probe"} {
			if labelValue(m, l) != v {
				t.Errorf("label %s = %q, want %q", l, labelValue(m, l), v)
			}
		}
	}
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func TestProbeCheck(t *testing.T) {
	ok := Probe{TTFT: time.Second, ITL: time.Millisecond, Latency: 2 * time.Second, OK: true, Good: true}
	for name, p := range map[string]Probe{
		"no latency":          {OK: true},
		"negative TTFT":       {TTFT: -1, Latency: time.Second},
		"ITL without TTFT":    {ITL: time.Millisecond, Latency: time.Second, OK: true},
		"ITL on a failure":    {TTFT: time.Second, ITL: time.Millisecond, Latency: 2 * time.Second},
		"good failure":        {Latency: time.Second, Good: true},
		"1 ns miss of an SLO": {Latency: time.Nanosecond, OK: true},
	} {
		if p.check() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := ok.check(); err != nil {
		t.Error(err)
	}
}
