package gputelemetry

import (
	"bytes"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sample is a dcgm-exporter reply for two H100s (its default counters and
// labels, DCGM_FI_DRIVER_VERSION included).
func sample(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/dcgm-exporter.txt")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordsAsAIPerf: one scrape gives what AIPerf 0.13's DCGM collector
// makes of the same text (its _parse_metrics_to_records, run on
// testdata/dcgm-exporter.txt): a record per GPU, the labels under AIPerf's
// names, only the mapped fields, scaled to AIPerf's units.
func TestRecordsAsAIPerf(t *testing.T) {
	mfs, err := Parse(bytes.NewReader(sample(t)))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(100, 0)
	recs := records(mfs, "http://dgx:9400/metrics", at)
	if len(recs) != 2 {
		t.Fatalf("%d records, want one per GPU (2)", len(recs))
	}
	want := []struct {
		gpu    GPU
		values map[string]float64
	}{
		{GPU{Index: 0, UUID: "GPU-5fd4b2b6-1f3c-4a1e-9d1e-0c2a8e6f7a11", ModelName: "NVIDIA H100 80GB HBM3", PCIBusID: "00000000:18:00.0", Device: "nvidia0", Hostname: "dgx-h100-07"},
			map[string]float64{"nvidia_power_usage": 412.783, "nvidia_energy_consumption": 98.734561223, "nvidia_gpu_utilization": 97,
				"nvidia_memory_utilization": 64, "nvidia_memory_used": 80.046194688, "nvidia_temperature": 52, "nvidia_sm_utilization": 87.1226,
				"nvidia_decoder_utilization": 0, "nvidia_encoder_utilization": 0, "nvidia_xid_errors": 0}},
		{GPU{Index: 1, UUID: "GPU-b3e8c0de-77a2-4c55-8f0b-6d9e1a4c2b90", ModelName: "NVIDIA H100 80GB HBM3", PCIBusID: "00000000:2A:00.0", Device: "nvidia1", Hostname: "dgx-h100-07"},
			map[string]float64{"nvidia_power_usage": 118.452, "nvidia_energy_consumption": 87.112009876, "nvidia_gpu_utilization": 3,
				"nvidia_memory_utilization": 0, "nvidia_memory_used": 0.001048576, "nvidia_temperature": 47, "nvidia_sm_utilization": 0.4412,
				"nvidia_decoder_utilization": 0, "nvidia_encoder_utilization": 0, "nvidia_xid_errors": 0}},
	}
	for i, w := range want {
		r := recs[i]
		if r.GPU != w.gpu || !r.At.Equal(at) || r.Source != "http://dgx:9400/metrics" {
			t.Errorf("record %d: %+v at %v from %s; want %+v", i, r.GPU, r.At, r.Source, w.gpu)
		}
		if len(r.Values) != len(w.values) {
			t.Errorf("GPU %d: fields %v, want %v", i, r.Values, w.values)
		}
		for k, v := range w.values {
			if got, ok := r.Values[k]; !ok || math.Abs(got-v) > 1e-9*max(1, math.Abs(v)) {
				t.Errorf("GPU %d %s = %v (%v), want %v", i, k, got, ok, v)
			}
		}
	}
}

// TestSummarise: a gauge's statistics are over the readings from the start
// on (n-1 standard deviation), a counter's increase is from the last
// reading before the start, and a counter that went down (a reset) gives 0.
func TestSummarise(t *testing.T) {
	t0 := time.Unix(1000, 0)
	rec := func(s float64, power, energy, xid float64) Record {
		return Record{GPU: GPU{Index: 0, UUID: "GPU-a"}, At: t0.Add(time.Duration(s * float64(time.Second))), Source: "u",
			Values: map[string]float64{"nvidia_power_usage": power, "nvidia_energy_consumption": energy, "nvidia_xid_errors": xid}}
	}
	recs := []Record{rec(-2, 50, 1.0, 5), rec(-1, 60, 1.5, 5), rec(0, 100, 2.0, 5), rec(1, 200, 2.5, 5), rec(2, 300, 3.0, 0)}
	sums := Summarise(recs, t0)
	if len(sums) != 1 {
		t.Fatalf("%d summaries, want 1", len(sums))
	}
	m := sums[0].Metrics
	p := m["nvidia_power_usage"]
	if p.Count != 3 || p.Avg != 200 || p.Min != 100 || p.Max != 300 || p.Sum != 600 || p.Std != 100 || p.P50 != 200 {
		t.Errorf("power %+v; want the 3 readings from the start: avg 200, std 100 (n-1)", p)
	}
	if e := m["nvidia_energy_consumption"]; math.Abs(e.Avg-1.5) > 1e-12 {
		t.Errorf("energy increase %v, want 1.5 (3.0 less the 1.5 before the start)", e.Avg)
	}
	if x := m["nvidia_xid_errors"]; x.Avg != 0 {
		t.Errorf("xid %v after a reset, want 0", x.Avg)
	}
	// Without a reading before the start, the first after it is the base.
	if e := Summarise(recs[2:], t0)[0].Metrics["nvidia_energy_consumption"]; e.Avg != 1 {
		t.Errorf("energy increase %v without a baseline, want 1", e.Avg)
	}
}

// TestCollector scrapes a dcgm-exporter stand-in on an interval, and an
// unreachable URL is a warning, not an end: the reachable one is read.
func TestCollector(t *testing.T) {
	body := sample(t)
	var scrapes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scrapes.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(body)
	}))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()

	var logs bytes.Buffer
	c := Start(Options{URLs: []string{srv.URL + "/metrics", dead.URL + "/metrics"}, Interval: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	start := c.Mark()
	time.Sleep(100 * time.Millisecond)
	col := c.Stop(start)

	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), dead.URL+"/metrics is not reachable") {
		t.Errorf("log %q; want a warning naming the unreachable URL", logs.String())
	}
	if len(col.Configured) != 2 || len(col.Reachable) != 1 || col.Reachable[0] != srv.URL+"/metrics" {
		t.Errorf("configured %v, reachable %v", col.Configured, col.Reachable)
	}
	if n := scrapes.Load(); n < 4 {
		t.Errorf("%d scrapes in 100 ms at 20 ms; want the first, the mark, some on the interval and the last", n)
	}
	if len(col.Records) != 2*int(scrapes.Load()) {
		t.Errorf("%d records from %d scrapes of 2 GPUs", len(col.Records), scrapes.Load())
	}
	sums := Summarise(col.Records, col.Start)
	if len(sums) != 2 || sums[0].Metrics["nvidia_gpu_utilization"].Avg != 97 || sums[1].Metrics["nvidia_gpu_utilization"].Avg != 3 {
		t.Errorf("summaries %+v", sums)
	}
	if !col.End.After(col.Start) {
		t.Errorf("end %v not after start %v", col.End, col.Start)
	}
}

func TestDisplay(t *testing.T) {
	for in, want := range map[string]string{
		"http://node1:9400/metrics":    "node1:9400",
		"https://h:9401/api/metrics":   "h:9401/api",
		"http://10.0.0.7:9400/metrics": "10.0.0.7:9400",
	} {
		if got := Display(in); got != want {
			t.Errorf("Display(%q) = %q, want %q", in, got, want)
		}
	}
}
