package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

const benchChartDir = "helm/inferprobe-bench"

// checkBenchJob checks a bench run sent as an Indexed Job of n shards plus its merge Job:
// pod i is shard i/n, every shard starts at start and writes runDir/shard-i, the merge
// reads exactly those n directories, all share one ReadWriteMany volume, and every pod is
// as locked down as the daemon's.
func checkBenchJob(t *testing.T, where string, b *bundle, n int, start, runDir string) {
	t.Helper()
	if len(b.jobs) != 2 {
		t.Fatalf("%s: want the shards' Job and the merge Job, have %d Jobs", where, len(b.jobs))
	}
	shards, merge := b.jobs[0], b.jobs[1]
	if shards.Spec.CompletionMode == nil || *shards.Spec.CompletionMode != batchv1.IndexedCompletion {
		shards, merge = merge, shards
	}
	if m := shards.Spec.CompletionMode; m == nil || *m != batchv1.IndexedCompletion {
		t.Fatalf("%s: no Job has completionMode Indexed", where)
	}
	if c, p := ptrOr(shards.Spec.Completions, 1), ptrOr(shards.Spec.Parallelism, 1); int(c) != n || int(p) != n {
		t.Errorf("%s: Job %s: completions %d, parallelism %d; want %d and %d (every shard at once)", where, shards.Name, c, p, n, n)
	}
	for _, j := range b.jobs {
		if ptrOr(j.Spec.BackoffLimit, 6) != 0 || j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: Job %s: backoffLimit %v, restartPolicy %s; want 0 and Never (a shard retried after the start is refused)", where, j.Name, ptrOr(j.Spec.BackoffLimit, 6), j.Spec.Template.Spec.RestartPolicy)
		}
		checkBenchPod(t, where+": Job "+j.Name, j.Spec.Template.Spec, b)
	}
	sc := shards.Spec.Template.Spec.Containers[0]
	for _, want := range []string{
		fmt.Sprintf("--shard=$(JOB_COMPLETION_INDEX)/%d", n), "--start-at=" + start,
		"--artifact-dir=" + runDir + "/shard-$(JOB_COMPLETION_INDEX)",
	} {
		if !slices.Contains(sc.Args, want) {
			t.Errorf("%s: the shards' args %v lack %s", where, sc.Args, want)
		}
	}
	if sc.Args[0] != "bench" {
		t.Errorf("%s: the shards run %q, want bench", where, sc.Args[0])
	}
	mc := merge.Spec.Template.Spec.Containers[0]
	want := []string{"bench", "merge"}
	var dirs []string
	for _, a := range mc.Args[2:] {
		if !strings.HasPrefix(a, "--") {
			dirs = append(dirs, a)
		}
	}
	for i := range n {
		if !slices.Contains(dirs, fmt.Sprintf("%s/shard-%d", runDir, i)) {
			t.Errorf("%s: the merge's directories %v lack shard %d's", where, dirs, i)
		}
	}
	if !slices.Equal(mc.Args[:2], want) || len(dirs) != n || !slices.Contains(mc.Args, "--artifact-dir="+runDir+"/merged") ||
		!slices.ContainsFunc(mc.Args, func(a string) bool { return strings.HasPrefix(a, "--wait=") }) {
		t.Errorf("%s: merge args %v: want bench merge --wait=... --artifact-dir=%s/merged and the %d shards' directories", where, mc.Args, runDir, n)
	}
	checkFlags(t, where+" (shards)", "bench", sc.Args[1:])
	checkFlags(t, where+" (merge)", "bench merge", mc.Args[2:])
}

// checkBenchPod: non-root, read-only root, no capabilities, no API token, and the results
// volume a ReadWriteMany claim of the bundle (or one made outside it) at /results.
func checkBenchPod(t *testing.T, where string, pod corev1.PodSpec, b *bundle) {
	t.Helper()
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken || pod.SecurityContext == nil ||
		pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("%s: want a non-root pod without a service account token", where)
	}
	c := pod.Containers[0]
	if s := c.SecurityContext; s == nil || s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem ||
		s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation || s.Capabilities == nil || !slices.Equal(s.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("%s: container %s: want a read-only root, no privilege escalation, every capability dropped", where, c.Name)
	}
	if c.Resources.Limits.Cpu().Sign() != 0 {
		t.Errorf("%s: a CPU limit would show up as schedule lag", where)
	}
	v, ok := volumeNamed(pod.Volumes, "results")
	if !ok || v.PersistentVolumeClaim == nil || !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "results" && m.MountPath == "/results" }) {
		t.Fatalf("%s: want volume results, a PersistentVolumeClaim, at /results", where)
	}
	for _, pvc := range b.claims {
		if pvc.Name == v.PersistentVolumeClaim.ClaimName && !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
			t.Errorf("%s: claim %s is not ReadWriteMany: pods on several nodes mount it", where, pvc.Name)
		}
	}
}

