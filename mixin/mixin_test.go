package mixin

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-jsonnet"

	"github.com/inferprobe/inferprobe/scenarios"
)

var update = flag.Bool("update", false, "rewrite alerts/inferprobe-rules.yml from the jsonnet")

var rulesFile = filepath.Join("..", "alerts", "inferprobe-rules.yml")

// The committed rule file is what the mixin generates.
func TestRulesUpToDate(t *testing.T) {
	want, err := Rules()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(rulesFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what mixin/*.libsonnet generates: edit the jsonnet, then run `go test ./mixin/ -run TestRulesUpToDate -update`", rulesFile)
	}
}

// mixin.libsonnet is what jsonnet consumers import (kube-prometheus, jb): it must evaluate from
// the files on disk and hold the rules, the alerts and every dashboard file.
func TestMixinEvaluates(t *testing.T) {
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{})
	out, err := vm.EvaluateAnonymousSnippet("test.jsonnet", `
local m = import 'mixin.libsonnet';
{ rules: std.length(m.prometheusRules.groups), alerts: std.length(m.prometheusAlerts.groups), dashboards: std.objectFields(m.grafanaDashboards) }`)
	if err != nil {
		t.Fatal(err)
	}
	dashboards, err := filepath.Glob(filepath.Join("..", "dashboards", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dashboards {
		if !strings.Contains(out, `"inferprobe-`+filepath.Base(d)+`"`) {
			t.Errorf("grafanaDashboards lacks %s: add it to dashboards.libsonnet (%s)", filepath.Base(d), out)
		}
	}
}

// A consumer's _config override reaches every rule.
func TestConfigOverride(t *testing.T) {
	out, err := evaluate(`
local m = (import 'config.libsonnet') + (import 'rules.libsonnet') + (import 'alerts.libsonnet') + { _config+:: { selector: 'job="llm-probes"' } };
std.manifestJson(m.prometheusRules.groups + m.prometheusAlerts.groups)`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, `job=\\\"inferprobe\\\"`) || !strings.Contains(out, `job=\\\"llm-probes\\\"`) {
		t.Errorf("the selector override did not replace job=\"inferprobe\" everywhere:\n%s", out)
	}
}

// The probe rates check-config and serve warn about (scenarios.AlertTailMinRequests) are the
// config block's: the tail alerts' guard over an hour.
func TestAlertRatesMatchConfig(t *testing.T) {
	out, err := evaluate(`local m = import 'mixin.libsonnet'; { n: m._config.latency.tail.minSamples, w: m._config.latency.tail.window }`)
	if err != nil {
		t.Fatal(err)
	}
	var tail struct {
		N int    `json:"n"`
		W string `json:"w"`
	}
	if err := json.Unmarshal([]byte(out), &tail); err != nil {
		t.Fatal(err)
	}
	if tail.N != scenarios.AlertTailMinRequests || tail.W != "1h" {
		t.Errorf("the config block's tail guard is %d requests in %s; scenarios.AlertTailMinRequests says %d in 1h: change them together",
			tail.N, tail.W, scenarios.AlertTailMinRequests)
	}
}
