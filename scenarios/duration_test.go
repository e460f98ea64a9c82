package scenarios

import (
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestDurationYAML(t *testing.T) {
	var v struct {
		D Duration `yaml:"d"`
	}
	if err := yaml.Unmarshal([]byte("d: 1m30s\n"), &v); err != nil {
		t.Fatal(err)
	}
	if v.D != Duration(90*time.Second) {
		t.Errorf("got %v, want 1m30s", v.D)
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "d: 1m30s\n" {
		t.Errorf("marshalled %q", out)
	}
	err = yaml.Unmarshal([]byte("d: 90\n"), &v)
	if err == nil || err.Error() != `invalid duration "90"; write a number with a unit, e.g. 500ms, 30s or 2m` {
		t.Errorf("got error %v", err)
	}
}
