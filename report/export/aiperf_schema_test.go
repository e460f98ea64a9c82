package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The files of one real AIPerf 0.13.0 run (--concurrency 4 --request-count
// 60, chat, streaming, against inferprobe's simulator), the first line of
// its JSONL only.
const aiperfRef = "testdata/aiperf-0.13"

// keys returns a JSON object's keys in their order, and its values; none
// for another JSON value.
func keys(t *testing.T, b []byte) ([]string, map[string]json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	var order []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		order = append(order, tok.(string))
		vals[tok.(string)] = v
	}
	return order, vals
}

// common is a's keys that b has too, in a's order.
func common(a, b []string) []string {
	var out []string
	for _, k := range a {
		if slices.Contains(b, k) {
			out = append(out, k)
		}
	}
	return out
}

// sameOrder checks that the keys both objects have come in the same order,
// and that ours has every key of AIPerf's that want lists.
func sameOrder(t *testing.T, what string, ours, theirs, want []string) {
	t.Helper()
	if a, b := common(ours, theirs), common(theirs, ours); !slices.Equal(a, b) {
		t.Errorf("%s: keys in another order than AIPerf's:\n ours   %v\n AIPerf %v", what, a, b)
	}
	for _, k := range want {
		if !slices.Contains(ours, k) {
			t.Errorf("%s lacks AIPerf's %q", what, k)
		}
	}
}

func readRef(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(aiperfRef, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAIPerfJSONSchema holds profile_export_aiperf.json to a real AIPerf
// 0.13 file: the same top-level keys in the same order, every metric both
// have in the same unit with the same statistics in the same order, and
// input_config and run_info laid out alike.
func TestAIPerfJSONSchema(t *testing.T) {
	b, err := JSON(fixedRun(t))
	if err != nil {
		t.Fatal(err)
	}
	ours, ourVals := keys(t, b)
	theirs, theirVals := keys(t, readRef(t, "profile_export_aiperf.json"))
	sameOrder(t, "profile_export_aiperf.json", ours, theirs, []string{"schema_version", "aiperf_version", "benchmark_id",
		"telemetry_data", "input_config", "run_info", "was_cancelled", "is_complete", "error_summary", "start_time", "end_time"})
	shared := 0
	for _, k := range common(ours, theirs) {
		ourKeys, our := keys(t, ourVals[k])
		if _, isMetric := our["unit"]; !isMetric {
			continue
		}
		shared++
		theirKeys, their := keys(t, theirVals[k])
		if string(our["unit"]) != string(their["unit"]) {
			t.Errorf("%s: unit %s, AIPerf's %s", k, our["unit"], their["unit"])
		}
		if !slices.Equal(ourKeys, theirKeys) {
			t.Errorf("%s: statistics %v, AIPerf's %v", k, ourKeys, theirKeys)
		}
	}
	if shared < 30 {
		t.Errorf("only %d metrics in common with AIPerf's file", shared)
	}
	for _, obj := range []string{"input_config", "run_info", "telemetry_data"} {
		o, _ := keys(t, ourVals[obj])
		r, _ := keys(t, theirVals[obj])
		sameOrder(t, obj, o, r, nil)
		if len(common(o, r)) < len(r)-2 { // slos and tokenizer appear only when set
			t.Errorf("%s has %v, AIPerf's %v", obj, o, r)
		}
	}
	if !bytes.HasSuffix(b, []byte("}")) {
		t.Error("AIPerf's file ends with its closing brace, no newline")
	}
}

// TestAIPerfCSVSchema: the CSV's headers are AIPerf's, and every row both
// files have is named alike, in the same order.
func TestAIPerfCSVSchema(t *testing.T) {
	b, err := CSV(fixedRun(t))
	if err != nil {
		t.Fatal(err)
	}
	rows := func(b []byte) (names []string, headers []string) {
		r := csv.NewReader(bytes.NewReader(b))
		r.FieldsPerRecord = -1
		all, err := r.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range all {
			if row[0] == "Metric" || row[0] == "Endpoint" {
				headers = append(headers, strings.Join(row, ","))
				continue
			}
			names = append(names, row[0])
		}
		return names, headers
	}
	ours, ourHeaders := rows(b)
	theirs, theirHeaders := rows(readRef(t, "profile_export_aiperf.csv"))
	if !slices.Equal(ourHeaders, theirHeaders) {
		t.Errorf("headers %v, AIPerf's %v", ourHeaders, theirHeaders)
	}
	if a, c := common(ours, theirs), common(theirs, ours); !slices.Equal(a, c) || len(a) < 30 {
		t.Errorf("rows in common, ours then AIPerf's:\n %v\n %v", a, c)
	}
}

// TestAIPerfJSONLSchema: a line carries every metadata field of AIPerf's,
// in its order, and every metric both have in the same unit.
func TestAIPerfJSONLSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, fixedRun(t)); err != nil {
		t.Fatal(err)
	}
	line, _, _ := bytes.Cut(buf.Bytes(), []byte("\n"))
	ourTop, ours := keys(t, line)
	theirTop, theirs := keys(t, readRef(t, "profile_export.jsonl"))
	sameOrder(t, "line", ourTop, theirTop, theirTop)
	ourMeta, _ := keys(t, ours["metadata"])
	theirMeta, _ := keys(t, theirs["metadata"])
	sameOrder(t, "metadata", ourMeta, theirMeta, theirMeta)
	ourMetrics, ourVals := keys(t, ours["metrics"])
	theirMetrics, theirVals := keys(t, theirs["metrics"])
	for _, k := range common(ourMetrics, theirMetrics) {
		var a, b struct{ Unit string }
		json.Unmarshal(ourVals[k], &a)
		json.Unmarshal(theirVals[k], &b)
		if a.Unit != b.Unit {
			t.Errorf("%s: unit %q, AIPerf's %q", k, a.Unit, b.Unit)
		}
	}
	if n := len(common(ourMetrics, theirMetrics)); n < 18 {
		t.Errorf("only %d per-request metrics in common with AIPerf's: ours %v", n, ourMetrics)
	}
}

