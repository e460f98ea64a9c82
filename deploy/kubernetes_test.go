package deploy

import (
	"flag"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the generated rule copies (kubernetes/common/prometheusrule.yaml, the chart's files/) from alerts/inferprobe-rules.yml")

// bundle is a set of decoded manifests: the files of one way to deploy, or one rendering
// of the chart.
type bundle struct {
	namespaces      []*corev1.Namespace
	configMaps      []*corev1.ConfigMap
	secrets         []*corev1.Secret
	services        []*corev1.Service
	deployments     []*appsv1.Deployment
	statefulSets    []*appsv1.StatefulSet
	serviceMonitors []*monitoringv1.ServiceMonitor
	podMonitors     []*monitoringv1.PodMonitor
	rules           []*monitoringv1.PrometheusRule
	jobs            []*batchv1.Job
	claims          []*corev1.PersistentVolumeClaim
}

// add decodes every document of a manifest strictly (unknown or duplicate fields fail) into
// the typed object of its apiVersion and kind.
func (b *bundle) add(t *testing.T, name string, data []byte) {
	t.Helper()
	for i, doc := range splitYAML(t, data) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatalf("%s doc %d: %v", name, i, err)
		}
		var obj any
		switch tm.APIVersion + "/" + tm.Kind {
		case "v1/Namespace":
			o := &corev1.Namespace{}
			b.namespaces, obj = append(b.namespaces, o), o
		case "v1/ConfigMap":
			o := &corev1.ConfigMap{}
			b.configMaps, obj = append(b.configMaps, o), o
		case "v1/Secret":
			o := &corev1.Secret{}
			b.secrets, obj = append(b.secrets, o), o
		case "v1/Service":
			o := &corev1.Service{}
			b.services, obj = append(b.services, o), o
		case "apps/v1/Deployment":
			o := &appsv1.Deployment{}
			b.deployments, obj = append(b.deployments, o), o
		case "apps/v1/StatefulSet":
			o := &appsv1.StatefulSet{}
			b.statefulSets, obj = append(b.statefulSets, o), o
		case "monitoring.coreos.com/v1/ServiceMonitor":
			o := &monitoringv1.ServiceMonitor{}
			b.serviceMonitors, obj = append(b.serviceMonitors, o), o
		case "monitoring.coreos.com/v1/PodMonitor":
			o := &monitoringv1.PodMonitor{}
			b.podMonitors, obj = append(b.podMonitors, o), o
		case "batch/v1/Job":
			o := &batchv1.Job{}
			b.jobs, obj = append(b.jobs, o), o
		case "v1/PersistentVolumeClaim":
			o := &corev1.PersistentVolumeClaim{}
			b.claims, obj = append(b.claims, o), o
		case "monitoring.coreos.com/v1/PrometheusRule":
			o := &monitoringv1.PrometheusRule{}
			b.rules, obj = append(b.rules, o), o
		default:
			t.Fatalf("%s doc %d: unexpected kind %s/%s", name, i, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Fatalf("%s doc %d (%s): %v", name, i, tm.Kind, err)
		}
	}
}

func (b *bundle) addDir(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", dir, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.add(t, f, data)
	}
}

// workload is a Deployment or a StatefulSet, as far as the checks care.
type workload struct {
	name     string
	replicas int32
	selector *metav1.LabelSelector
	pod      corev1.PodTemplateSpec
	claims   []corev1.PersistentVolumeClaim
}

