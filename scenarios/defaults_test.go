package scenarios

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	c, err := Parse([]byte(valid), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Global: Global{Seed: 1},
		Targets: map[string]*Target{"qwen": {
			URL:          "http://127.0.0.1:8000/v1",
			Endpoint:     "chat",
			Model:        "Qwen/Qwen3-0.6B",
			Stream:       new(true),
			Timeout:      Duration(120 * time.Second),
			StallTimeout: Duration(30 * time.Second),
		}},
		Probes: map[string]*Probe{"steady": {
			Target:  "qwen",
			Arrival: Arrival{Pattern: ArrivalPoisson, Rate: 0.2},
			Dataset: Dataset{Synthetic: &Synthetic{
				InputTokens:  Lengths{Mean: 128},
				OutputTokens: Lengths{Mean: 64},
			}},
		}},
	}
	c.src = nil // where the fields sit in the file
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %s\nwant %s", dump(c), dump(want))
	}
}

// TestDefaultsPartial checks that defaults fill only what is left out: a
// written zero is kept (and validated), a partly written section keeps the
// defaults of its other fields, null counts as not written, and stall_timeout
// defaults to no more than timeout.
func TestDefaultsPartial(t *testing.T) {
	c, err := Parse([]byte(`global: {seed: 0}
targets:
  qwen:
    url: http://127.0.0.1:8000/v1
    model: Qwen/Qwen3-0.6B
    endpoint:
    stream: false
    timeout: 10s
probes:
  steady:
    target: qwen
    arrival: {pattern: constant, rate: 3}
    dataset: {synthetic: {input_tokens: {stddev: 16}, output_tokens: {mean: 256}}}
`), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	tg, p := c.Targets["qwen"], c.Probes["steady"]
	if c.Global.Seed != 0 {
		t.Errorf("seed = %d, want the written 0", c.Global.Seed)
	}
	if tg.Endpoint != "chat" || tg.Streaming() || tg.Timeout != Duration(10*time.Second) || tg.StallTimeout != Duration(10*time.Second) {
		t.Errorf("target = %+v", tg)
	}
	if p.Arrival.Pattern != ArrivalConstant {
		t.Errorf("pattern = %q", p.Arrival.Pattern)
	}
	if got, want := *p.Dataset.Synthetic, (Synthetic{InputTokens: Lengths{Mean: 128, Stddev: 16}, OutputTokens: Lengths{Mean: 256}}); !reflect.DeepEqual(got, want) {
		t.Errorf("synthetic = %+v, want %+v", got, want)
	}
}

// dump shows a Config with its pointers followed, for failure messages.
func dump(c *Config) string {
	b, _ := json.Marshal(c)
	return string(b)
}
