package scenarios

import (
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// validName is what target and probe names may hold: they become label values.
var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// validate checks c after defaults are applied. Each section checks its own
// fields; a new section adds its loop here.
func (c *Config) validate(l *loader) {
	if c.Global.Workers < 0 {
		l.errorf("global.workers", "must be >= 0 (0 uses the --workers default), not %d", c.Global.Workers)
	}
	WorkerBound.checkMax(l, "global.workers", float64(c.Global.Workers))
	if len(c.Targets) == 0 {
		l.errorf("targets", "at least one target is required, e.g. targets: {vllm: {url: http://127.0.0.1:8000/v1, model: Qwen/Qwen3-0.6B}}")
	}
	if len(c.Probes) == 0 && len(c.Bursts) == 0 {
		target := "vllm"
		if len(c.Targets) > 0 {
			target = slices.Sorted(maps.Keys(c.Targets))[0]
		}
		l.errorf("probes", "at least one probe or burst is required, e.g. probes: {steady: {target: %s, arrival: {rate: 0.2}}}", target)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Targets)) {
		path := join("targets", name)
		checkName(l, path, name)
		c.Targets[name].validate(l, path)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Probes)) {
		path := join("probes", name)
		checkName(l, path, name)
		c.Probes[name].validate(l, path, c.Targets)
		checkPromptMemory(l, path, c.Probes[name], c.Targets)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Bursts)) {
		path := join("bursts", name)
		checkName(l, path, name)
		c.Bursts[name].validate(l, path, c.Targets)
		checkPromptMemory(l, path, c.Bursts[name].Probe(), c.Targets)
	}
	checkDurations(l, "", reflect.ValueOf(c).Elem())
}

func checkName(l *loader, path, name string) {
	if !validName.MatchString(name) {
		l.keyErrorf(path, "name %q may use only letters, digits, '_', '.' and '-' (it becomes a label value)", name)
	}
}

// names lists the names of a section for "defined targets: ..." hints.
func names[V any](m map[string]V) string {
	if len(m) == 0 {
		return "(none)"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}