func (b *bundle) workloads() []workload {
	var ws []workload
	for _, d := range b.deployments {
		ws = append(ws, workload{"Deployment " + d.Name, ptrOr(d.Spec.Replicas, 1), d.Spec.Selector, d.Spec.Template, nil})
	}
	for _, s := range b.statefulSets {
		ws = append(ws, workload{"StatefulSet " + s.Name, ptrOr(s.Spec.Replicas, 1), s.Spec.Selector, s.Spec.Template, s.Spec.VolumeClaimTemplates})
	}
	return ws
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// check runs every invariant the deployment must keep on a bundle. secretKeys holds the
// keys of each Secret the pods may mount, by Secret name, as the pods would see them.
func (b *bundle) check(t *testing.T, where string, secretKeys map[string]map[string]string) {
	t.Helper()
	port := int32(daemonPort(t))
	ws := b.workloads()
	if len(ws) != 1 {
		t.Fatalf("%s: want exactly one workload (Deployment or StatefulSet), have %d", where, len(ws))
	}
	for _, w := range ws {
		b.checkWorkload(t, where, w, port, secretKeys)
	}
	for _, s := range b.services {
		var matched int
		for _, w := range ws {
			if labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.pod.Labels)) {
				matched++
				if len(w.claims) > 0 && s.Spec.ClusterIP != corev1.ClusterIPNone {
					t.Errorf("%s: Service %s: a StatefulSet's Service should be headless, so each shard is its own endpoint", where, s.Name)
				}
			}
		}
		if len(s.Spec.Selector) == 0 || matched != 1 {
			t.Errorf("%s: Service %s selects %d workloads, want 1", where, s.Name, matched)
		}
		if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Name != "http" || s.Spec.Ports[0].Port != port || s.Spec.Ports[0].TargetPort.StrVal != "http" {
			t.Errorf("%s: Service %s: want one port named http, %d, targeting the container's http port; have %+v", where, s.Name, port, s.Spec.Ports)
		}
	}
	for _, st := range b.statefulSets {
		b.checkPeers(t, where, st)
		if !b.hasService(st.Spec.ServiceName) {
			t.Errorf("%s: StatefulSet %s: serviceName %q is not among the Services", where, st.Name, st.Spec.ServiceName)
		}
	}
	for _, sm := range b.serviceMonitors {
		b.checkServiceMonitor(t, where, sm)
	}
	for _, pm := range b.podMonitors {
		checkPodMonitor(t, where, pm, ws)
	}
	for _, cm := range b.configMaps {
		for k, v := range cm.Data {
			if loc := secretLike.FindStringIndex(v); loc != nil {
				t.Errorf("%s: ConfigMap %s key %s holds what looks like a credential (%q): keys go in a Secret, read through api_key_file", where, cm.Name, k, v[loc[0]:loc[1]])
			}
		}
	}
	for _, r := range b.rules {
		checkRuleGroups(t, where+": PrometheusRule "+r.Name, r.Spec.Groups)
	}
}

func (b *bundle) hasService(name string) bool {
	for _, s := range b.services {
		if s.Name == name {
			return true
		}
	}
	return false
}

// checkPeers: the replicas of a StatefulSet find each other through its governing
// headless Service's SRV records, not-ready pods included, so that a burst runs on all
// of them and a replica that is down is named rather than silently left out.
func (b *bundle) checkPeers(t *testing.T, where string, st *appsv1.StatefulSet) {
	t.Helper()
	peers, _ := flagValue(st.Spec.Template.Spec.Containers[0].Args, "cluster.peers")
	prefix := "dns+srv://_http._tcp." + st.Spec.ServiceName + "."
	if !strings.HasPrefix(peers, prefix) || !strings.HasSuffix(peers, ".svc") || (st.Namespace != "" && peers != prefix+st.Namespace+".svc") {
		t.Errorf("%s: StatefulSet %s: --cluster.peers=%q, want %sNAMESPACE.svc (its headless Service's SRV records)", where, st.Name, peers, prefix)
	}
	for _, s := range b.services {
		if s.Name == st.Spec.ServiceName && !s.Spec.PublishNotReadyAddresses {
			t.Errorf("%s: Service %s: set publishNotReadyAddresses, so that replicas find a starting peer and name one that is down", where, s.Name)
		}
	}
}

var shardArg = regexp.MustCompile(`^\$\((\w+)\)/(\d+)$`)

