package export

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

// TestTimeslicesFiles: with --slice-duration the run files include AIPerf's two timeslice
// files, in its layout: the tidy CSV `aiperf plot` reads (a row per window, metric and
// statistic, counts as integers) and the JSON of windows, the last cut short by the run's end;
// without it, neither.
func TestTimeslicesFiles(t *testing.T) {
	run := fixedRun(t)
	if files := RunFiles(run); files[artifactTimeslicesCSV] != nil || files[artifactTimeslicesJSON] != nil {
		t.Fatal("timeslice files without --slice-duration")
	}
	run.Config.SliceDuration = 2 // the 24 requests are sent 250 ms apart: 3 windows
	files := RunFiles(run)
	if files[artifactTimeslicesCSV] == nil || files[artifactTimeslicesJSON] == nil {
		t.Fatal("no timeslice files with --slice-duration")
	}
	b, err := TimeslicesCSV(run)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value" {
		t.Errorf("header %v", rows[0])
	}
	counts, ttft := map[string]string{}, 0
	for _, r := range rows[1:] {
		if r[3] == "Request Count" {
			counts[r[0]] = r[6]
		}
		if r[3] == "Time to First Token" {
			ttft++
		}
	}
	// The windows start at the first send, 1.2 ms late (a dial): the first holds requests
	// 0-7, one rate-limited; the second 8-16 (16 was sent 1 ms late), one stalled; the third
	// 17-22 (23 was cancelled before its send). Request Count counts the successes.
	if counts["0"] != "7" || counts["1"] != "8" || counts["2"] != "6" || len(counts) != 3 {
		t.Errorf("request counts by window %v, want 7, 8, 6", counts)
	}
	if ttft != 3*len(timesliceStats) {
		t.Errorf("%d TTFT rows, want every statistic of each of 3 windows", ttft)
	}
	b, err = TimeslicesJSON(run)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Timeslices []map[string]json.RawMessage `json:"timeslices"`
		Input      map[string]any               `json:"input_config"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Timeslices) != 3 || doc.Input == nil {
		t.Fatalf("timeslices JSON: %v, %d windows", err, len(doc.Timeslices))
	}
	for i, w := range doc.Timeslices {
		complete, cut := w["is_complete"]
		if (i < 2) == cut || cut && string(complete) != "false" {
			t.Errorf("window %d: is_complete %s; want it only on the last, false", i, complete)
		}
		if w["start_ns"] == nil || w["end_ns"] == nil || w["time_to_first_token"] == nil {
			t.Errorf("window %d lacks start_ns, end_ns or time_to_first_token", i)
		}
	}
}
