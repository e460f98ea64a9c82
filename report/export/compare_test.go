package export

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	baseline := []byte(`{"time_to_first_token":{"unit":"ms","avg":100,"p99":200},
		"output_token_throughput":{"unit":"tokens/sec","avg":1000},"input_config":{"cli_command":"x"}}`)
	base, err := ParseMetrics(baseline)
	if err != nil {
		t.Fatal(err)
	}
	current := Metrics{"time_to_first_token": {"avg": 105, "p99": 230}, "output_token_throughput": {"avg": 940}}
	for _, tc := range []struct {
		rule   string
		failed int
	}{
		{"time_to_first_token.p99>10%", 1},  // +15%
		{"time_to_first_token.p99>20%", 0},  //
		{"time_to_first_token>+4%", 1},      // avg +5%
		{"output_token_throughput<-5%", 1},  // −6%
		{"output_token_throughput<-10%", 0}, //
		{"time_to_first_token.p99>250", 0},  // absolute, ms
		{"time_to_first_token.p99>225", 1},
	} {
		rules, err := ParseRules([]string{tc.rule})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		failed, err := Compare(&out, Side{Metrics: base}, Side{Metrics: current}, rules, .95)
		if err != nil || failed != tc.failed {
			t.Errorf("%s: %d failed (%v), want %d\n%s", tc.rule, failed, err, tc.failed, out.String())
		}
		if !strings.Contains(out.String(), "time_to_first_token.p99") || !strings.Contains(out.String(), "+15.0%") {
			t.Errorf("%s: the table lacks the p99 row:\n%s", tc.rule, out.String())
		}
	}
	rules, _ := ParseRules([]string{"goodput>5%"})
	if _, err := Compare(io.Discard, Side{Metrics: base}, Side{Metrics: current}, rules, .95); err == nil {
		t.Error("a rule on a metric neither run has passed silently")
	}
	if err := base.CheckRules(rules); err == nil || !strings.Contains(err.Error(), "has no goodput.avg; metrics there: output_token_throughput, time_to_first_token") {
		t.Errorf("a relative rule the baseline cannot judge: %v", err)
	}
	if absolute, _ := ParseRules([]string{"goodput<5"}); base.CheckRules(absolute) != nil {
		t.Error("an absolute rule needs no baseline value")
	}
	for _, bad := range []string{"time_to_first_token.p98>5%", "ttft>>5", "time_to_first_token.p99 rose 5%"} {
		if _, err := ParseRules([]string{bad}); err == nil {
			t.Errorf("rule %q accepted", bad)
		}
	}
}

// TestRunMetrics: a run is compared on the values its JSON holds, without
// the JSON being written and read back.
func TestRunMetrics(t *testing.T) {
	run := fixedRun(t)
	b, err := JSON(run)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseMetrics(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Metrics(); !reflect.DeepEqual(got, parsed) {
		t.Errorf("in memory:\n %v\nfrom the JSON:\n %v", got, parsed)
	}
}

func TestWriteArtifacts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts", "run")
	run := fixedRun(t)
	run.ConsoleText, run.Log = []byte("the console\n"), []byte("the log\n")
	if err := WriteArtifacts(dir, run); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{artifactJSON, artifactCSV, artifactJSONL, artifactInputs, artifactConsole,
		filepath.Join(artifactLogs, artifactLog), artifactHTML, artifactCommand} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v, %v", name, st, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, legacyJSON)); err == nil {
		t.Errorf("%s is written; profile_export_aiperf.json replaces it", legacyJSON)
	}
	want, err := LoadBaseline(filepath.Join(dir, artifactJSON))
	if err != nil {
		t.Fatalf("the JSON does not load as a baseline: %v", err)
	}
	if got, err := LoadBaseline(dir); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("the run directory as a baseline: %v", err)
	}
	// A directory of an older inferprobe holds profile_export_inferprobe.json.
	old := t.TempDir()
	b, _ := os.ReadFile(filepath.Join(dir, artifactJSON))
	if err := os.WriteFile(filepath.Join(old, legacyJSON), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadBaseline(old); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("an older run's directory as a baseline: %v", err)
	}
	if _, err := LoadBaseline(t.TempDir()); err == nil || !strings.Contains(err.Error(), "holds no profile_export_aiperf.json") {
		t.Errorf("an empty directory as a baseline: %v", err)
	}
}