func (b *bundle) checkWorkload(t *testing.T, where string, w workload, port int32, secretKeys map[string]map[string]string) {
	t.Helper()
	where += ": " + w.name
	sel, err := metav1.LabelSelectorAsSelector(w.selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(w.pod.Labels)) {
		t.Errorf("%s: selector %v does not select its own pod template labels %v (%v)", where, w.selector, w.pod.Labels, err)
	}
	spec := w.pod.Spec
	psc := spec.SecurityContext
	if psc == nil || !ptrOr(psc.RunAsNonRoot, false) || ptrOr(psc.RunAsUser, 0) == 0 || ptrOr(psc.RunAsGroup, 0) == 0 ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod securityContext must set runAsNonRoot, a non-zero runAsUser and runAsGroup and seccompProfile RuntimeDefault; have %+v", where, psc)
	}
	if ptrOr(spec.AutomountServiceAccountToken, true) {
		t.Errorf("%s: automountServiceAccountToken must be false: inferprobe never calls the Kubernetes API", where)
	}
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		t.Fatalf("%s: want exactly one container", where)
	}
	c := spec.Containers[0]
	sc := c.SecurityContext
	if sc == nil || ptrOr(sc.AllowPrivilegeEscalation, true) || !ptrOr(sc.ReadOnlyRootFilesystem, false) ||
		ptrOr(sc.Privileged, false) || sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
		len(sc.Capabilities.Add) != 0 || (sc.RunAsUser != nil && *sc.RunAsUser == 0) {
		t.Errorf("%s: container securityContext must forbid privilege escalation, make the root filesystem read-only and drop ALL capabilities; have %+v", where, sc)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != port {
		t.Errorf("%s: want one container port named http on %d (the daemon's default); have %+v", where, port, c.Ports)
	}
	for _, p := range []struct {
		name string
		pr   *corev1.Probe
		path string
	}{{"livenessProbe", c.LivenessProbe, "/-/healthy"}, {"readinessProbe", c.ReadinessProbe, "/-/ready"}} {
		if p.pr == nil || p.pr.HTTPGet == nil || p.pr.HTTPGet.Path != p.path || p.pr.HTTPGet.Port.StrVal != "http" {
			t.Errorf("%s: %s must GET %s on port http; have %+v", where, p.name, p.path, p.pr)
		}
	}
	if len(c.Command) != 0 || len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Errorf("%s: want the image's entrypoint with args starting with serve; have command %v args %v", where, c.Command, c.Args)
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Errorf("%s: no CPU limit: throttling shows up as client lag, not server latency", where)
	}

	// Shards: a Deployment is one unsharded replica that never overlaps another during a
	// rollout; a StatefulSet's pod i runs --shard=i/replicas with i from the pod-index label.
	shard, sharded := flagValue(c.Args, "shard")
	switch {
	case w.claims == nil && w.replicas == 1 && !sharded:
	case w.claims != nil && sharded:
		m := shardArg.FindStringSubmatch(shard)
		if m == nil || m[2] != strconv.Itoa(int(w.replicas)) {
			t.Errorf("%s: --shard=%s, want $(VAR)/%d (the replica count)", where, shard, w.replicas)
			break
		}
		var fromIndex bool
		for _, e := range c.Env {
			if e.Name == m[1] && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
				e.ValueFrom.FieldRef.FieldPath == "metadata.labels['"+appsv1.PodIndexLabel+"']" {
				fromIndex = true
			}
		}
		if !fromIndex {
			t.Errorf("%s: $(%s) must come from the downward API's metadata.labels['apps.kubernetes.io/pod-index']", where, m[1])
		}
	default:
		t.Errorf("%s: replicas %d, --shard=%q: one replica without --shard, or a StatefulSet with --shard=$(INDEX)/replicas", where, w.replicas, shard)
	}
	for _, d := range b.deployments {
		if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("%s: Deployment %s must use the Recreate strategy: a rolling update runs two unsharded pods at once", where, d.Name)
		}
	}

	grace := 10 * time.Second // the flag's default
	if v, ok := flagValue(c.Args, "shutdown.grace-period"); ok {
		if grace, err = time.ParseDuration(v); err != nil {
			t.Errorf("%s: --shutdown.grace-period=%s: %v", where, v, err)
		}
	}
	if tg := time.Duration(ptrOr(spec.TerminationGracePeriodSeconds, 30)) * time.Second; tg <= grace+10*time.Second {
		t.Errorf("%s: terminationGracePeriodSeconds %v must exceed --shutdown.grace-period %v + 10s (worker stop and web shutdown)", where, tg, grace)
	}

	// Mounts: the scenario from a ConfigMap, keys from a Secret, the storage path writable.
	mounts := map[string]corev1.Volume{} // mount path -> volume
	for _, m := range c.VolumeMounts {
		v, ok := volumeNamed(spec.Volumes, m.Name)
		if !ok {
			for _, pvc := range w.claims {
				if pvc.Name == m.Name {
					v, ok = corev1.Volume{Name: pvc.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}}, true
				}
			}
		}
		if !ok {
			t.Errorf("%s: volumeMount %s names no volume or claim template", where, m.Name)
			continue
		}
		if (v.ConfigMap != nil || v.Secret != nil) && !m.ReadOnly {
			t.Errorf("%s: mount %s of a ConfigMap or Secret must be readOnly", where, m.MountPath)
		}
		mounts[m.MountPath] = v
	}
	files := map[string]string{} // what the container sees, for check-config
	for dir, v := range mounts {
		switch {
		case v.ConfigMap != nil:
			cm := b.configMap(v.ConfigMap.Name)
			if cm == nil {
				t.Errorf("%s: volume %s: no ConfigMap %s", where, v.Name, v.ConfigMap.Name)
				continue
			}
			for k, val := range cm.Data {
				files[path.Join(dir, k)] = val
			}
		case v.Secret != nil:
			keys, ok := secretKeys[v.Secret.SecretName]
			if !ok {
				t.Errorf("%s: volume %s: unknown Secret %s", where, v.Name, v.Secret.SecretName)
			}
			for k, val := range keys {
				files[path.Join(dir, k)] = val
			}
		}
	}
	cfg, ok := flagValue(c.Args, "config.file")
	if !ok || mounts[path.Dir(cfg)].ConfigMap == nil {
		t.Errorf("%s: --config.file=%s must lie in a mounted ConfigMap", where, cfg)
	} else if _, ok := files[cfg]; !ok {
		t.Errorf("%s: --config.file=%s: the ConfigMap has no key %s", where, cfg, path.Base(cfg))
	}
	if sp, ok := flagValue(c.Args, "storage.path"); !ok {
		t.Errorf("%s: no --storage.path: the root filesystem is read-only", where)
	} else if v, ok := mounts[sp]; !ok || (v.EmptyDir == nil && v.PersistentVolumeClaim == nil) {
		t.Errorf("%s: --storage.path=%s must be a mounted emptyDir or persistent volume", where, sp)
	}
	for _, ref := range regexp.MustCompile(`(?m)^[^#\n]*\bapi_key_file:\s*(\S+)`).FindAllStringSubmatch(files[cfg], -1) {
		if !strings.HasPrefix(ref[1], "/") || mounts[path.Dir(ref[1])].Secret == nil {
			t.Errorf("%s: api_key_file %s must be an absolute path in a mounted Secret", where, ref[1])
		}
	}
	t.Run(strings.ReplaceAll(w.name, " ", "_")+"/flags", func(t *testing.T) { checkFlags(t, where, "serve", c.Args[1:]) })
	// Run it as the last pod: every $(VAR) of the args from the container's env.
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.labels['"+appsv1.PodIndexLabel+"']":
			env[e.Name] = strconv.Itoa(int(w.replicas) - 1)
		}
	}
	sp, _ := flagValue(c.Args, "storage.path")
	t.Run(strings.ReplaceAll(w.name, " ", "_")+"/run", func(t *testing.T) {
		checkDeployed(t, where, deployed{args: c.Args[1:], files: files, dirs: []string{sp}, env: env})
	})
}

