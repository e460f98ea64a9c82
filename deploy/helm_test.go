package deploy

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

const chartDir = "helm/inferprobe"

// The Secrets of the cluster that the test releases name, made outside the chart, with
// the files the pods see in them. The web configuration sets a header only, so that the
// daemon run by checkDeployed still answers /-/ready without credentials.
var helmSecrets = map[string]map[string]string{
	"inferprobe-api-key":     {"api-key": "not-a-real-key"},
	"inferprobe-web":         {"web-config.yml": "http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n"},
	"inferprobe-burst-token": {"token": "not-a-real-token"},
}

func loadChart(t *testing.T) *chart.Chart { t.Helper(); return loadChartAt(t, chartDir) }

func loadChartAt(t *testing.T, dir string) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Validate(); err != nil {
		t.Fatal(err)
	}
	return ch
}

// render validates values against values.schema.json, as helm install does, and renders
// the chart with Helm's own engine (strict: a missing value fails) as release inferprobe. It
// returns the rendered files by name, NOTES.txt among them.
func render(t *testing.T, ch *chart.Chart, values map[string]any) (map[string]string, error) {
	t.Helper()
	return renderRelease(t, ch, "inferprobe", values)
}

// renderRelease is render as the release named release.
func renderRelease(t *testing.T, ch *chart.Chart, release string, values map[string]any) (map[string]string, error) {
	t.Helper()
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{
		Name: release, Namespace: "monitoring", Revision: 1, IsInstall: true,
	}, nil)
	if err != nil {
		return nil, err
	}
	if err := chartutil.ValidateAgainstSchema(ch, vals["Values"].(chartutil.Values)); err != nil {
		return nil, err
	}
	return engine.Engine{Strict: true}.Render(ch, vals)
}

// decode decodes every rendered manifest strictly into its typed object.
func decode(t *testing.T, out map[string]string) *bundle {
	t.Helper()
	names := slices.Sorted(maps.Keys(out))
	var b bundle
	for _, name := range names {
		if strings.HasSuffix(name, ".yaml") {
			b.add(t, name, []byte(out[name]))
		}
	}
	return &b
}

// TestHelmLint runs helm lint (strict: warnings fail too) through Helm's Go library, with
// the chart's defaults and with every optional object on.
func TestHelmLint(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"defaults": nil,
		"everything": {
			"shards": 2, "dashboards": map[string]any{"enabled": true},
			"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true},
			"burstAPI": map[string]any{"enabled": true, "tokenSecret": "inferprobe-burst-token"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			for _, m := range lintChart(chartDir, values) {
				t.Errorf("helm lint: %s", m)
			}
		})
	}
}

// lintChart is helm lint, strict: its warnings and errors.
func lintChart(dir string, values map[string]any) []support.Message {
	var out []support.Message
	for _, m := range lint.All(dir, values, "monitoring", true).Messages {
		if m.Severity >= support.WarningSev {
			out = append(out, m)
		}
	}
	return out
}

