package export

import (
	"bytes"
	"encoding/csv"
	"math"
	"slices"
	"strconv"
	"strings"
)

// csvStatKeys are AIPerf's STAT_KEYS: the columns of the CSV's first section.
var csvStatKeys = []string{"avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

// CSV returns profile_export_aiperf.csv as AIPerf 0.13 writes it: the
// distributions ("Metric,avg,min,max,sum,p1,…,p99,std") and, after a blank
// line, the single values ("Metric,Value"), each section sorted by metric
// tag, numbers with two decimals; then inferprobe's extras
// ("inferprobe,Value"), kept apart so that a script reading numbers from
// AIPerf's sections never meets a digest; the confidence intervals, when
// the run has them ("Confidence Interval,Level,Low,High", a row per metric and statistic, a side
// the run cannot bound empty); and last AIPerf's GPU telemetry section,
// after two blank lines: its header, and a row per GPU and field of the
// --gpu-telemetry endpoints (none without them: the figures of this host's
// GPUs are in the console).
func CSV(r Run) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true // Python's csv module, which AIPerf writes with
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	byTag := func(a, b metric) int { return strings.Compare(a.Tag, b.Tag) }
	rows := [][]string{append([]string{"Metric"}, csvStatKeys...)}
	dists := slices.SortedFunc(slices.Values(distributions(r.Summary)), byTag)
	for _, m := range dists {
		s := m.Stats
		rows = append(rows, []string{csvName(m), f(s.Avg), f(s.Min), f(s.Max), f(s.Sum),
			f(s.P1), f(s.P5), f(s.P10), f(s.P25), f(s.P50), f(s.P75), f(s.P90), f(s.P95), f(s.P99), f(s.Std)})
	}
	rows = append(rows, nil, []string{"Metric", "Value"})
	for _, m := range slices.SortedFunc(slices.Values(singles(r)), byTag) {
		rows = append(rows, []string{csvName(m), f(m.Value)})
	}
	verdict := "no"
	if r.ClientBound != "" {
		verdict = "yes: " + r.ClientBound
	}
	rows = append(rows, nil, []string{"inferprobe", "Value"},
		[]string{"Sequence Digest", r.Digest},
		[]string{"Client Saturated", verdict},
		[]string{"Token Counts", tokenSource(r.Summary)},
		[]string{"Output Length Mismatches", strconv.Itoa(r.Summary.OutputLengthMismatches)},
		[]string{"Cancelled Requests", strconv.Itoa(r.Summary.Cancelled)},
		[]string{"Client-Paused Requests", strconv.Itoa(r.Summary.ClientPaused)},
		[]string{"Lost Requests", strconv.Itoa(r.Summary.Lost)},
	)
	if lag := scaled(r.Summary.ScheduleLag, ms); lag != nil {
		rows = append(rows, []string{"Schedule Lag p50 (ms)", f(lag.P50)}, []string{"Schedule Lag p99 (ms)", f(lag.P99)})
	}
	for _, reason := range sortedReasons(r.Summary.Errors) {
		rows = append(rows, []string{"Errors: " + string(reason), strconv.Itoa(r.Summary.Errors[reason])})
	}
	if level := r.confidenceLevel(); level > 0 {
		// Apart from AIPerf's sections, which keep their columns.
		rows = append(rows, nil, []string{"Confidence Interval", "Level", "Low", "High"})
		side := func(v float64) string {
			if math.IsInf(v, 0) {
				return "" // the run cannot bound this side
			}
			return f(v)
		}
		for _, e := range r.estimates() {
			// Named apart from AIPerf's rows, so that a reader keyed by the
			// first column never mistakes one for the other.
			rows = append(rows, []string{csvName(e.Metric) + " " + e.Stat, strconv.FormatFloat(level, 'f', -1, 64), side(e.Interval.Low), side(e.Interval.High)})
		}
	}
	gpuHeader, gpuRows := r.gpuCSVRows()
	rows = append(append(rows, nil, nil, gpuHeader), gpuRows...)
	for _, row := range rows {
		if row == nil {
			// encoding/csv writes an empty record as an empty quoted field;
			// AIPerf's section break is a bare blank line.
			w.Flush()
			b.WriteString("\r\n")
			continue
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// csvName is AIPerf's row name: the header and, except for counts, the unit.
func csvName(m metric) string {
	if m.Unit == "requests" || m.Unit == "count" {
		return m.Name
	}
	return m.Name + " (" + m.Unit + ")"
}