func volumeNamed(vs []corev1.Volume, name string) (corev1.Volume, bool) {
	for _, v := range vs {
		if v.Name == name {
			return v, true
		}
	}
	return corev1.Volume{}, false
}

func (b *bundle) configMap(name string) *corev1.ConfigMap {
	for _, cm := range b.configMaps {
		if cm.Name == name {
			return cm
		}
	}
	return nil
}

func (b *bundle) checkServiceMonitor(t *testing.T, where string, sm *monitoringv1.ServiceMonitor) {
	t.Helper()
	where += ": ServiceMonitor " + sm.Name
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil || sel.Empty() {
		t.Errorf("%s: selector %v: %v", where, sm.Spec.Selector, err)
	}
	var matched int
	for _, s := range b.services {
		if sel.Matches(labels.Set(s.Labels)) && (s.Namespace == sm.Namespace || sm.Spec.NamespaceSelector.Any) {
			matched++
		}
	}
	if matched == 0 {
		t.Errorf("%s: selects no Service", where)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "http" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("%s: want one endpoint on port http, path /metrics; have %+v", where, sm.Spec.Endpoints)
	} else if iv := sm.Spec.Endpoints[0].Interval; iv != "" {
		if d, err := time.ParseDuration(string(iv)); err != nil || d > 2*time.Minute {
			t.Errorf("%s: interval %s: the rules' 5m rates need a scrape at least every 2m", where, iv)
		}
	}
	checkScrapeProtocols(t, where, sm.Spec.ScrapeProtocols, sm.Spec.ScrapeNativeHistograms, sm.Spec.ScrapeClassicHistograms)
	if err == nil && len(sm.Spec.Endpoints) == 1 {
		for _, s := range b.services {
			if sel.Matches(labels.Set(s.Labels)) {
				// The Prometheus Operator's job label: the Service's label named by jobLabel, or
				// the Service's name; then the endpoint's relabelings.
				job := s.Name
				if v, ok := s.Labels[sm.Spec.JobLabel]; ok && sm.Spec.JobLabel != "" {
					job = v
				}
				checkJob(t, where+": Service "+s.Name, relabelJob(t, where, job, sm.Spec.Endpoints[0].RelabelConfigs))
			}
		}
	}
}

