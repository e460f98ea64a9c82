package scenarios

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestExamples loads every scenario file shipped in this folder: users start
// from them, so they must always validate.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			if _, err := Load(f); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestExampleIsComplete checks that example.yml, the reference users copy
// from, shows every field of the schema.
func TestExampleIsComplete(t *testing.T) {
	example, err := os.ReadFile("example.yml")
	if err != nil {
		t.Fatal(err)
	}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		switch typ.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice:
			walk(typ.Elem())
		case reflect.Struct:
			names, index := fields(typ)
			for _, name := range names {
				if !bytes.Contains(example, []byte(name+":")) {
					t.Errorf("example.yml does not show %s.%s", typ.Name(), name)
				}
				walk(typ.Field(index[name]).Type)
			}
		}
	}
	walk(reflect.TypeFor[Config]())
}

func TestDemo(t *testing.T) {
	onDisk, err := os.ReadFile(DemoFilename)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Demo, onDisk) {
		t.Error("embedded Demo differs from demo.yml")
	}
	c, err := Parse(Demo, DemoFilename)
	if err != nil {
		t.Fatal(err)
	}
	for name, endpoint := range map[string]string{"simulator": "chat", "simulator-completions": "completions"} {
		tg := c.Targets[name]
		if tg == nil || tg.Endpoint != endpoint || tg.URL != "http://127.0.0.1:8000/v1" || tg.Model != "inferprobe-simulator" {
			t.Errorf("target %s = %+v", name, tg)
		}
	}
	p := c.Probes["chat-steady"]
	if p == nil || p.Target != "simulator" || !reflect.DeepEqual(p.Arrival, Arrival{Pattern: ArrivalPoisson, Rate: 4}) ||
		!reflect.DeepEqual(*p.Dataset.Synthetic, Synthetic{InputTokens: Lengths{Mean: 128, Stddev: 32}, OutputTokens: Lengths{Mean: 32}}) ||
		p.Params["ignore_eos"] != true ||
		p.SLO != (SLO{TimeToFirstToken: Duration(500e6), InterTokenLatency: Duration(50e6)}) {
		t.Errorf("chat-steady = %+v", p)
	}
	if p := c.Probes["completions-steady"]; p == nil || p.Target != "simulator-completions" || p.Arrival.Rate != 1 {
		t.Errorf("completions-steady = %+v", p)
	}
}
