package alerts

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// runbookBase is the runbook_url prefix the rules document (see RUNBOOK.md).
const runbookBase = "https://github.com/inferprobe/inferprobe/blob/main/alerts/RUNBOOK.md#"

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

type testFile struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func decodeYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestAlertsAreDocumentedAndTested checks, without promtool, what promtool does not: every alert
// has a severity, a summary, a templated description and a runbook_url whose anchor exists in
// RUNBOOK.md, and the promtool tests hold a firing and a non-firing case for it.
func TestAlertsAreDocumentedAndTested(t *testing.T) {
	var rules ruleFile
	decodeYAML(t, "inferprobe-rules.yml", &rules)
	var tests testFile
	decodeYAML(t, "inferprobe-rules.test.yml", &tests)
	runbook, err := os.ReadFile("RUNBOOK.md")
	if err != nil {
		t.Fatal(err)
	}

	firing, quiet := map[string]bool{}, map[string]bool{}
	for _, tg := range tests.Tests {
		for _, at := range tg.AlertRuleTest {
			if len(at.ExpAlerts) > 0 {
				firing[at.Alertname] = true
			} else {
				quiet[at.Alertname] = true
			}
		}
	}

	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts++
			name := r.Alert
			if sev := r.Labels["severity"]; sev != "critical" && sev != "warning" && sev != "info" {
				t.Errorf("%s: severity %q, want critical, warning or info (what stock Alertmanager routing trees match)", name, sev)
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s: no summary", name)
			}
			if !strings.Contains(r.Annotations["description"], "{{ $") {
				t.Errorf("%s: description is not templated: %q", name, r.Annotations["description"])
			}
			if want := runbookBase + strings.ToLower(name); r.Annotations["runbook_url"] != want {
				t.Errorf("%s: runbook_url %q, want %q", name, r.Annotations["runbook_url"], want)
			}
			if !regexp.MustCompile(`(?m)^## ` + regexp.QuoteMeta(name) + `$`).Match(runbook) {
				t.Errorf("%s: RUNBOOK.md has no section \"## %s\" for its runbook_url anchor", name, name)
			}
			if !firing[name] {
				t.Errorf("%s: no promtool test case where it fires", name)
			}
			if !quiet[name] {
				t.Errorf("%s: no promtool test case where it does not fire", name)
			}
		}
	}
	if alerts == 0 {
		t.Fatal("no alerts found in inferprobe-rules.yml")
	}
}

// promtool evaluates rule groups in no fixed order unless the test file lists them; alerts that
// read recorded series need the recording groups first, so every group must be listed.
func TestGroupEvalOrderListsEveryGroup(t *testing.T) {
	var rules ruleFile
	decodeYAML(t, "inferprobe-rules.yml", &rules)
	var tests struct {
		GroupEvalOrder []string `yaml:"group_eval_order"`
	}
	decodeYAML(t, "inferprobe-rules.test.yml", &tests)
	var groups []string
	for _, g := range rules.Groups {
		groups = append(groups, g.Name)
	}
	if strings.Join(groups, ",") != strings.Join(tests.GroupEvalOrder, ",") {
		t.Errorf("group_eval_order %v, want every group in the rule file's order %v", tests.GroupEvalOrder, groups)
	}
}
