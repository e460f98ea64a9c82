package deploy

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// composeFile is the subset of the Compose specification that compose.yml uses; decoding
// is strict, so a misspelt key fails here rather than being ignored by docker compose.
type composeFile struct {
	Name     string                    `json:"name"`
	XImage   map[string]any            `json:"x-inferprobe-image"`
	Services map[string]composeService `json:"services"`
	Volumes  map[string]any            `json:"volumes"`
}

type composeService struct {
	Image           string            `json:"image"`
	Build           *composeBuild     `json:"build"`
	User            string            `json:"user"`
	ReadOnly        bool              `json:"read_only"`
	CapDrop         []string          `json:"cap_drop"`
	SecurityOpt     []string          `json:"security_opt"`
	Restart         string            `json:"restart"`
	Command         []string          `json:"command"`
	DependsOn       []string          `json:"depends_on"`
	Ports           []string          `json:"ports"`
	Volumes         []string          `json:"volumes"`
	Environment     map[string]string `json:"environment"`
	StopGracePeriod string            `json:"stop_grace_period"`
}

type composeBuild struct {
	Context    string `json:"context"`
	Dockerfile string `json:"dockerfile"`
}

const composeDir = "compose"

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(composeDir, "compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("compose.yml: %v", err)
	}
	return c
}

// composeMounts maps each bind mount's target to its source on the host (relative to
// compose/); named volumes are left out.
func composeMounts(t *testing.T, s composeService) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 {
			t.Errorf("volume %q: want SOURCE:TARGET[:ro]", v)
			continue
		}
		if strings.HasPrefix(parts[0], ".") || strings.HasPrefix(parts[0], "/") {
			m[parts[1]] = parts[0]
		}
	}
	return m
}

func TestCompose(t *testing.T) {
	c := loadCompose(t)
	port := daemonPort(t)
	for _, name := range []string{"inferprobe", "simulator", "prometheus", "alertmanager", "grafana"} {
		if _, ok := c.Services[name]; !ok {
			t.Errorf("compose.yml: no %s service", name)
		}
	}
	for name, s := range c.Services {
		uid, _, _ := strings.Cut(s.User, ":")
		if n, err := strconv.Atoi(uid); err != nil || n == 0 {
			t.Errorf("service %s: user %q, want a numeric non-root uid", name, s.User)
		}
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("service %s: port %s must be published on 127.0.0.1 only", name, p)
			}
		}
		for target, src := range composeMounts(t, s) {
			if _, err := os.Stat(filepath.Join(composeDir, src)); err != nil {
				t.Errorf("service %s: mount %s -> %s: %v", name, src, target, err)
			}
		}
		for _, v := range s.Volumes {
			if strings.HasPrefix(v, ".") && !strings.HasSuffix(v, ":ro") {
				t.Errorf("service %s: bind mount %s must be read-only", name, v)
			}
		}
		for _, d := range s.DependsOn {
			if _, ok := c.Services[d]; !ok {
				t.Errorf("service %s depends on unknown service %s", name, d)
			}
		}
	}
	for _, name := range []string{"inferprobe", "simulator"} {
		s := c.Services[name]
		if s.Build == nil || s.Build.Context != "../.." || s.Build.Dockerfile != "deploy/container/Dockerfile" {
			t.Errorf("service %s: want build from ../.. with deploy/container/Dockerfile; have %+v", name, s.Build)
		}
		if !s.ReadOnly || len(s.CapDrop) != 1 || s.CapDrop[0] != "ALL" {
			t.Errorf("service %s: want read_only and cap_drop ALL", name)
		}
	}

	ip := c.Services["inferprobe"]
	if len(ip.Command) == 0 || ip.Command[0] != "serve" {
		t.Fatalf("inferprobe: command %v, want serve …", ip.Command)
	}
	cfg, _ := flagValue(ip.Command, "config.file")
	src, ok := composeMounts(t, ip)[cfg]
	if !ok {
		t.Fatalf("inferprobe: --config.file=%s is not a bind-mounted file", cfg)
	}
	scenario, err := os.ReadFile(filepath.Join(composeDir, src))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`url:\s*http://([a-z-]+):(\d+)/`).FindStringSubmatch(string(scenario)); m == nil || m[1] != "simulator" ||
		!strings.Contains(strings.Join(c.Services["simulator"].Command, " "), "--web.listen-address=:"+m[2]) {
		t.Errorf("%s: the target must be the simulator service on the port it listens on (%v)", src, m)
	}
	if loc := secretLike.FindIndex(scenario); loc != nil {
		t.Errorf("%s holds what looks like a credential: %q", src, scenario[loc[0]:loc[1]])
	}
	if sp, ok := flagValue(ip.Command, "storage.path"); !ok || !hasVolumeAt(ip, sp) {
		t.Errorf("inferprobe: --storage.path must be a mounted volume (read_only root)")
	}

	t.Run("prometheus", func(t *testing.T) { checkComposePrometheus(t, c, port) })
	t.Run("alertmanager", func(t *testing.T) {
		runTool(t, "amtool", "check-config", filepath.Join(composeDir, "alertmanager.yml"))
	})
	t.Run("grafana", func(t *testing.T) { checkComposeGrafana(t, c) })
	t.Run("serve-flags", func(t *testing.T) { checkFlags(t, "compose inferprobe", "serve", ip.Command[1:]) })
	t.Run("simulate-flags", func(t *testing.T) {
		checkFlags(t, "compose simulator", "simulate", c.Services["simulator"].Command[1:])
	})
	t.Run("run", func(t *testing.T) {
		sp, _ := flagValue(ip.Command, "storage.path")
		checkDeployed(t, "compose", deployed{args: ip.Command[1:], files: map[string]string{cfg: string(scenario)}, dirs: []string{sp}})
	})
}