// TestHelmChart renders the chart and checks the output as the raw manifests are checked;
// between them the cases set every value of values.yaml.
func TestHelmChart(t *testing.T) {
	ch := loadChart(t)
	cases := []struct {
		name   string
		values map[string]any
		// What the rendering must hold.
		deployments, statefulSets, serviceMonitors, podMonitors, rules, dashboards int
		// Extra checks of this case.
		check func(t *testing.T, b *bundle, notes string)
	}{
		{name: "defaults", deployments: 1, check: func(t *testing.T, b *bundle, notes string) {
			pod := b.deployments[0].Spec.Template
			if b.deployments[0].Name != "inferprobe" || b.services[0].Spec.Type != corev1.ServiceTypeClusterIP {
				t.Errorf("want Deployment inferprobe behind a ClusterIP Service; have %s, %s", b.deployments[0].Name, b.services[0].Spec.Type)
			}
			if args := pod.Spec.Containers[0].Args; slices.Contains(args, "--web.enable-burst-api") {
				t.Errorf("the burst API must be off by default: %v", args)
			}
			if !strings.Contains(notes, "port-forward svc/inferprobe 9470:9470") || !strings.Contains(notes, "Not scraped by the chart") {
				t.Errorf("NOTES.txt should say how to reach the daemon and that nothing scrapes it:\n%s", notes)
			}
		}},
		{
			name: "sharded-key-burst-api-web-config-monitoring-dashboards",
			values: map[string]any{
				"shards":         3,
				"apiKeySecret":   "inferprobe-api-key",
				"scenario":       strings.Replace(defaultScenario(t, ch.Values), "      # With apiKeySecret set: api_key_file", "      api_key_file", 1),
				"webConfig":      map[string]any{"secret": "inferprobe-web"},
				"burstAPI":       map[string]any{"enabled": true, "tokenSecret": "inferprobe-burst-token"},
				"extraArgs":      []any{"--log.level=debug"},
				"extraEnv":       []any{map[string]any{"name": "GOMEMLIMIT", "value": "400MiB"}},
				"service":        map[string]any{"type": "LoadBalancer", "annotations": map[string]any{"example.com/team": "sre"}},
				"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}, "interval": "15s", "endpoint": map[string]any{"scrapeTimeout": "10s"}},
				"prometheusRule": map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}},
				"dashboards":     map[string]any{"enabled": true, "annotations": map[string]any{"grafana_folder": "inferprobe"}, "namespace": "grafana"},
			},
			statefulSets: 1, serviceMonitors: 1, rules: 1, dashboards: len(dashboardFiles(t)),
			check: func(t *testing.T, b *bundle, notes string) {
				c := b.statefulSets[0].Spec.Template.Spec.Containers[0]
				for _, want := range []string{"--web.config.file=/etc/inferprobe/web/web-config.yml", "--web.enable-burst-api", "--web.burst-api.token-file=/etc/inferprobe/burst-api/token", "--log.level=debug"} {
					if !slices.Contains(c.Args, want) {
						t.Errorf("args %v lack %s", c.Args, want)
					}
				}
				if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "GOMEMLIMIT" && e.Value == "400MiB" }) {
					t.Errorf("extraEnv not applied: %+v", c.Env)
				}
				s := b.services[0]
				if s.Annotations["example.com/team"] != "sre" || s.Spec.ClusterIP != corev1.ClusterIPNone || s.Spec.Type != "" {
					t.Errorf("Service: annotations %v, clusterIP %q, type %q; want service.annotations, headless, no type (shards > 1)", s.Annotations, s.Spec.ClusterIP, s.Spec.Type)
				}
				sm := b.serviceMonitors[0]
				if sm.Labels["release"] != "kube-prometheus-stack" || sm.Spec.Endpoints[0].Interval != "15s" || sm.Spec.Endpoints[0].ScrapeTimeout != "10s" || sm.Spec.Endpoints[0].Scheme.String() != "http" {
					t.Errorf("ServiceMonitor: labels %v, endpoint %+v; want serviceMonitor.labels, interval and endpoint applied, scheme http", sm.Labels, sm.Spec.Endpoints[0])
				}
				if b.rules[0].Labels["release"] != "kube-prometheus-stack" {
					t.Errorf("PrometheusRule: prometheusRule.labels not applied: %v", b.rules[0].Labels)
				}
				checkDashboards(t, b, "grafana", map[string]string{"grafana_folder": "inferprobe"})
				for _, want := range []string{"port-forward pod/inferprobe-0", "ServiceMonitor inferprobe", "release", "Burst API on", "inferprobe-burst-token", "Dashboards: "} {
					if !strings.Contains(notes, want) {
						t.Errorf("NOTES.txt lacks %q:\n%s", want, notes)
					}
				}
			},
		},
		{
			name: "names-scheduling-pod-metadata-pod-monitor",
			values: map[string]any{
				"nameOverride":     "canary",
				"image":            map[string]any{"repository": "registry.example.com/inferprobe", "tag": "v1.2.3", "pullPolicy": "Always"},
				"imagePullSecrets": []any{map[string]any{"name": "regcred"}},
				"nodeSelector":     map[string]any{"kubernetes.io/os": "linux"},
				"tolerations":      []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "monitoring", "effect": "NoSchedule"}},
				"affinity": map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
					"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "node-role", "operator": "In", "values": []any{"monitoring"}}}}},
				}}},
				"podAnnotations": map[string]any{"example.com/scrape-logs": "true"},
				"podLabels":      map[string]any{"team": "sre"},
				"service":        map[string]any{"type": "NodePort"},
				"podMonitor":     map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}, "interval": "20s", "endpoint": map[string]any{"honorLabels": true}},
				"workers":        3, "shutdownGracePeriodSeconds": 20, "storage": map[string]any{"size": "2Gi"},
				"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}, "limits": map[string]any{"memory": "256Mi"}},
			},
			deployments: 1, podMonitors: 1,
			check: func(t *testing.T, b *bundle, notes string) {
				d := b.deployments[0]
				pod := d.Spec.Template
				if d.Name != "inferprobe-canary" || pod.Labels["app.kubernetes.io/name"] != "canary" || pod.Labels["team"] != "sre" {
					t.Errorf("nameOverride/podLabels: Deployment %s, pod labels %v", d.Name, pod.Labels)
				}
				if pod.Annotations["example.com/scrape-logs"] != "true" || pod.Annotations["checksum/scenario"] == "" {
					t.Errorf("podAnnotations: %v; want them beside checksum/scenario", pod.Annotations)
				}
				spec := pod.Spec
				c := spec.Containers[0]
				if c.Image != "registry.example.com/inferprobe:v1.2.3" || c.ImagePullPolicy != corev1.PullAlways ||
					!reflect.DeepEqual(spec.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "regcred"}}) {
					t.Errorf("image: %s %s, pull secrets %v", c.Image, c.ImagePullPolicy, spec.ImagePullSecrets)
				}
				if spec.NodeSelector["kubernetes.io/os"] != "linux" || len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "dedicated" ||
					spec.Affinity == nil || spec.Affinity.NodeAffinity == nil {
					t.Errorf("scheduling: nodeSelector %v, tolerations %v, affinity %+v", spec.NodeSelector, spec.Tolerations, spec.Affinity)
				}
				if !slices.Contains(c.Args, "--workers=3") || !slices.Contains(c.Args, "--shutdown.grace-period=20s") || c.Resources.Requests.Cpu().String() != "100m" {
					t.Errorf("workers, grace period or resources not applied: %v %+v", c.Args, c.Resources)
				}
				if v, ok := volumeNamed(spec.Volumes, "data"); !ok || v.EmptyDir == nil || v.EmptyDir.SizeLimit.String() != "2Gi" {
					t.Errorf("storage.size not applied: %+v", v)
				}
				if b.services[0].Spec.Type != corev1.ServiceTypeNodePort || b.services[0].Name != "inferprobe-canary" {
					t.Errorf("Service %s of type %s; want inferprobe-canary, NodePort", b.services[0].Name, b.services[0].Spec.Type)
				}
				pm := b.podMonitors[0]
				if pm.Labels["release"] != "prom" || pm.Spec.PodMetricsEndpoints[0].Interval != "20s" || !pm.Spec.PodMetricsEndpoints[0].HonorLabels {
					t.Errorf("PodMonitor: labels %v, endpoint %+v", pm.Labels, pm.Spec.PodMetricsEndpoints[0])
				}
				if !strings.Contains(notes, "PodMonitor inferprobe-canary") {
					t.Errorf("NOTES.txt should name the PodMonitor:\n%s", notes)
				}
			},
		},
		{
			name:        "full-name",
			values:      map[string]any{"fullnameOverride": "probes"},
			deployments: 1,
			check: func(t *testing.T, b *bundle, _ string) {
				if b.deployments[0].Name != "probes" || b.configMaps[0].Name != "probes-scenario" {
					t.Errorf("fullnameOverride: Deployment %s, ConfigMap %s", b.deployments[0].Name, b.configMaps[0].Name)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := render(t, ch, c.values)
			if err != nil {
				t.Fatal(err)
			}
			b := decode(t, out)
			scenarioMaps := len(b.configMaps) - c.dashboards
			if len(b.deployments) != c.deployments || len(b.statefulSets) != c.statefulSets ||
				len(b.serviceMonitors) != c.serviceMonitors || len(b.podMonitors) != c.podMonitors || len(b.rules) != c.rules ||
				len(b.services) != 1 || scenarioMaps != 1 {
				t.Fatalf("rendered %d Deployments, %d StatefulSets, %d ServiceMonitors, %d PodMonitors, %d PrometheusRules, %d Services, %d ConfigMaps (%d of them dashboards)",
					len(b.deployments), len(b.statefulSets), len(b.serviceMonitors), len(b.podMonitors), len(b.rules), len(b.services), len(b.configMaps), c.dashboards)
			}
			b.check(t, c.name, helmSecrets)
			if c.check != nil {
				c.check(t, b, out["inferprobe/templates/NOTES.txt"])
			}
		})
	}
}

