package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/collector/gpu"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

func TestPrintGPU(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	var out bytes.Buffer
	ConsoleGPU(&out, gpu.WindowStats{
		OutputTokens: 10000,
		GPUs: []gpu.GPUStats{{
			GPU: "0", ModelName: "NVIDIA H200", AvgPowerWatts: f(412.5), PeakPowerWatts: f(655),
			EnergyJoules: f(4125), EnergySource: "counter", EnergyPerOutputTokenJoules: f(0.4125),
			AvgGPUUtilPercent: f(87.5), PeakFBUsedMiB: f(120000),
		}},
		Total: gpu.GPUStats{EnergySource: "counter"},
	}, false)
	for _, want := range []string{"J/output tok", "0 NVIDIA H200", "412.5", "655.0", "4125.0", "0.4125", "87.5", "120000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("GPU section lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	ConsoleGPU(&out, gpu.WindowStats{}, true)
	if !strings.Contains(out.String(), "no telemetry over the run") {
		t.Errorf("without telemetry, asked for, the report says %q", out.String())
	}
	out.Reset()
	ConsoleGPU(&out, gpu.WindowStats{}, false)
	if out.Len() != 0 {
		t.Errorf("without telemetry, not asked for, the report says %q", out.String())
	}
}

// TestConsoleErrors: each error reason has its count and the first failed
// request's message, on one clipped line, so the server's own words say what
// to fix.
func TestConsoleErrors(t *testing.T) {
	failed := func(reason record.Reason) report.Contribution {
		return report.Contribution{Outcome: record.OutcomeError, Reason: reason}
	}
	long := "HTTP 500: " + strings.Repeat("x", 300)
	reqs := []report.RequestRecord{
		{Seq: 0},
		{Seq: 1, Contribution: failed(record.ReasonHTTP4xx), Status: 404, Err: "HTTP 404: {\"error\":{\"message\":\"The model `nope` does not exist.\"}}"},
		{Seq: 2, Contribution: failed(record.ReasonHTTP4xx), Status: 404, Err: "HTTP 404: a later one"},
		{Seq: 3, Contribution: failed(record.ReasonHTTP5xx), Status: 500, Err: long + "\nsecond line"},
	}
	var out bytes.Buffer
	consoleErrors(&out, map[record.Reason]int{record.ReasonHTTP4xx: 2, record.ReasonHTTP5xx: 1}, reqs)
	got := out.String()
	for _, want := range []string{
		"http_4xx                                                    2  HTTP 404: {\"error\":{\"message\":\"The model `nope` does not exist.\"}}\n",
		"http_5xx                                                    1  HTTP 500: xxx",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors block lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "a later one") || strings.Contains(got, "second line") {
		t.Errorf("not the first message, or not clipped to one line:\n%s", got)
	}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if n := len([]rune(line)); n > 65+firstMessageWidth {
			t.Errorf("line of %d runes: %s", n, line)
		}
	}
	out.Reset()
	consoleErrors(&out, nil, nil)
	if out.Len() != 0 {
		t.Errorf("no errors printed %q", out.String())
	}
}

// TestConnectionNote: connection retries, requests kept off reused
// connections and compressed replies are said,
// with what they mean; nothing when there were none.
func TestConnectionNote(t *testing.T) {
	if got := connectionNote(report.Summary{}); got != "" {
		t.Errorf("note %q without retries or compression, want none", got)
	}
	got := connectionNote(report.Summary{ConnectionRetries: 3, KeepAliveWithheld: 4, CompressedResponses: map[string]int{"zstd": 1, "gzip": 2}})
	for _, want := range []string{"3 requests were sent again on a fresh connection", "--no-keep-alive", "4 requests went out on a connection of their own",
		"(2 gzip, 1 zstd)", "turn it off"} {
		if !strings.Contains(got, want) {
			t.Errorf("note lacks %q: %s", want, got)
		}
	}
}

// TestConsoleIntervals: every mean, percentile and throughput has its
// interval on the metric's line, and a percentile too few requests bound
// shows — with how many it needs rather than a number that looks exact.
func TestConsoleIntervals(t *testing.T) {
	var out bytes.Buffer
	Console(&out, fixedRun(t), record.Digest{}, 42)
	for _, want := range []string{
		"Confidence intervals at 95 %",
		"p50 137.50 [110.00, 165.00]",
		"p99 ", "[185.00, —]",
		"Request Throughput (requests/sec)",
		"—: too few samples to bound that side at this level (avg needs 2, p50 needs 6, p90 needs 36, p95 needs 72, p99 needs 368)",
		"Effective Latency (CO-aware) (ms)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, out.String())
		}
	}
	// AIPerf's console shows the HTTP trace metrics only with
	// --show-trace-timing, which bench does not take.
	if strings.Contains(out.String(), "HTTP Waiting") || strings.Contains(out.String(), "HTTP Total Time") {
		t.Errorf("console shows HTTP trace metrics:\n%s", out.String())
	}
}

// TestConsoleClientPaused: a run with requests that overlapped a pause of
// the client says how many were left out, and where they are; a run
// without says nothing of it.
func TestConsoleClientPaused(t *testing.T) {
	for _, paused := range []int{0, 2} {
		r := report.NewReport()
		for i := range 3 + paused {
			rec := &record.Record{Seq: uint64(i), Status: 200, OutputTokens: 1}
			if i >= 3 {
				rec.ClientPaused = 2e9
			}
			r.Observe(rec)
		}
		var out bytes.Buffer
		Console(&out, Run{Summary: r.Summary(), Requests: r.Requests()}, record.Digest{}, 1)
		said := strings.Contains(out.String(), "Client-Paused Requests")
		if said != (paused > 0) || paused > 0 && !strings.Contains(out.String(), "2 left out") {
			t.Errorf("%d client-paused requests: the console says\n%s", paused, out.String())
		}
	}
}
