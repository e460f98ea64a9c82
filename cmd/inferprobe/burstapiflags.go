package main

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v3"

	"github.com/inferprobe/inferprobe/daemon"
)

// burstAPIFlags configure /api/v1/bursts in serve and demo.
type burstAPIFlags struct {
	enabled   bool
	tokenFile string
	interval  time.Duration
}

func addBurstAPIFlags(cmd *kingpin.CmdClause) *burstAPIFlags {
	f := &burstAPIFlags{}
	cmd.Flag("web.enable-burst-api", "Allow starting and cancelling on_demand bursts through /api/v1/bursts. Protect it with --web.config.file (TLS, basic auth) or --web.burst-api.token-file.").
		BoolVar(&f.enabled)
	cmd.Flag("web.burst-api.token-file", "File holding a bearer token that every /api/v1/bursts call must send (Authorization: Bearer TOKEN); read once at start.").
		StringVar(&f.tokenFile)
	cmd.Flag("web.burst-api.rate-limit", fmt.Sprintf("Let the burst API start at most one run per this interval (up to %d at once).", daemon.TriggerBurst)).
		Default(daemon.DefaultTriggerInterval.String()).DurationVar(&f.interval)
	return f
}

// options reads the token file; a bad one stops the start. It warns when
// the API is on with no authentication at all.
func (f *burstAPIFlags) options(logger *slog.Logger, webFlags *web.FlagConfig) (daemon.BurstAPIOptions, error) {
	if f.interval <= 0 {
		return daemon.BurstAPIOptions{}, fmt.Errorf("--web.burst-api.rate-limit=%s: must be positive, e.g. 10s", f.interval)
	}
	o := daemon.BurstAPIOptions{Enabled: f.enabled, TriggerInterval: f.interval}
	if f.tokenFile != "" {
		token, err := daemon.ReadTokenFile(f.tokenFile)
		if err != nil {
			return o, err
		}
		o.Token = token
	}
	o.BasicAuth = webConfigHasBasicAuth(*webFlags.WebConfigFile)
	if f.enabled && o.Token == "" && *webFlags.WebConfigFile == "" {
		logger.Warn("the burst API is enabled without authentication: whoever reaches this port can load your targets; set --web.burst-api.token-file, or basic auth in --web.config.file")
	}
	return o, nil
}

// webConfigHasBasicAuth reports whether the --web.config.file sets
// basic_auth_users, so that exporter-toolkit checks a basic-auth user name
// before the API sees it. A file it cannot read says no: the web server
// refuses to start on it anyway.
func webConfigHasBasicAuth(path string) bool {
	if path == "" {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var c struct {
		Users map[string]string `yaml:"basic_auth_users"`
	}
	return yaml.Unmarshal(b, &c) == nil && len(c.Users) > 0
}
