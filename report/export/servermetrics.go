package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/inferprobe/inferprobe/servermetrics"
)

// AIPerf 0.13's server metrics files and their schema version.
const (
	artifactServerJSON  = "server_metrics_export.json"
	artifactServerCSV   = "server_metrics_export.csv"
	serverSchemaVersion = "1.1"
)

// ServerSide is the server's side of the run beside the client's TTFT; nil
// when the server's metrics were not read.
func (r Run) ServerSide() *servermetrics.Report {
	if r.ServerMetrics == nil {
		return nil
	}
	return r.ServerMetrics.Report(r.Summary.TTFT)
}

// serverFormats are the server metrics files the run writes: none when no
// endpoint was read, as AIPerf.
func (r Run) serverFormats() []string {
	if r.ServerMetrics == nil || len(r.ServerMetrics.Successful()) == 0 {
		return nil
	}
	return r.Config.ServerMetrics.Formats
}

// ServerMetricsJSON is server_metrics_export.json in AIPerf 0.13's layout:
// every metric of every endpoint read over the measured requests (and,
// apart, over the warmup), keyed by name.
func ServerMetricsJSON(r Run) ([]byte, error) {
	c := r.ServerMetrics
	ranges := obj{{"profiling", obj{{"start_ns", c.Start.UnixNano()}, {"end_ns", c.End.UnixNano()}}}}
	if !c.WarmupStart.IsZero() {
		ranges = append(ranges, kv{"warmup", obj{{"start_ns", c.WarmupStart.UnixNano()}, {"end_ns", c.Start.UnixNano()}}})
	}
	doc := obj{
		{"schema_version", serverSchemaVersion}, {"aiperf_version", aiperfVersion}, {"benchmark_id", r.benchmarkID()},
		{"summary", obj{
			{"endpoints_configured", nonNil(c.Configured())}, {"endpoints_successful", nonNil(c.Successful())},
			{"start_time", isoTime(c.Start)}, {"end_time", isoTime(c.End)},
			{"endpoint_info", c.Info()}, {"phase_time_ranges", ranges},
		}},
		{"metrics_phase", "profiling"},
		{"metrics", c.Metrics(c.Start, c.End)},
	}
	if !c.WarmupStart.IsZero() {
		if warm := c.Metrics(c.WarmupStart, c.Start); warm != nil {
			doc = append(doc, kv{"warmup_metrics", warm})
		}
	}
	doc = append(doc, kv{"input_config", r.inputConfig()})
	return indentedJSON(doc)
}

// The CSV's stat columns by metric type, as AIPerf's.
var serverCSVStats = map[string][]string{
	"gauge":     {"avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"},
	"counter":   {"total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std"},
	"histogram": {"count", "count_rate", "sum", "sum_rate", "avg", "p1_estimate", "p5_estimate", "p10_estimate", "p25_estimate", "p50_estimate", "p75_estimate", "p90_estimate", "p95_estimate", "p99_estimate"},
}

