package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestReadmeQuickStartPrometheus: the README's quick-start prometheus.yml scrapes the daemon's
// port as job inferprobe (the rules' and dashboards' selector) with native histograms on and
// protobuf first, loads the rules file the README copies, and passes Prometheus 3.16's
// promtool with it.
func TestReadmeQuickStartPrometheus(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- quick-start prometheus.yml[^>]*-->\n```yaml\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md: no ```yaml block after <!-- quick-start prometheus.yml ... -->")
	}
	var cfg struct {
		Global struct {
			ScrapeInterval, EvaluationInterval string
			NativeHistograms                   bool `json:"scrape_native_histograms"`
			ClassicHistograms                  bool `json:"always_scrape_classic_histograms"`
		} `json:"global"`
		RuleFiles     []string `json:"rule_files"`
		ScrapeConfigs []struct {
			JobName         string   `json:"job_name"`
			ScrapeProtocols []string `json:"scrape_protocols"`
			StaticConfigs   []struct {
				Targets []string `json:"targets"`
			} `json:"static_configs"`
		} `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(m[1], &cfg); err != nil {
		t.Fatalf("README.md quick-start prometheus.yml: %v", err)
	}
	if !cfg.Global.NativeHistograms || !cfg.Global.ClassicHistograms {
		t.Error("quick-start prometheus.yml: want scrape_native_histograms and always_scrape_classic_histograms true")
	}
	if len(cfg.ScrapeConfigs) != 1 || cfg.ScrapeConfigs[0].JobName != "inferprobe" ||
		len(cfg.ScrapeConfigs[0].ScrapeProtocols) == 0 || cfg.ScrapeConfigs[0].ScrapeProtocols[0] != "PrometheusProto" ||
		len(cfg.ScrapeConfigs[0].StaticConfigs) != 1 ||
		len(cfg.ScrapeConfigs[0].StaticConfigs[0].Targets) != 1 || cfg.ScrapeConfigs[0].StaticConfigs[0].Targets[0] != "localhost:"+strconv.Itoa(daemonPort(t)) {
		t.Errorf("quick-start prometheus.yml: want one job inferprobe, PrometheusProto first, scraping localhost:%d; have %+v", daemonPort(t), cfg.ScrapeConfigs)
	}
	if len(cfg.RuleFiles) != 1 || cfg.RuleFiles[0] != "inferprobe-rules.yml" {
		t.Fatalf("quick-start prometheus.yml: want rule_files [inferprobe-rules.yml], the file the README copies; have %v", cfg.RuleFiles)
	}
	dir := t.TempDir()
	rules, err := os.ReadFile(filepath.Join(repoRoot, "alerts", "inferprobe-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"prometheus.yml": m[1], "inferprobe-rules.yml": rules} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		promtool = filepath.Join(repoRoot, ".cache", "bin", "promtool")
	}
	runTool(t, promtool, "check", "config", filepath.Join(dir, "prometheus.yml"))
}
