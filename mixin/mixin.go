// Package mixin evaluates inferprobe's monitoring mixin (the jsonnet in this folder) with
// go-jsonnet: the recording and alerting rules it writes to alerts/inferprobe-rules.yml, and
// the config block the dashboards/ generator reads.
//
// After changing the jsonnet, regenerate the rule file with
//
//	go test ./mixin/ -run TestRulesUpToDate -update
package mixin

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/go-jsonnet"
	"go.yaml.in/yaml/v3"
)

//go:embed *.libsonnet
var sources embed.FS

// rulesHeader starts the generated rule file, so nobody edits it by hand.
const rulesHeader = "# Generated from mixin/*.libsonnet by `make mixin`: edit the jsonnet (its config block is\n" +
	"# mixin/config.libsonnet), not this file. Checked by `promtool check rules`, tested by\n" +
	"# `promtool test rules inferprobe-rules.test.yml` (Prometheus 3.16's promtool; `go test ./alerts/`).\n"

// Config is the part of the mixin's _config the dashboards read.
type Config struct {
	Selector          string `json:"selector"`
	SimulatedGPULabel string `json:"simulatedGPULabel"`
}

// evaluate runs a jsonnet snippet that imports the embedded mixin files, so
// it works from any directory, and returns its JSON.
func evaluate(snippet string) (string, error) {
	vm := jsonnet.MakeVM()
	files := map[string]jsonnet.Contents{}
	entries, err := sources.ReadDir(".")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := sources.ReadFile(e.Name())
		if err != nil {
			return "", err
		}
		files[e.Name()] = jsonnet.MakeContents(string(b))
	}
	vm.Importer(&jsonnet.MemoryImporter{Data: files})
	out, err := vm.EvaluateAnonymousSnippet("generate.jsonnet", snippet)
	if err != nil {
		return "", fmt.Errorf("evaluating the mixin: %w", err)
	}
	return out, nil
}

// Rules renders the recording rules and the alerts as one Prometheus rule file.
func Rules() ([]byte, error) {
	out, err := evaluate(`
local m = (import 'config.libsonnet') + (import 'rules.libsonnet') + (import 'alerts.libsonnet');
{ groups: m.prometheusRules.groups + m.prometheusAlerts.groups }`)
	if err != nil {
		return nil, err
	}
	// JSON is YAML: decoding it into a node keeps every value, and the node can be given the
	// field order and plain style people write rule files in.
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		return nil, err
	}
	tidy(&doc)
	var buf bytes.Buffer
	buf.WriteString(rulesHeader)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fieldOrder is the order of a rule file's fields (jsonnet sorts them by name).
var fieldOrder = []string{"name", "interval", "rules", "record", "alert", "expr", "for", "labels", "annotations", "summary", "description", "runbook_url"}

// tidy orders mapping fields by fieldOrder and lets the encoder choose each scalar's style:
// plain where it can, a literal block for multi-line expressions.
func tidy(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		n.Style = 0
		return
	}
	n.Style = 0
	if n.Kind == yaml.MappingNode {
		type pair struct{ k, v *yaml.Node }
		var pairs []pair
		for i := 0; i+1 < len(n.Content); i += 2 {
			pairs = append(pairs, pair{n.Content[i], n.Content[i+1]})
		}
		rank := func(k string) int {
			if i := slices.Index(fieldOrder, k); i >= 0 {
				return i
			}
			return len(fieldOrder)
		}
		slices.SortStableFunc(pairs, func(a, b pair) int { return rank(a.k.Value) - rank(b.k.Value) })
		n.Content = n.Content[:0]
		for _, p := range pairs {
			n.Content = append(n.Content, p.k, p.v)
		}
	}
	for _, c := range n.Content {
		tidy(c)
	}
}

// LoadConfig returns the mixin's default config block.
func LoadConfig() (Config, error) {
	out, err := evaluate(`(import 'config.libsonnet')._config`)
	if err != nil {
		return Config{}, err
	}
	var c Config
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		return Config{}, err
	}
	if c.Selector == "" || c.SimulatedGPULabel == "" {
		return Config{}, fmt.Errorf("the mixin's _config needs selector and simulatedGPULabel: %s", out)
	}
	return c, nil
}
