package deploy

import (
	"os"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// TestHelmChart renders the chart with Helm's own engine (strict: a missing value fails)
// and checks the output as the raw manifests are checked.
func TestHelmChart(t *testing.T) {
	ch, err := loader.Load("helm/inferprobe")
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Validate(); err != nil {
		t.Fatal(err)
	}
	const secretName = "inferprobe-api-key"
	cases := []struct {
		name   string
		values map[string]any
		// What the rendering must hold.
		deployments, statefulSets, monitors, rules int
	}{
		{name: "defaults", deployments: 1},
		{
			name: "sharded-with-key-and-monitoring",
			values: map[string]any{
				"shards":         3,
				"apiKeySecret":   secretName,
				"scenario":       strings.Replace(defaultScenario(t, ch.Values), "      # With apiKeySecret set: api_key_file", "      api_key_file", 1),
				"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}},
				"prometheusRule": map[string]any{"enabled": true},
			},
			statefulSets: 1, monitors: 1, rules: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vals, err := chartutil.ToRenderValues(ch, c.values, chartutil.ReleaseOptions{
				Name: "inferprobe", Namespace: "monitoring", Revision: 1, IsInstall: true,
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			out, err := engine.Engine{Strict: true}.Render(ch, vals)
			if err != nil {
				t.Fatal(err)
			}
			names := make([]string, 0, len(out))
			for name := range out {
				names = append(names, name)
			}
			sort.Strings(names)
			var b bundle
			for _, name := range names {
				if strings.HasSuffix(name, ".yaml") {
					b.add(t, name, []byte(out[name]))
				}
			}
			if len(b.deployments) != c.deployments || len(b.statefulSets) != c.statefulSets ||
				len(b.serviceMonitors) != c.monitors || len(b.rules) != c.rules || len(b.services) != 1 || len(b.configMaps) != 1 {
				t.Fatalf("rendered %d Deployments, %d StatefulSets, %d ServiceMonitors, %d PrometheusRules, %d Services, %d ConfigMaps",
					len(b.deployments), len(b.statefulSets), len(b.serviceMonitors), len(b.rules), len(b.services), len(b.configMaps))
			}
			for _, sm := range b.serviceMonitors {
				if sm.Labels["release"] != "kube-prometheus-stack" {
					t.Errorf("ServiceMonitor %s: serviceMonitor.labels not applied: %v", sm.Name, sm.Labels)
				}
			}
			// A Secret of the cluster, made outside the chart: the key's value does not matter.
			b.check(t, c.name, map[string]map[string]string{secretName: {"api-key": "not-a-real-key"}})
		})
	}
}

func defaultScenario(t *testing.T, values map[string]any) string {
	t.Helper()
	s, ok := values["scenario"].(string)
	if !ok || !strings.Contains(s, "# With apiKeySecret set: api_key_file") {
		t.Fatal("values.yaml: scenario lost its api_key_file comment, which this test uncomments")
	}
	return s
}

// TestHelmValuesHoldNoSecret keeps credentials out of values.yaml: the chart only takes the
// name of an existing Secret.
func TestHelmValuesHoldNoSecret(t *testing.T) {
	data, err := os.ReadFile("helm/inferprobe/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if loc := secretLike.FindIndex(data); loc != nil {
		t.Errorf("values.yaml holds what looks like a credential: %q", data[loc[0]:loc[1]])
	}
}