// TestHelmJobLabelWhateverTheRelease: the ServiceMonitor and the PodMonitor give the daemon's
// series the job label the rules and dashboards select, whatever the release is named (the
// Service is named after the release), and keep the relabelings of the endpoint values.
func TestHelmJobLabelWhateverTheRelease(t *testing.T) {
	ch := loadChart(t)
	own := map[string]any{"sourceLabels": []any{"__meta_kubernetes_pod_node_name"}, "targetLabel": "node"}
	for _, release := range []string{"inferprobe", "llm-probes"} {
		for _, monitor := range []string{"serviceMonitor", "podMonitor"} {
			t.Run(release+"/"+monitor, func(t *testing.T) {
				out, err := renderRelease(t, ch, release, map[string]any{
					monitor: map[string]any{"enabled": true, "endpoint": map[string]any{"relabelings": []any{own}}},
				})
				if err != nil {
					t.Fatal(err)
				}
				b := decode(t, out)
				if len(b.serviceMonitors)+len(b.podMonitors) != 1 {
					t.Fatalf("rendered %d ServiceMonitors and %d PodMonitors; want one monitor", len(b.serviceMonitors), len(b.podMonitors))
				}
				b.check(t, release, helmSecrets)
				var rcs []monitoringv1.RelabelConfig
				for _, sm := range b.serviceMonitors {
					rcs = sm.Spec.Endpoints[0].RelabelConfigs
				}
				for _, pm := range b.podMonitors {
					rcs = pm.Spec.PodMetricsEndpoints[0].RelabelConfigs
				}
				if !slices.ContainsFunc(rcs, func(rc monitoringv1.RelabelConfig) bool { return rc.TargetLabel == "node" }) {
					t.Errorf("%s.endpoint.relabelings dropped: %+v", monitor, rcs)
				}
			})
		}
	}
}