// TestKubernetesBenchJob decodes kubernetes/bench/ strictly and checks it.
func TestKubernetesBenchJob(t *testing.T) {
	var b bundle
	b.addDir(t, "kubernetes/bench")
	if len(b.claims) != 1 {
		t.Fatalf("want one PersistentVolumeClaim, have %d", len(b.claims))
	}
	for _, j := range b.jobs {
		env := j.Spec.Template.Spec.Containers[0].Env
		if !slices.ContainsFunc(env, func(e corev1.EnvVar) bool {
			return e.Name == "START_AT" && e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil && e.ValueFrom.ConfigMapKeyRef.Name == "inferprobe-bench-start"
		}) {
			t.Errorf("Job %s: want START_AT from ConfigMap inferprobe-bench-start, so both Jobs read one start", j.Name)
		}
		if j.Namespace != "inferprobe" {
			t.Errorf("Job %s: namespace %q, want inferprobe (common/namespace.yaml)", j.Name, j.Namespace)
		}
	}
	checkBenchJob(t, "kubernetes/bench", &b, 3, "$(START_AT)", "/results/$(START_AT)")
}

// TestHelmBenchChart lints and renders the bench chart, with its own PVC and with an
// existing claim, and checks the rendering as the manifests are checked; without startAt
// it refuses to render.
func TestHelmBenchChart(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"defaults":  {"startAt": "2026-12-02T05:00:00Z"},
		"existing":  {"startAt": "2026-12-02T05:00:00Z", "shards": 5, "results": map[string]any{"existingClaim": "shared"}, "affinity": map[string]any{"podAntiAffinity": map[string]any{}}},
		"one shard": {"startAt": "2026-12-02T05:00:00Z", "shards": 1, "results": map[string]any{"storageClassName": "nfs"}},
	} {
		t.Run(name, func(t *testing.T) {
			for _, m := range lintChart(benchChartDir, values) {
				t.Errorf("helm lint: %s", m)
			}
			ch := loadChartAt(t, benchChartDir)
			out, err := render(t, ch, values)
			if err != nil {
				t.Fatal(err)
			}
			b := decode(t, out)
			n := 3
			if s, ok := values["shards"].(int); ok {
				n = s
			}
			claims := 1
			if r, ok := values["results"].(map[string]any); ok && r["existingClaim"] != "" && r["existingClaim"] != nil {
				claims = 0
			}
			if len(b.claims) != claims {
				t.Errorf("%d PersistentVolumeClaims rendered, want %d", len(b.claims), claims)
			}
			checkBenchJob(t, name, b, n, "2026-12-02T05:00:00Z", "/results/2026-12-02T05:00:00Z")
			if notes := out["inferprobe-bench/templates/NOTES.txt"]; !strings.Contains(notes, "/results/2026-12-02T05:00:00Z/merged") {
				t.Errorf("NOTES.txt should say where the merged run is:\n%s", notes)
			}
		})
	}
	ch := loadChartAt(t, benchChartDir)
	for name, c := range map[string]struct {
		values map[string]any
		want   string
	}{
		"no start":     {nil, "startAt: set the run's start"},
		"not RFC 3339": {map[string]any{"startAt": "tomorrow"}, "startAt"},
		"shard flag":   {map[string]any{"startAt": "2026-12-02T05:00:00Z", "benchArgs": []any{"model=m"}}, "benchArgs"},
		"misspelt key": {map[string]any{"startAt": "2026-12-02T05:00:00Z", "shard": 3}, "shard"},
	} {
		if _, err := render(t, ch, c.values); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: rendered (%v), want an error about %s", name, err, c.want)
		}
	}
}
