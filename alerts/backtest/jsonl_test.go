package backtest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// benchExport is a profile_export.jsonl that bench wrote: 21 successes
// (the first 8 good), a 429, a stall after the first token and a
// cancellation.
const benchExport = "../../report/export/testdata/profile_export.jsonl"

func readExport(t *testing.T, name string) []Probe {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var probes []Probe
	for p, err := range ReadProfileExport(f) {
		if err != nil {
			t.Fatal(err)
		}
		probes = append(probes, p)
	}
	return probes
}

func TestReadProfileExport(t *testing.T) {
	probes := readExport(t, benchExport)
	var ok, good, failed int
	for i, p := range probes {
		if i > 0 && p.Time.Before(probes[i-1].Time) {
			t.Errorf("probe %d ends before the one before it", i)
		}
		switch {
		case p.Good:
			good++
			ok++
		case p.OK:
			ok++
		default:
			failed++
		}
	}
	if ok != 21 || good != 8 || failed != 2 {
		t.Errorf("%d ok, %d good, %d failed; want 21, 8, 2", ok, good, failed)
	}
	want := Probe{Time: time.Unix(0, 1772366400153200000), TTFT: 80 * time.Millisecond, ITL: 10 * time.Millisecond,
		Latency: 152 * time.Millisecond, OK: true, Good: true}
	if !equalProbe(probes[0], want) {
		t.Errorf("first probe %+v, want %+v", probes[0], want)
	}
	rateLimited := Probe{Time: time.Unix(0, 1772366401253000000), Latency: 3 * time.Millisecond}
	stalled := Probe{Time: time.Unix(0, 1772366403152000000), TTFT: 135 * time.Millisecond, Latency: 400 * time.Millisecond}
	if !equalProbe(probes[5], rateLimited) || !equalProbe(probes[11], stalled) {
		t.Errorf("failures %+v and %+v, want %+v and %+v", probes[5], probes[11], rateLimited, stalled)
	}

	// AIPerf's own export reads the same way.
	aiperf := readExport(t, "../../report/export/testdata/aiperf-0.13/profile_export.jsonl")
	if len(aiperf) != 1 || !aiperf[0].OK || aiperf[0].TTFT.Round(time.Microsecond) != 113367*time.Microsecond {
		t.Errorf("AIPerf's export read as %+v", aiperf)
	}
}

func TestRunProfileExport(t *testing.T) {
	f, err := os.Open(benchExport)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	probes := func(yield func(Probe, error) bool) {
		for p, err := range ReadProfileExport(f) {
			p.Target, p.Model = "bench", "m"
			if !yield(p, err) {
				return
			}
		}
	}
	// Six seconds of requests, scraped and evaluated every second: the 429
	// ends at 1772366401.253, so the scrape and evaluation at 1772366402
	// see it first.
	firings, err := Run(context.Background(), probes, Options{RuleFiles: []string{"testdata/failed.rules.yml"},
		ScrapeInterval: time.Second, EvaluationInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"instance": instanceLabel, "job": jobLabel, "target": "bench", "model": "m",
		"scenario": scenarioLabel, "phase": phaseLabel, "outcome": "error"}
	checkFirings(t, firings, []Firing{{Alert: "Failed", Severity: "warning", Labels: labels, Start: time.Unix(1772366402, 0)}})
}

func TestReadProfileExportErrors(t *testing.T) {
	for _, c := range []struct{ name, file, want string }{
		{"json", "{\"metadata\":\n", "line 1"},
		{"end", `{"metadata":{"request_start_ns":5}}`, "line 1: request_end_ns 0"},
		{"unit", `{"metadata":{"request_start_ns":1,"request_end_ns":2},"metrics":{"time_to_first_token":{"value":1,"unit":"tokens"}}}`, `line 1: time_to_first_token: unit "tokens"`},
	} {
		var err error
		for _, err = range ReadProfileExport(strings.NewReader(c.file)) {
			if err != nil {
				break
			}
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}
