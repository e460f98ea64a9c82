package main

import (
	"slices"
	"strings"
	"testing"
)

// TestServerMetricsFlags: AIPerf's --server-metrics [URL…],
// --no-server-metrics and --server-metrics-formats.
func TestServerMetricsFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		on      bool
		urls    []string
		formats []string
		err     string
	}{
		{args: nil, on: true, urls: []string{"http://localhost:8000/metrics"}, formats: []string{"json", "csv"}},
		{args: []string{"--url", "http://10.0.0.5:30000/v1"}, on: true, urls: []string{"http://10.0.0.5:30000/metrics"}, formats: []string{"json", "csv"}},
		// Every --url's, once, as AIPerf.
		{args: []string{"--url", "10.0.0.5:30000", "10.0.0.6:30000", "--url", "http://10.0.0.5:30000/v1", "--server-metrics", "10.0.0.6:30000"}, on: true,
			urls: []string{"http://10.0.0.5:30000/metrics", "http://10.0.0.6:30000/metrics"}, formats: []string{"json", "csv"}},
		{args: []string{"--server-metrics", "node1:8081", "http://node2:9090/metrics"}, on: true,
			urls: []string{"http://localhost:8000/metrics", "http://node1:8081/metrics", "http://node2:9090/metrics"}, formats: []string{"json", "csv"}},
		{args: []string{"--server-metrics-formats", "csv", "parquet"}, on: true, urls: []string{"http://localhost:8000/metrics"}, formats: []string{"csv"}},
		{args: []string{"--no-server-metrics"}, on: false},
		{args: []string{"--no-server-metrics", "node1:8081"}, err: "use one or the other"},
		{args: []string{"--server-metrics-formats", "xml"}, err: "choose from json, csv"},
	} {
		f := parseBench(t, append([]string{"--model-names", "m"}, tc.args...)...)
		bases, err := f.targetURLs()
		if err != nil {
			t.Fatal(err)
		}
		o, on, err := f.server.options(bases)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || on != tc.on || !slices.Equal(o.URLs, tc.urls) {
			t.Errorf("%q: on %v, URLs %q, err %v; want on %v, %q", tc.args, on, o.URLs, err, tc.on, tc.urls)
		}
		if c := f.server.exportConfig(); c.Enabled != tc.on || !slices.Equal(c.Formats, tc.formats) {
			t.Errorf("%q: input_config server_metrics %+v, want formats %q", tc.args, c, tc.formats)
		}
		sc, err := f.scenario()
		if err != nil {
			t.Fatal(err)
		}
		if got := sc.cfg.Targets["bench"].ServerMetrics; got != map[bool]string{true: "", false: "off"}[tc.on] {
			t.Errorf("%q: the scenario's server_metrics %q", tc.args, got)
		}
	}
}