func hasVolumeAt(s composeService, target string) bool {
	for _, v := range s.Volumes {
		if parts := strings.Split(v, ":"); len(parts) >= 2 && parts[1] == target {
			return true
		}
	}
	return false
}

func checkComposePrometheus(t *testing.T, c composeFile, port int) {
	s := c.Services["prometheus"]
	cfgPath, _ := flagValue(s.Command, "config.file")
	mounts := composeMounts(t, s)
	src, ok := mounts[cfgPath]
	if !ok {
		t.Fatalf("prometheus: --config.file=%s is not bind-mounted", cfgPath)
	}
	data, err := os.ReadFile(filepath.Join(composeDir, src))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Global struct {
			ScrapeInterval                string `json:"scrape_interval"`
			EvaluationInterval            string `json:"evaluation_interval"`
			ScrapeNativeHistograms        bool   `json:"scrape_native_histograms"`
			AlwaysScrapeClassicHistograms bool   `json:"always_scrape_classic_histograms"`
		} `json:"global"`
		RuleFiles []string `json:"rule_files"`
		Alerting  struct {
			Alertmanagers []struct {
				StaticConfigs []struct {
					Targets []string `json:"targets"`
				} `json:"static_configs"`
			} `json:"alertmanagers"`
		} `json:"alerting"`
		ScrapeConfigs []struct {
			JobName         string   `json:"job_name"`
			ScrapeProtocols []string `json:"scrape_protocols"`
			StaticConfigs   []struct {
				Targets []string `json:"targets"`
			} `json:"static_configs"`
		} `json:"scrape_configs"`
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if !cfg.Global.ScrapeNativeHistograms || !cfg.Global.AlwaysScrapeClassicHistograms {
		t.Errorf("%s: want scrape_native_histograms and always_scrape_classic_histograms true", src)
	}
	var scraped bool
	for _, sc := range cfg.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, target := range st.Targets {
				if target == "inferprobe:"+strconv.Itoa(port) {
					scraped = true
					if len(sc.ScrapeProtocols) == 0 || sc.ScrapeProtocols[0] != "PrometheusProto" {
						t.Errorf("%s: job %s: scrape_protocols must start with PrometheusProto", src, sc.JobName)
					}
				}
			}
		}
	}
	if !scraped {
		t.Errorf("%s: no job scrapes inferprobe:%d", src, port)
	}
	// The rules file reaches Prometheus through a mount its rule_files glob matches.
	var rulesMounted bool
	for target, hostPath := range mounts {
		if filepath.Clean(filepath.Join(composeDir, hostPath)) != filepath.Join(repoRoot, "alerts", "inferprobe-rules.yml") {
			continue
		}
		for _, glob := range cfg.RuleFiles {
			if ok, _ := path.Match(glob, target); ok {
				rulesMounted = true
			}
		}
	}
	if !rulesMounted {
		t.Errorf("prometheus: alerts/inferprobe-rules.yml must be mounted where rule_files %v finds it", cfg.RuleFiles)
	}
	var am bool
	for _, a := range cfg.Alerting.Alertmanagers {
		for _, sc := range a.StaticConfigs {
			for _, target := range sc.Targets {
				am = am || target == "alertmanager:9093"
			}
		}
	}
	if !am {
		t.Errorf("%s: alerts must go to alertmanager:9093", src)
	}
	// Prometheus 3.16's own check (make tools installs it; as in alerts/, $PROMTOOL wins).
	// Not the promtool on PATH: Debian's 2.x does not know the native-histogram keys.
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		promtool = filepath.Join(repoRoot, ".cache", "bin", "promtool")
	}
	runTool(t, promtool, "check", "config", filepath.Join(composeDir, src))
}

