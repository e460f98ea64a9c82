package scenarios

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzParse feeds arbitrary bytes to Parse. The seeds in testdata/fuzz/FuzzParse
// (the shipped examples, every arrival pattern and known-invalid files) run
// with go test; go test -run '^$' -fuzz '^FuzzParse$' ./scenarios/ explores
// from them. Parse must never panic, must be deterministic, and must return
// either a Config that holds its documented guarantees or Errors that each
// name the file.
func FuzzParse(f *testing.F) {
	const file = "fuzz.yml"
	f.Fuzz(func(t *testing.T, data []byte) {
		if readsOutside(data) {
			// api_key_file is read from disk: keep the fuzzer to files in this
			// folder, so its results do not depend on the machine's files
			// (readKeyFile refuses devices and FIFOs and bounds the read).
			t.Skip()
		}
		c, err := Parse(data, file)
		c2, err2 := Parse(data, file)
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned both a Config and an error: %v", err)
			}
			checkErrors(t, err, file)
			if err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("Parse is not deterministic: first\n%v\nthen\n%v", err, err2)
			}
			return
		}
		if c == nil {
			t.Fatal("Parse returned neither a Config nor an error")
		}
		if err2 == nil { // each parse locates its own nodes
			c.src, c2.src = nil, nil
		}
		if err2 != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("Parse is not deterministic: first %+v, then %+v (%v)", c, c2, err2)
		}
		checkConfig(t, c)
	})
}

// readsOutside reports whether some scalar in data's first document could name
// a file outside this folder: absolute, or with "..". Parse would reach a
// file only through such a scalar (aliases share the node, and yaml escapes
// are already resolved in it).
func readsOutside(data []byte) bool {
	var doc yaml.Node
	if yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc) != nil {
		return false // Parse stops at the syntax error too
	}
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		if n.Kind == yaml.ScalarNode && n.Value != "" &&
			(filepath.IsAbs(n.Value) || !filepath.IsLocal(n.Value) || strings.Contains(n.Value, "..")) {
			return true
		}
		for _, c := range n.Content {
			if walk(c) {
				return true
			}
		}
		return false
	}
	return walk(&doc)
}

func checkErrors(t *testing.T, err error, file string) {
	t.Helper()
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error is %T, not Errors: %v", err, err)
	}
	if len(es) == 0 {
		t.Fatal("Errors is empty")
	}
	for i, e := range es {
		if e == nil {
			t.Fatalf("Errors[%d] is nil", i)
		}
		if e.File != file || !strings.HasPrefix(e.Error(), file+":") {
			t.Errorf("Errors[%d] does not name %s: %q", i, file, e.Error())
		}
		if e.Msg == "" || e.Line < 0 || e.Column < 0 {
			t.Errorf("Errors[%d] is malformed: %#v", i, *e)
		}
	}
	if es.Error() == "" {
		t.Error("Errors formats as nothing")
	}
}

// checkConfig checks what the package promises of a Config Parse returns:
// it can be used without further checks.
func checkConfig(t *testing.T, c *Config) {
	t.Helper()
	if len(c.Targets) == 0 || len(c.Probes) == 0 {
		t.Fatalf("Config has %d targets and %d probes", len(c.Targets), len(c.Probes))
	}
	if c.Global.Workers < 0 {
		t.Errorf("global.workers = %d", c.Global.Workers)
	}
	for name, tg := range c.Targets {
		switch {
		case tg == nil:
			t.Fatalf("target %q is nil", name)
		case !validName.MatchString(name):
			t.Errorf("target name %q is invalid", name)
		case tg.URL == "" || tg.Model == "":
			t.Errorf("target %q has no url or model: %+v", name, tg)
		case tg.Endpoint != "chat" && tg.Endpoint != "completions":
			t.Errorf("target %q has endpoint %q", name, tg.Endpoint)
		case tg.Stream == nil:
			t.Errorf("target %q has no stream default", name)
		case tg.Timeout <= 0 || tg.StallTimeout <= 0 || tg.StallTimeout > tg.Timeout:
			t.Errorf("target %q has timeout %v, stall_timeout %v", name, tg.Timeout, tg.StallTimeout)
		}
	}
	for name, p := range c.Probes {
		switch {
		case p == nil:
			t.Fatalf("probe %q is nil", name)
		case !validName.MatchString(name):
			t.Errorf("probe name %q is invalid", name)
		case c.Targets[p.Target] == nil:
			t.Errorf("probe %q names target %q, which is not defined", name, p.Target)
		case len(p.Dataset.sources()) != 1:
			t.Errorf("probe %q has dataset sources %v, want exactly one", name, p.Dataset.sources())
		case p.Dataset.Synthetic != nil && (p.Dataset.Synthetic.InputTokens.Mean < 1 || p.Dataset.Synthetic.OutputTokens.Mean < 1):
			t.Errorf("probe %q has token means %+v", name, *p.Dataset.Synthetic)
		}
		switch p.Arrival.Pattern {
		case ArrivalPoisson, ArrivalConstant, ArrivalGamma, ArrivalConcurrency:
		default:
			t.Errorf("probe %q has pattern %q", name, p.Arrival.Pattern)
		}
	}
}