// checkJob: the job label a scrape gives the daemon's series is the one the rules and
// dashboards select (the mixin's selector), or none of them would find the series.
func checkJob(t *testing.T, where, job string) {
	t.Helper()
	if want := mixinJob(t); job != want {
		t.Errorf("%s: the daemon's series would carry job=%q; the rules and dashboards select job=%q (mixin/config.libsonnet)", where, job, want)
	}
}

// mixinJob is the job of the mixin's selector.
func mixinJob(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, "mixin", "config.libsonnet"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*selector: 'job="([^"]+)"',`).FindSubmatch(src)
	if m == nil {
		t.Fatal(`mixin/config.libsonnet: no selector: 'job="..."',`)
	}
	return string(m[1])
}

// relabelJob applies the relabelings that write the job label to job. Only a literal
// replacement is understood: a relabeling of job from source labels fails the test, which
// could not tell the label.
func relabelJob(t *testing.T, where, job string, rcs []monitoringv1.RelabelConfig) string {
	t.Helper()
	for _, rc := range rcs {
		if rc.TargetLabel != "job" {
			continue
		}
		if (rc.Action != "" && strings.ToLower(rc.Action) != "replace") || len(rc.SourceLabels) > 0 || rc.Replacement == nil || strings.Contains(*rc.Replacement, "$") {
			t.Fatalf("%s: a relabeling of job this test cannot evaluate: %+v", where, rc)
		}
		job = *rc.Replacement
	}
	return job
}

func checkScrapeProtocols(t *testing.T, where string, protocols []monitoringv1.ScrapeProtocol, native, classic *bool) {
	t.Helper()
	if len(protocols) == 0 || protocols[0] != monitoringv1.PrometheusProto {
		t.Errorf("%s: scrapeProtocols must start with PrometheusProto (native histograms travel only in protobuf); have %v", where, protocols)
	}
	if !ptrOr(native, false) || !ptrOr(classic, false) {
		t.Errorf("%s: want scrapeNativeHistograms and scrapeClassicHistograms true", where)
	}
}

func checkPodMonitor(t *testing.T, where string, pm *monitoringv1.PodMonitor, ws []workload) {
	t.Helper()
	where += ": PodMonitor " + pm.Name
	sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
	if err != nil || sel.Empty() {
		t.Errorf("%s: selector %v: %v", where, pm.Spec.Selector, err)
	} else if !slices.ContainsFunc(ws, func(w workload) bool { return sel.Matches(labels.Set(w.pod.Labels)) }) {
		t.Errorf("%s: selects no workload's pods", where)
	}
	if eps := pm.Spec.PodMetricsEndpoints; len(eps) != 1 || ptrOr(eps[0].Port, "") != "http" || eps[0].Path != "/metrics" {
		t.Errorf("%s: want one endpoint on port http, path /metrics; have %+v", where, eps)
	}
	checkScrapeProtocols(t, where, pm.Spec.ScrapeProtocols, pm.Spec.ScrapeNativeHistograms, pm.Spec.ScrapeClassicHistograms)
	if err == nil && len(pm.Spec.PodMetricsEndpoints) == 1 {
		for _, w := range ws {
			if sel.Matches(labels.Set(w.pod.Labels)) {
				// The Prometheus Operator's job label: the pod's label named by jobLabel, or
				// namespace/name of the PodMonitor; then the endpoint's relabelings.
				job := pm.Namespace + "/" + pm.Name
				if v, ok := w.pod.Labels[pm.Spec.JobLabel]; ok && pm.Spec.JobLabel != "" {
					job = v
				}
				checkJob(t, where+": "+w.name, relabelJob(t, where, job, pm.Spec.PodMetricsEndpoints[0].RelabelConfigs))
			}
		}
	}
}

// alertGroups decodes alerts/inferprobe-rules.yml, the source of every rule copy.
func alertGroups(t *testing.T) ([]byte, []monitoringv1.RuleGroup) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "alerts", "inferprobe-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []monitoringv1.RuleGroup `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		t.Fatalf("alerts/inferprobe-rules.yml: %v", err)
	}
	if len(f.Groups) == 0 {
		t.Fatal("alerts/inferprobe-rules.yml: no groups")
	}
	return data, f.Groups
}