// runTool runs an optional checker (promtool, amtool), skipping when it is absent.
func runTool(t *testing.T, tool string, args ...string) {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Skipf("%s not found: %v", tool, err)
	}
	if out, err := exec.Command(p, args...).CombinedOutput(); err != nil {
		t.Errorf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
}

func checkComposeGrafana(t *testing.T, c composeFile) {
	s := c.Services["grafana"]
	mounts := composeMounts(t, s)
	dsDir, ok := mounts["/etc/grafana/provisioning/datasources"]
	if !ok {
		t.Fatal("grafana: no data source provisioning mounted at /etc/grafana/provisioning/datasources")
	}
	var ds struct {
		APIVersion  int `json:"apiVersion"`
		Datasources []struct {
			Name      string         `json:"name"`
			UID       string         `json:"uid"`
			Type      string         `json:"type"`
			Access    string         `json:"access"`
			URL       string         `json:"url"`
			IsDefault bool           `json:"isDefault"`
			JSONData  map[string]any `json:"jsonData"`
		} `json:"datasources"`
	}
	readStrict(t, filepath.Join(composeDir, dsDir, "prometheus.yml"), &ds)
	if len(ds.Datasources) != 1 || ds.Datasources[0].Type != "prometheus" || ds.Datasources[0].URL != "http://prometheus:9090" || !ds.Datasources[0].IsDefault {
		t.Errorf("grafana: want one default Prometheus data source at http://prometheus:9090; have %+v", ds.Datasources)
	}
	// The provider file belongs to dashboards/ (and is tested there): only its wiring here.
	provFile, ok := mounts["/etc/grafana/provisioning/dashboards/inferprobe.yml"]
	if !ok {
		t.Fatal("grafana: no dashboard provider mounted at /etc/grafana/provisioning/dashboards/inferprobe.yml")
	}
	data, err := os.ReadFile(filepath.Join(composeDir, provFile))
	if err != nil {
		t.Fatal(err)
	}
	var dp struct {
		Providers []struct {
			Type    string `json:"type"`
			Options struct {
				Path string `json:"path"`
			} `json:"options"`
		} `json:"providers"`
	}
	if err := yaml.Unmarshal(data, &dp); err != nil {
		t.Fatalf("%s: %v", provFile, err)
	}
	if len(dp.Providers) != 1 || dp.Providers[0].Type != "file" {
		t.Fatalf("%s: want one file dashboard provider; have %+v", provFile, dp.Providers)
	}
	src, ok := mounts[dp.Providers[0].Options.Path]
	if !ok || filepath.Clean(filepath.Join(composeDir, src)) != filepath.Join(repoRoot, "dashboards") {
		t.Errorf("grafana: the provider's path %s must be the mount of the repository's dashboards/", dp.Providers[0].Options.Path)
	}
	if jsons, _ := filepath.Glob(filepath.Join(repoRoot, "dashboards", "*.json")); len(jsons) == 0 {
		t.Errorf("dashboards/ has no *.json for Grafana to load")
	}
}

func readStrict(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// composeScenario is the compose stack's scenario, the stand-in where a deployment ships none.
func composeScenario(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(composeDir, "scenario.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
