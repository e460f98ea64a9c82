package export

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/gputelemetry"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// plotRun is a run of 20 requests over 2 s, with a GPU's utilisation read
// by --gpu-telemetry every 250 ms.
func plotRun() Run {
	start := time.Unix(1000, 0)
	r := Run{Summary: report.Summary{Start: start, End: start.Add(2 * time.Second), Duration: 2 * time.Second}}
	for i := range 20 {
		q := report.RequestRecord{Seq: uint64(i), Sent: start.Add(time.Duration(i) * 100 * time.Millisecond)}
		q.Outcome, q.HasTTFT, q.TTFT, q.Duration, q.OutputTokens = record.OutcomeOK, true, time.Duration(20+i)*time.Millisecond, 80*time.Millisecond, 16
		r.Requests = append(r.Requests, q)
	}
	r.GPUEndpoints = &gputelemetry.Collection{Start: start, End: r.Summary.End}
	for i := range 8 {
		r.GPUEndpoints.Records = append(r.GPUEndpoints.Records, gputelemetry.Record{GPU: gputelemetry.GPU{Index: 0},
			At: start.Add(time.Duration(i) * 250 * time.Millisecond), Source: "http://h:9400/metrics",
			Values: map[string]float64{"nvidia_gpu_utilization": float64(10 * i)}})
	}
	return r
}

func pngsIn(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	entries, _ := os.ReadDir(filepath.Join(dir, PlotsDir))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, PlotsDir, e.Name()))
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 5000 {
			t.Errorf("%s: not a drawn PNG (%v, %d bytes)", e.Name(), err, len(b))
		}
		names = append(names, e.Name())
	}
	return names
}

// TestWritePlots: --auto-plot's PNGs of a run carry AIPerf's names of its
// single-run defaults; the GPU one only with GPU telemetry, none without a
// successful request.
func TestWritePlots(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func() Run
		want []string
	}{
		{"with GPUs", plotRun, []string{"gpu_utilization_and_throughput_over_time.png", "ttft_over_time.png", "ttft_timeline.png"}},
		{"without", func() Run { r := plotRun(); r.GPUEndpoints = nil; return r }, []string{"ttft_over_time.png", "ttft_timeline.png"}},
		{"all failed", func() Run {
			r := plotRun()
			for i := range r.Requests {
				r.Requests[i].Outcome = record.OutcomeError
			}
			return r
		}, nil},
	} {
		dir := t.TempDir()
		written, err := WritePlots(dir, tc.run())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := pngsIn(t, dir); !slices.Equal(got, tc.want) || len(written) != len(tc.want) {
			t.Errorf("%s: wrote %v (said %v), want %v", tc.name, got, written, tc.want)
		}
	}
}

// TestWriteSweepPlots: a sweep's PNG is AIPerf's ttft_vs_throughput.png.
func TestWriteSweepPlots(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteSweepPlots(dir, sweepPoints()); err != nil {
		t.Fatal(err)
	}
	if got := pngsIn(t, dir); !slices.Equal(got, []string{"ttft_vs_throughput.png"}) {
		t.Errorf("wrote %v", got)
	}
}