func checkRuleGroups(t *testing.T, where string, got []monitoringv1.RuleGroup) {
	t.Helper()
	_, want := alertGroups(t)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: groups differ from alerts/inferprobe-rules.yml; run `go test ./... -run Rules -update` in deploy/", where)
	}
}

const ruleManifest = "kubernetes/common/prometheusrule.yaml"

// prometheusRuleYAML is the PrometheusRule manifest generated from the alerts file: its
// groups, indented under spec.
func prometheusRuleYAML(alerts []byte) []byte {
	_, groups, ok := strings.Cut(string(alerts), "\ngroups:\n")
	if !ok {
		panic("alerts/inferprobe-rules.yml: no top-level groups:")
	}
	var b strings.Builder
	b.WriteString(`# Generated from alerts/inferprobe-rules.yml by ` + "`go test ./... -run Rules -update`" + ` in deploy/;
# edit the alerts file, not this one. For the Prometheus Operator: its Prometheus selects
# PrometheusRules by label (kube-prometheus-stack: release: <its release>).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: inferprobe
  namespace: inferprobe
  labels:
    app.kubernetes.io/name: inferprobe
spec:
  groups:
`)
	for _, line := range strings.SplitAfter(groups, "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString("  ")
		}
		b.WriteString(line)
	}
	return []byte(b.String())
}

