// Package dashboards generates inferprobe's Grafana dashboards. The JSON
// files beside this package are its output and what Grafana loads; the Go
// code is their source, so every dashboard shares one data source variable,
// one set of label variables and one way of writing each query.
//
// After changing the code, regenerate the files with
//
//	go test ./dashboards/ -run TestFilesUpToDate -update
package dashboards

import (
	"bytes"
	"encoding/json"

	"github.com/inferprobe/inferprobe/mixin"
)

// Files returns every dashboard as the file name and the JSON to write,
// built with the monitoring mixin's config block (mixin/config.libsonnet).
func Files() (map[string][]byte, error) {
	cfg, err := mixin.LoadConfig()
	if err != nil {
		return nil, err
	}
	ownMatchers = []string{cfg.Selector, `job=~"$job"`, `instance=~"$instance"`}
	simulatedLabel = cfg.SimulatedGPULabel
	files := map[string][]byte{}
	for name, d := range map[string]*Dashboard{
		"overview.json": overview(),
		"latency.json":  latency(),
		"bursts.json":   bursts(),
		"gpu.json":      gpu(),
		"client.json":   client(),
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // keep PromQL's <, > and & readable
		enc.SetIndent("", "  ")
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
		files[name] = buf.Bytes()
	}
	return files, nil
}