// ServerMetricsCSV is server_metrics_export.csv in AIPerf 0.13's layout: a
// comment header, then a section per metric type (gauge, counter,
// histogram, unknown), each series a row with its stats, one column per
// label and, for histograms, its buckets; _info metrics last, a row per
// label. Label columns are in name order (AIPerf orders them by how they
// co-occur).
func ServerMetricsCSV(r Run) ([]byte, error) {
	c := r.ServerMetrics
	var b bytes.Buffer
	fmt.Fprintf(&b, "# AIPerf Server Metrics Export (CSV)\n# aiperf_version: %s\n# schema_version: 1.0\n# benchmark_id: %s\n", aiperfVersion, r.benchmarkID())
	b.WriteString("# Note: Same benchmark_id and version appear in JSON and Parquet exports\n#\n")
	w := csv.NewWriter(&b)
	metrics := c.Metrics(c.Start, c.End)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range metrics {
			if !yield(n) {
				return
			}
		}
	})
	first := true
	for _, typ := range []string{"gauge", "counter", "histogram", "unknown"} {
		var rows []csvSeries
		for _, n := range names {
			if m := metrics[n]; m.Type == typ && !strings.HasSuffix(n, "_info") {
				for _, s := range m.Series {
					rows = append(rows, csvSeries{n, m, s})
				}
			}
		}
		if len(rows) == 0 {
			continue
		}
		if !first {
			_ = w.Write(nil)
		}
		first = false
		writeServerSection(w, typ, rows)
	}
	var info []csvSeries
	for _, n := range names {
		if strings.HasSuffix(n, "_info") {
			for _, s := range metrics[n].Series {
				info = append(info, csvSeries{n, metrics[n], s})
			}
		}
	}
	if len(info) > 0 {
		if !first {
			_ = w.Write(nil)
		}
		_ = w.Write([]string{"Endpoint", "Metric", "Key", "Value", "Description"})
		for _, s := range info {
			for _, k := range slices.Sorted(mapKeys(s.series.Labels)) {
				_ = w.Write([]string{endpointDisplay(s.series.EndpointURL), s.name, k, s.series.Labels[k], s.metric.Description})
			}
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

type csvSeries struct {
	name   string
	metric *servermetrics.Metric
	series servermetrics.Series
}

func writeServerSection(w *csv.Writer, typ string, rows []csvSeries) {
	stats := serverCSVStats[typ]
	if stats == nil {
		stats = serverCSVStats["gauge"]
	}
	var labels []string
	for _, r := range rows {
		for k := range r.series.Labels {
			if !slices.Contains(labels, k) {
				labels = append(labels, k)
			}
		}
	}
	slices.Sort(labels)
	header := append(append(append([]string{"Endpoint", "Type", "Metric", "Unit"}, stats...), labels...), "Description")
	if typ == "histogram" {
		header = append(header, "buckets")
	}
	_ = w.Write(header)
	// Rows with the same label columns filled together, as AIPerf clusters them.
	pattern := func(r csvSeries) string {
		var p strings.Builder
		for _, l := range labels {
			if _, ok := r.series.Labels[l]; ok {
				p.WriteByte('1')
			} else {
				p.WriteByte('0')
			}
		}
		return p.String()
	}
	slices.SortStableFunc(rows, func(a, b csvSeries) int {
		return strings.Compare(pattern(a)+"\x00"+a.name+"\x00"+a.series.EndpointURL, pattern(b)+"\x00"+b.name+"\x00"+b.series.EndpointURL)
	})
	for _, r := range rows {
		row := []string{endpointDisplay(r.series.EndpointURL), typ, r.name, r.metric.Unit}
		values := statValues(r.series.Stats)
		for _, s := range stats {
			row = append(row, values[s])
		}
		for _, l := range labels {
			row = append(row, r.series.Labels[l])
		}
		row = append(row, r.metric.Description)
		if typ == "histogram" && r.series.Buckets != nil {
			var parts []string
			for _, d := range *r.series.Buckets {
				parts = append(parts, d.LE+"="+strconv.FormatInt(d.Count, 10))
			}
			row = append(row, strings.Join(parts, ";"))
		} else if typ == "histogram" {
			row = append(row, "")
		}
		_ = w.Write(row)
	}
}

// statValues are a series' stats as the CSV writes them: integers as
// such, other numbers with four decimals, absent ones empty.
func statValues(st any) map[string]string {
	raw, _ := json.Marshal(st)
	var m map[string]json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	_ = d.Decode(&m)
	out := map[string]string{}
	for k, n := range m {
		if i, err := n.Int64(); err == nil && k == "count" {
			out[k] = strconv.FormatInt(i, 10)
			continue
		}
		f, _ := n.Float64()
		out[k] = strconv.FormatFloat(f, 'f', 4, 64)
	}
	return out
}

// endpointDisplay is AIPerf's endpoint column: host and path without the
// scheme and /metrics.
func endpointDisplay(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Host + strings.TrimSuffix(p.Path, "/metrics")
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// ConsoleServerMetrics prints the server's side of the run beside the
// client's, or says once why there is none.
func ConsoleServerMetrics(w io.Writer, r Run) {
	sr := r.ServerSide()
	if sr == nil {
		return
	}
	for _, u := range slices.Sorted(mapKeys(sr.Off)) {
		fmt.Fprintf(w, "\nServer metrics: none from %s (%s); see --server-metrics, --no-server-metrics\n", u, sr.Off[u])
	}
	for _, e := range sr.Engines {
		if e.Engine == "" {
			fmt.Fprintf(w, "\nServer metrics from %s: no vLLM, SGLang, llama.cpp or TGI metrics among them (written to %s)\n", e.Endpoint, artifactServerJSON)
			continue
		}
		fmt.Fprintf(w, "\nServer metrics (%s, %s), over the run:\n", e.Engine, e.Endpoint)
		level := func(name string, l *servermetrics.Level, k float64, unit string) {
			if l != nil {
				fmt.Fprintf(w, "  %-36s avg %8.2f%s  max %8.2f%s\n", name, l.Avg*k, unit, l.Max*k, unit)
			}
		}
		level("Queue (waiting requests)", e.Waiting, 1, "")
		level("Running requests", e.Running, 1, "")
		level("KV-cache use", e.KVCache, 100, "%")
		if e.TTFT != nil {
			fmt.Fprintf(w, "  %-36s %10s %10s %10s\n", "Time to First Token (ms)", "p50", "p90", "p99")
			row := func(name string, l *servermetrics.Latency) {
				fmt.Fprintf(w, "  %-36s %10.2f %10.2f %10.2f\n", name, l.P50*ms, l.P90*ms, l.P99*ms)
			}
			row(fmt.Sprintf("server (%d requests)", e.TTFT.Count), e.TTFT)
			if e.ClientTTFT != nil {
				row("client", e.ClientTTFT)
				g := e.TTFTGap
				fmt.Fprintf(w, "  %-36s %10s %10s %10s\n", "client - server", gapMS(g.P50), gapMS(g.P90), gapMS(g.P99))
				fmt.Fprintln(w, "  client - server: the network, queueing outside the engine (its HTTP layer, a proxy) and the client; the server's percentiles are interpolated in its histogram's buckets.")
				if g.Unresolved() {
					fmt.Fprintln(w, "  "+gapUnresolvedNote)
				}
			}
		}
		if len(e.Lacks) > 0 {
			var lacks []string
			for _, c := range e.Lacks {
				lacks = append(lacks, string(c))
			}
			fmt.Fprintf(w, "  %s exports no %s\n", e.Engine, strings.Join(lacks, ", "))
		}
	}
}

// gapMS is a difference of the client's TTFT and the engine's in ms, or
// gapUnresolved where it is within the engine's bucket.
func gapMS(d *float64) string {
	if d == nil {
		return gapUnresolved
	}
	return strconv.FormatFloat(*d*ms, 'f', 2, 64)
}

const (
	gapUnresolved     = "< bucket"
	gapUnresolvedNote = gapUnresolved + ": smaller than the width of the engine's histogram bucket around that percentile, where its true value may lie anywhere; not measured."
)

// nonNil writes an empty list as [] rather than null, as AIPerf does.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