// TestRulesCopies keeps the generated PrometheusRule and the chart's copy of the alerts file
// identical to alerts/inferprobe-rules.yml.
func TestRulesCopies(t *testing.T) {
	alerts, _ := alertGroups(t)
	for file, want := range map[string][]byte{
		ruleManifest: prometheusRuleYAML(alerts),
		"helm/inferprobe/files/inferprobe-rules.yml": alerts,
	} {
		if *update {
			if err := os.WriteFile(file, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s is not the current copy of alerts/inferprobe-rules.yml; run `go test ./... -run Rules -update` in deploy/", file)
		}
	}
}

// exampleSecret returns the keys of kubernetes/secret-example.yaml, after checking that its
// value is an obvious placeholder.
func exampleSecret(t *testing.T) (string, map[string]string) {
	t.Helper()
	var b bundle
	data, err := os.ReadFile("kubernetes/secret-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b.add(t, "kubernetes/secret-example.yaml", data)
	if len(b.secrets) != 1 || len(b.secrets[0].Data) != 0 || len(b.secrets[0].StringData) == 0 {
		t.Fatalf("secret-example.yaml: want one Secret with stringData only")
	}
	s := b.secrets[0]
	for k, v := range s.StringData {
		if !strings.HasPrefix(v, "REPLACE-ME") {
			t.Errorf("secret-example.yaml: %s must be an obvious placeholder (REPLACE-ME…), not %q", k, v)
		}
	}
	return s.Name, s.StringData
}

// TestKubernetesManifests decodes every manifest: common/ with single/ (one Deployment) and
// common/ with sharded/ (a StatefulSet), each with the example Secret; bench/ is
// TestKubernetesBenchJob's.
func TestKubernetesManifests(t *testing.T) {
	// Every manifest is one of those decoded below.
	err := filepath.WalkDir("kubernetes", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if dir := filepath.Dir(p); p != "kubernetes/secret-example.yaml" &&
			dir != "kubernetes/common" && dir != "kubernetes/single" && dir != "kubernetes/sharded" && dir != "kubernetes/bench" {
			t.Errorf("%s: not checked by this test; add it here", p)
		} else if filepath.Ext(p) != ".yaml" {
			t.Errorf("%s: manifests end in .yaml", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	secretName, keys := exampleSecret(t)
	for _, variant := range []string{"single", "sharded"} {
		t.Run(variant, func(t *testing.T) {
			var b bundle
			b.addDir(t, "kubernetes/common")
			b.addDir(t, filepath.Join("kubernetes", variant))
			if len(b.namespaces) != 1 || len(b.rules) != 1 || len(b.serviceMonitors) != 1 || len(b.configMaps) != 1 {
				t.Fatalf("common/: want one Namespace, ConfigMap, ServiceMonitor and PrometheusRule")
			}
			ns := b.namespaces[0]
			if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
				t.Errorf("Namespace %s: enforce the restricted Pod Security Standard", ns.Name)
			}
			for _, o := range b.objects() {
				if o.Namespace != ns.Name {
					t.Errorf("%s: namespace %q, want %q", o.Name, o.Namespace, ns.Name)
				}
			}
			b.check(t, variant, map[string]map[string]string{secretName: keys})
		})
	}
}

// objects returns the metadata of every namespaced object.
func (b *bundle) objects() []metav1.ObjectMeta {
	var ms []metav1.ObjectMeta
	add := func(m metav1.ObjectMeta) { ms = append(ms, m) }
	for _, o := range b.configMaps {
		add(o.ObjectMeta)
	}
	for _, o := range b.secrets {
		add(o.ObjectMeta)
	}
	for _, o := range b.services {
		add(o.ObjectMeta)
	}
	for _, o := range b.deployments {
		add(o.ObjectMeta)
	}
	for _, o := range b.statefulSets {
		add(o.ObjectMeta)
	}
	for _, o := range b.serviceMonitors {
		add(o.ObjectMeta)
	}
	for _, o := range b.podMonitors {
		add(o.ObjectMeta)
	}
	for _, o := range b.rules {
		add(o.ObjectMeta)
	}
	return ms
}