// TestHelmWebConfigTLSAndBasicAuth: with TLS the probes and the monitor use HTTPS; with basic
// auth, which would answer the kubelet 401, the probes are TCP checks. (Not run as deployed:
// that would need certificates and credentials.)
func TestHelmWebConfigTLSAndBasicAuth(t *testing.T) {
	ch := loadChart(t)
	for _, basicAuth := range []bool{false, true} {
		out, err := render(t, ch, map[string]any{
			"webConfig":      map[string]any{"secret": "inferprobe-web", "tls": true, "basicAuth": basicAuth},
			"burstAPI":       map[string]any{"enabled": basicAuth}, // basic auth protects it without a token
			"serviceMonitor": map[string]any{"enabled": true},
		})
		if err != nil {
			t.Fatal(err)
		}
		b := decode(t, out)
		c := b.deployments[0].Spec.Template.Spec.Containers[0]
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
			switch {
			case basicAuth && (p.TCPSocket == nil || p.TCPSocket.Port.StrVal != "http" || p.HTTPGet != nil):
				t.Errorf("basic auth: want a TCP probe of port http, have %+v", p.ProbeHandler)
			case !basicAuth && (p.HTTPGet == nil || p.HTTPGet.Scheme != corev1.URISchemeHTTPS):
				t.Errorf("TLS: want an HTTPS probe, have %+v", p.ProbeHandler)
			}
		}
		if s := b.serviceMonitors[0].Spec.Endpoints[0].Scheme.String(); s != "https" {
			t.Errorf("TLS: the ServiceMonitor scrapes with %q, want https", s)
		}
		if basicAuth && (!slices.Contains(c.Args, "--web.enable-burst-api") || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--web.burst-api.token-file") })) {
			t.Errorf("basic auth: the burst API should be on without a token file: %v", c.Args)
		}
	}
}

