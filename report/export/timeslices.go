package export

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferprobe/inferprobe/report"
)

// AIPerf 0.13's time-sliced exports (--slice-duration).
const (
	artifactTimeslicesJSON = "profile_export_aiperf_timeslices.json"
	artifactTimeslicesCSV  = "profile_export_aiperf_timeslices.csv"
)

// timeslices are r's windows of r.Config.SliceDuration (report.Timeslices),
// each as a run of its own, for the metrics the main export writes.
func (r Run) timeslices() []slicedRun {
	var out []slicedRun
	d := time.Duration(r.Config.SliceDuration * float64(time.Second))
	for _, ts := range report.Timeslices(r.Requests, d, r.SLO) {
		w := r
		w.Summary = ts.Summary
		out = append(out, slicedRun{ts, w})
	}
	return out
}

type slicedRun struct {
	report.Timeslice
	run Run
}

// metrics are the window's metrics in the main JSON's order.
func (s slicedRun) metrics() []metric {
	return append(ordered(s.run, declaredOrder), ordered(s.run, extraOrder)...)
}

// TimeslicesJSON is profile_export_aiperf_timeslices.json as AIPerf 0.13
// writes it: "timeslices", each window's start_ns and end_ns, is_complete
// false on a window the run's end cut short (absent otherwise), and its
// metrics as the main JSON has them; then input_config.
func TimeslicesJSON(r Run) ([]byte, error) { return timeslicesJSON(r, r.timeslices()) }

func timeslicesJSON(r Run, windows []slicedRun) ([]byte, error) {
	list := []obj{}
	for _, s := range windows {
		o := obj{{"start_ns", s.Start.UnixNano()}, {"end_ns", s.End.UnixNano()}}
		if !s.Complete {
			o = append(o, kv{"is_complete", false})
		}
		for _, m := range s.metrics() {
			o = append(o, kv{m.Tag, m.json()})
		}
		list = append(list, o)
	}
	return indentedJSON(obj{{"timeslices", list}, {"input_config", r.inputConfig()}})
}

// timesliceStats are AIPerf's STAT_KEYS, the order of a window's rows.
var timesliceStats = []string{"avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

// TimeslicesCSV is profile_export_aiperf_timeslices.csv as AIPerf 0.13
// writes it, the tidy form `aiperf plot` reads: a row per window, metric
// (by tag, named by its header) and statistic; a single value is its avg.
func TimeslicesCSV(r Run) ([]byte, error) { return timeslicesCSV(r.timeslices()) }

func timeslicesCSV(windows []slicedRun) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true // Python's csv module
	if err := w.Write([]string{"Timeslice", "Start_NS", "End_NS", "Metric", "Unit", "Stat", "Value"}); err != nil {
		return nil, err
	}
	for i, s := range windows {
		ms := s.metrics()
		slices.SortFunc(ms, func(a, b metric) int { return strings.Compare(a.Tag, b.Tag) })
		head := []string{strconv.Itoa(i), strconv.FormatInt(s.Start.UnixNano(), 10), strconv.FormatInt(s.End.UnixNano(), 10)}
		for _, m := range ms {
			values := m.csvStats()
			for _, st := range timesliceStats {
				v, ok := values[st]
				if !ok {
					continue
				}
				if err := w.Write(append(slices.Clone(head), m.Name, m.Unit, st, v)); err != nil {
					return nil, err
				}
			}
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// csvStats are m's statistics as AIPerf's CSV writes them (two decimals, a
// count of requests or tokens as an integer), by name; a single value is
// its avg.
func (m metric) csvStats() map[string]string {
	if m.Stats == nil {
		if (m.Unit == "requests" || m.Unit == "tokens") && m.Value == float64(int64(m.Value)) {
			return map[string]string{"avg": strconv.FormatInt(int64(m.Value), 10)}
		}
		return map[string]string{"avg": strconv.FormatFloat(m.Value, 'f', 2, 64)}
	}
	out := map[string]string{}
	for _, e := range statistics(m.Stats) {
		out[e.k] = strconv.FormatFloat(e.v.(float64), 'f', 2, 64)
	}
	return out
}