// TestCompareWithAIPerf: an AIPerf 0.13 run is a baseline, compared like
// with like: the same tags, the client's input length against AIPerf's.
func TestCompareWithAIPerf(t *testing.T) {
	base, err := LoadBaseline(filepath.Join(aiperfRef, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := base["input_sequence_length"]["avg"]; got != 128 {
		t.Errorf("AIPerf's input_sequence_length avg %v, want 128", got)
	}
	rules, err := ParseRules([]string{"usage_prompt_tokens.p50>1000%", "decode_duration.p99>1000%", "request_error_rate>1"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	failed, err := Compare(&out, Side{Metrics: base}, Side{Metrics: fixedRun(t).Metrics()}, rules, .95)
	if err != nil || failed != 1 { // the fixed run's error rate is above 1 %
		t.Errorf("Compare: %d failed, %v\n%s", failed, err, out.String())
	}

	// AIPerf's profile_export.jsonl gives the baseline's samples, so the
	// changes are tested.
	samples, err := LoadSamples(aiperfRef)
	if err != nil || samples == nil || len(samples.Values["time_to_first_token"]) == 0 {
		t.Fatalf("AIPerf's samples: %v, %v", samples, err)
	}
	run := fixedRun(t)
	current, err := run.Samples()
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if _, err := Compare(&out, Side{Metrics: base, Samples: samples}, Side{Metrics: run.Metrics(), Samples: current}, rules, .95); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"time_to_first_token.p50", "~ (p=", "time_to_first_token (all values)", "Holm"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the tested comparison lacks %q:\n%s", want, out.String())
		}
	}
}

// TestAIPerfMetricsDocumented: every metric of AIPerf's reference file is
// in ours, or in docs/metrics.md's table of the metrics bench does not
// write (which names none that bench does write).
func TestAIPerfMetricsDocumented(t *testing.T) {
	const heading = "### AIPerf's metrics that bench does not write"
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), heading)
	if !ok {
		t.Fatalf("docs/metrics.md has no %q", heading)
	}
	undocumented := map[string]bool{}
	inTable := false
	for line := range strings.Lines(section) {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break // the table's end
			}
			continue
		}
		inTable = true
		first := strings.Split(line, "|")[1]
		for _, name := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(first, -1) {
			undocumented[name[1]] = true
		}
	}
	metrics := func(b []byte) map[string]bool {
		_, vals := keys(t, b)
		out := map[string]bool{}
		for k, v := range vals {
			if _, m := keys(t, v); m["unit"] != nil {
				out[k] = true
			}
		}
		return out
	}
	b, err := JSON(fixedRun(t))
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := metrics(b), metrics(readRef(t, "profile_export_aiperf.json"))
	for k := range theirs {
		if !ours[k] && !undocumented[k] {
			t.Errorf("AIPerf's %s is neither written nor in docs/metrics.md's table of those bench does not write", k)
		}
	}
	for k := range undocumented {
		switch {
		case ours[k]:
			t.Errorf("docs/metrics.md says bench does not write %s, which it writes", k)
		case !theirs[k]:
			t.Errorf("docs/metrics.md names %s, which AIPerf's file lacks", k)
		}
	}
	if len(undocumented) == 0 {
		t.Error("the table names no metric")
	}
}