// TestHelmRefusesUnsafeValues: values that would scrape twice, open the burst API to anyone,
// or misspell a key fail the install with a message saying what to set.
func TestHelmRefusesUnsafeValues(t *testing.T) {
	ch := loadChart(t)
	for name, c := range map[string]struct {
		values map[string]any
		want   string
	}{
		"two monitors":             {map[string]any{"serviceMonitor": map[string]any{"enabled": true}, "podMonitor": map[string]any{"enabled": true}}, "pick one"},
		"open burst API":           {map[string]any{"burstAPI": map[string]any{"enabled": true}}, "burstAPI.tokenSecret"},
		"tls without a secret":     {map[string]any{"webConfig": map[string]any{"tls": true}}, "webConfig.secret"},
		"misspelt key":             {map[string]any{"extraArg": []any{"--log.level=debug"}}, "extraArg"},
		"extra arg without dashes": {map[string]any{"extraArgs": []any{"log.level=debug"}}, "extraArgs"},
		"unknown service type":     {map[string]any{"service": map[string]any{"type": "Headless"}}, "service"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := render(t, ch, c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("want an error naming %q, have %v", c.want, err)
			}
		})
	}
}

// dashboardFiles are the committed dashboards, which the chart reads through its
// dashboards/ link.
func dashboardFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in %s/dashboards (%v)", repoRoot, err)
	}
	sort.Strings(files)
	return files
}

// checkDashboards: one ConfigMap per committed dashboard, holding the file as it is, with
// the sidecar's label and the given namespace and annotations.
func checkDashboards(t *testing.T, b *bundle, namespace string, annotations map[string]string) {
	t.Helper()
	byKey := map[string]*corev1.ConfigMap{}
	for _, cm := range b.configMaps {
		for k := range cm.Data {
			byKey[k] = cm
		}
	}
	for _, f := range dashboardFiles(t) {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cm := byKey[filepath.Base(f)]
		switch {
		case cm == nil:
			t.Errorf("no ConfigMap holds %s", f)
		case strings.TrimRight(cm.Data[filepath.Base(f)], "\n") != strings.TrimRight(string(want), "\n"):
			t.Errorf("ConfigMap %s: %s differs from %s", cm.Name, filepath.Base(f), f)
		case cm.Labels["grafana_dashboard"] != "1" || cm.Namespace != namespace:
			t.Errorf("ConfigMap %s: labels %v in namespace %q; want grafana_dashboard: \"1\" in %q", cm.Name, cm.Labels, cm.Namespace, namespace)
		case !reflect.DeepEqual(cm.Annotations, annotations):
			t.Errorf("ConfigMap %s: annotations %v, want %v", cm.Name, cm.Annotations, annotations)
		case !json.Valid([]byte(cm.Data[filepath.Base(f)])):
			t.Errorf("ConfigMap %s: %s is not JSON", cm.Name, filepath.Base(f))
		}
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
