package export

import (
	"bytes"
	"encoding/csv"
	"strconv"
)

// CSV returns profile_export_inferprobe.csv in AIPerf's layout: the
// distributions ("Metric,avg,min,max,p1,…,p99,std"), a blank line, the
// single values ("Metric,Value"), and then, after another blank line, our
// extras ("inferprobe,Value"), kept apart so that a script reading numbers
// from AIPerf's two sections never meets a digest.
func CSV(r Run) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	rows := [][]string{{"Metric", "avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}}
	dists := distributions(r.Summary)
	if lag := scaled(r.Summary.ScheduleLag, ms); lag != nil {
		dists = append(dists, metric{Name: "Schedule Lag", Unit: "ms", Stats: lag})
	}
	for _, m := range dists {
		s := m.Stats
		rows = append(rows, []string{m.Name + " (" + m.Unit + ")", f(s.Avg), f(s.Min), f(s.Max),
			f(s.P1), f(s.P5), f(s.P10), f(s.P25), f(s.P50), f(s.P75), f(s.P90), f(s.P95), f(s.P99), f(s.Std)})
	}
	rows = append(rows, nil, []string{"Metric", "Value"})
	for _, m := range singles(r) {
		// AIPerf leaves the unit out of counts' names and writes them as
		// integers: "Request Count,21".
		if m.Unit == "requests" {
			rows = append(rows, []string{m.Name, strconv.FormatFloat(m.Value, 'f', 0, 64)})
			continue
		}
		rows = append(rows, []string{m.Name + " (" + m.Unit + ")", f(m.Value)})
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
	)
	for _, reason := range sortedReasons(r.Summary.Errors) {
		rows = append(rows, []string{"Errors: " + string(reason), strconv.Itoa(r.Summary.Errors[reason])})
	}
	for _, row := range rows {
		if row == nil {
			// encoding/csv writes an empty record as an empty quoted field;
			// AIPerf's section break is a bare blank line.
			w.Flush()
			b.WriteString("\n")
			continue
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}
