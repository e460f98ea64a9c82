package scenarios

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", "", `s.yml: file is empty; a minimal scenario is ` + minimalScenario},
		{"only comments", "# nothing yet\n", `s.yml: file is empty; a minimal scenario is ` + minimalScenario},
		{"null document", "---\n", `s.yml: file is empty; a minimal scenario is ` + minimalScenario},
		{"not a mapping", "- qwen\n", `s.yml:1:1: the file must be a mapping with the fields global, targets, probes, bursts, not a list`},
		{"syntax", "targets:\n  qwen:\n    url: x\n   model: y\n", `s.yml:1: invalid YAML: did not find expected key`},
		{"tab indent", "targets:\n\tqwen: {}\n", `s.yml:2: invalid YAML: found character that cannot start any token`},
		{"two documents", valid + "---\nglobal: {seed: 2}\n", `s.yml:9:1: a second YAML document starts here; keep the whole scenario in one document (remove the ---)`},
		{"unknown field with suggestion", edit(t, "{rate: 0.2}", "{rat: 0.2}"), `s.yml:8:15: probes.steady.arrival: unknown field "rat"; did you mean "rate"?`},
		{"unknown field case", edit(t, "    url:", "    URL:"), `s.yml:3:5: targets.qwen: unknown field "URL"; did you mean "url"?`},
		{"unknown field swapped letters", edit(t, "    model:", "    mdoel:"), `s.yml:4:5: targets.qwen: unknown field "mdoel"; did you mean "model"?`},
		{"unknown field without suggestion", edit(t, "    model:", "    api_key: x\n    model:"), `s.yml:4:5: targets.qwen: unknown field "api_key"; valid fields: url, endpoint, model, api_key_file, api_key_env, headers, stream, timeout, stall_timeout, session_header, max_tokens_field, tokenizer, tls, http2, keep_alive, request_ids, server_metrics, template`},
		{"field of another section", edit(t, "    arrival: {rate: 0.2}\n", "    arrival: {rate: 0.2}\n    timeout: 30s\n"), `s.yml:9:5: probes.steady: unknown field "timeout" here; it belongs in targets.NAME.timeout`},
		{"field of several other sections", edit(t, "{rate: 0.2}", "{rate: 0.2, requests: 10}"), `s.yml:8:26: probes.steady.arrival: unknown field "requests" here; it belongs in bursts.NAME.requests, bursts.NAME.warmup.requests or bursts.NAME.max.requests`},
		{"unknown top-level field", "loads: {}\n" + valid, `s.yml:1:1: unknown field "loads"; valid fields: global, targets, probes, bursts`},
		{"misspelt section", strings.Replace(valid, "probes:", "probe:", 1), `s.yml:5:1: unknown field "probe"; did you mean "probes"?`},
		{"string for number", edit(t, "rate: 0.2", "rate: fast"), `s.yml:8:21: probes.steady.arrival.rate: must be a number, not the string "fast"`},
		{"quoted number", edit(t, "rate: 0.2", `rate: "0.2"`), `s.yml:8:21: probes.steady.arrival.rate: must be a number, not the string "0.2"; remove the quotes`},
		{"list for number", edit(t, "rate: 0.2", "rate: [1]"), `s.yml:8:21: probes.steady.arrival.rate: must be a number, not a list`},
		{"yes for bool", edit(t, "    model:", "    stream: yes\n    model:"), `s.yml:4:13: targets.qwen.stream: must be true or false, not the string "yes"`},
		{"quoted bool", edit(t, "    model:", "    stream: 'false'\n    model:"), `s.yml:4:13: targets.qwen.stream: must be true or false, not the string "false"; remove the quotes`},
		{"negative seed", "global: {seed: -1}\n" + valid, `s.yml:1:16: global.seed: must be a whole number >= 0, not -1`},
		{"fractional seed", "global: {seed: 1.5}\n" + valid, `s.yml:1:16: global.seed: must be a whole number >= 0, not 1.5`},
		{"negative workers", "global: {workers: -1}\n" + valid, `s.yml:1:19: global.workers: must be >= 0 (0 uses the --workers default), not -1`},
		{"fractional workers", "global: {workers: 1.5}\n" + valid, `s.yml:1:19: global.workers: must be a whole number, not 1.5`},
		{"mapping for string", edit(t, "model: Qwen/Qwen3-0.6B", "model: {name: q}"), `s.yml:4:12: targets.qwen.model: must be a string, not a mapping`},
		{"scalar for struct", edit(t, "{rate: 0.2}", "poisson"), `s.yml:8:14: probes.steady.arrival: must be a mapping with the fields pattern, rate, smoothness, concurrency, users, max_concurrency, max_concurrency_ramp_over, max_prefill_concurrency, max_prefill_concurrency_ramp_over, ramp_to, ramp_over, series, not the string "poisson"`},
		{"list for targets", "targets: [qwen]\n" + valid[strings.Index(valid, "probes:"):], `s.yml:1:10: targets: must be a mapping from names to their settings, not a list`},
		{"list for headers", edit(t, "    model:", "    headers: [X-A]\n    model:"), `s.yml:4:14: targets.qwen.headers: must be a mapping of name: value pairs, not a list`},
		{"bare number duration", edit(t, "    model:", "    timeout: 30\n    model:"), `s.yml:4:14: targets.qwen.timeout: invalid duration "30"; write a number with a unit, e.g. 500ms, 30s or 2m`},
		{"bad duration", edit(t, "    model:", "    timeout: 5 minutes\n    model:"), `s.yml:4:14: targets.qwen.timeout: invalid duration "5 minutes"; write a number with a unit, e.g. 500ms, 30s or 2m`},
		{"mapping for duration", edit(t, "    model:", "    timeout: {s: 5}\n    model:"), `s.yml:4:14: targets.qwen.timeout: must be a duration such as 30s, not a mapping`},
		{"duplicate key", edit(t, "    target: qwen\n", "    target: qwen\n    target: qwen\n"), `s.yml:8:5: probes.steady: duplicate key "target"; it is already set on line 7`},
		{"duplicate name", valid + "  steady: {target: qwen, arrival: {rate: 1}}\n", `s.yml:9:3: probes: duplicate key "steady"; it is already set on line 6`},
		{"duplicate param", edit(t, "{rate: 0.2}\n", "{rate: 0.2}\n    params: {top_k: 1, top_k: 2}\n"), `s.yml:9:24: probes.steady.params: duplicate key "top_k"; it is already set on line 9`},
		{"mapping as key", edit(t, "{rate: 0.2}\n", "{rate: 0.2}\n    params: {? {a: 1} : 2}\n"), `s.yml:9:16: probes.steady.params: keys must be names, not a mapping`},
		{"alias inside its anchor", edit(t, "{rate: 0.2}\n", "{rate: 0.2}\n    params: &p {a: *p}\n"), `s.yml:9:20: probes.steady.params.a.a: alias *p is inside its own anchor &p`},
		{"bad merge", edit(t, "{rate: 0.2}\n", "{rate: 0.2}\n    <<: 5\n"), `s.yml:9:9: probes.steady: << must be followed by a mapping or a list of them, e.g. <<: *defaults, not 5`},
		{"alias bomb in params", edit(t, "{rate: 0.2}\n", "{rate: 0.2}\n    params: {p0: &a0 [x, x, x, x, x, x, x, x, x, x], "+aliasLevels()+"}\n"),
			`s.yml:9:26: probes.steady.params.p3[7][9][0][1]: aliases expand to more than 10000 values; write the values out instead`},
		{"merge bomb in params", edit(t, "{rate: 0.2}\n", "{rate: 0.2}\n    params: {m0: &m0 {x: 1}, "+mergeLevels()+"}\n"),
			`s.yml:9:18: probes.steady.params.m12: aliases expand to more than 10000 values; write the values out instead`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseError(t, tc.data); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// aliasLevels writes p1..p4, each a list of ten aliases of the one before, so
// that p4 expands to 10^5 values.
func aliasLevels() string {
	var b strings.Builder
	for i := 1; i <= 4; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		b.WriteString("p" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]")
	}
	return b.String()
}

// mergeLevels writes m1..m30, each merging the one before twice, so that
// listing m30's keys naively takes 2^30 steps.
func mergeLevels() string {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "m%d: &m%d {<<: [*m%d, *m%d]}", i, i, i-1, i-1)
	}
	return b.String()
}

// TestManyErrors checks that one pass reports every problem, in file order,
// without repeating a problem in other words (the typo "rat" does not also
// give "rate is required"; the bad timeout does not also give a stall_timeout
// comparison).
func TestManyErrors(t *testing.T) {
	data := `global:
  seed: "7"
targets:
  qwen:
    url: ftp://127.0.0.1
    endpoint: chatt
    timeout: 10
    stall_timeout: 1m
probes:
  steady:
    target: qwn
    arrival: {pattern: poison, rat: 1}
    dataset:
      synthetic: {input_tokens: {mean: 0}}
    params: {max_tokens: 64, temperature: 0}
    slo: {time_to_first_token: fast}
`
	want := `s.yml:2:9: global.seed: must be a whole number >= 0, not the string "7"; remove the quotes
s.yml:4:3: targets.qwen.model: is required, e.g. model: Qwen/Qwen3-0.6B (a name the server lists at GET /v1/models)
s.yml:5:10: targets.qwen.url: must start with http:// or https://, e.g. url: http://127.0.0.1:8000/v1
s.yml:6:15: targets.qwen.endpoint: must be one of chat, cohere_rerank, completions, embeddings, messages, nim_ranking, responses, tei_rerank, template, tgi, not "chatt"
s.yml:7:14: targets.qwen.timeout: invalid duration "10"; write a number with a unit, e.g. 500ms, 30s or 2m
s.yml:11:13: probes.steady.target: target "qwn" is not defined; defined targets: qwen
s.yml:12:24: probes.steady.arrival.pattern: must be poisson, constant, gamma, concurrency or user_centric, not "poison"
s.yml:12:32: probes.steady.arrival: unknown field "rat"; did you mean "rate"?
s.yml:14:40: probes.steady.dataset.synthetic.input_tokens.mean: must be >= 1, e.g. mean: 128
s.yml:15:14: probes.steady.params.max_tokens: is set by inferprobe: output length comes from dataset.synthetic.output_tokens; set it there
s.yml:16:32: probes.steady.slo.time_to_first_token: invalid duration "fast"; write a number with a unit, e.g. 500ms, 30s or 2m`
	if got := parseError(t, data); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestErrorsValue(t *testing.T) {
	_, err := Parse([]byte(edit(t, "rate: 0.2", "rate: 0")), "s.yml")
	errs, ok := err.(Errors)
	if !ok {
		t.Fatalf("error is %T, want Errors", err)
	}
	want := Errors{{File: "s.yml", Line: 8, Column: 21, Field: "probes.steady.arrival.rate", Msg: "must be > 0, e.g. rate: 0.2 (requests per second)"}}
	if !reflect.DeepEqual(errs, want) {
		t.Errorf("got %#v, want %#v", errs[0], want[0])
	}
}

func TestErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "f.yml", Line: 3, Column: 7, Field: "a.b", Msg: "m"}, "f.yml:3:7: a.b: m"},
		{Error{File: "f.yml", Line: 3, Field: "a.b", Msg: "m"}, "f.yml:3: a.b: m"},
		{Error{File: "f.yml", Line: 3, Column: 7, Msg: "m"}, "f.yml:3:7: m"},
		{Error{File: "f.yml", Msg: "m"}, "f.yml: m"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	es := Errors{{File: "f", Line: 1, Column: 2, Msg: "a"}, {File: "f", Line: 3, Column: 4, Msg: "b"}}
	if got, want := es.Error(), "f:1:2: a\nf:3:4: b"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestParams checks that params decode to values encoding/json marshals as
// written: string-keyed maps at every depth, numeric keys as their text,
// timestamps as written.
func TestParams(t *testing.T) {
	c, err := Parse([]byte(edit(t, "{rate: 0.2}\n", `{rate: 0.2}
    params:
      temperature: 0.7
      top_k: 20
      ignore_eos: true
      stop: [".", "\n"]
      logit_bias: {50256: -100}
      extra_body: {guided: {choice: [a, b]}, seed: null}
      date: 2024-01-02
`)), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(c.Probes["steady"].Params)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"date":"2024-01-02","extra_body":{"guided":{"choice":["a","b"]},"seed":null},"ignore_eos":true,"logit_bias":{"50256":-100},"stop":[".","\n"],"temperature":0.7,"top_k":20}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, ok := c.Probes["steady"].Params["extra_body"].(map[string]any)["guided"].(map[string]any); !ok {
		t.Errorf("nested mapping is %T, want map[string]any", c.Probes["steady"].Params["extra_body"].(map[string]any)["guided"])
	}
}

// TestAnchors checks aliases and merge keys: a written field wins over a
// merged one, and earlier merged mappings over later ones.
func TestAnchors(t *testing.T) {
	c, err := Parse([]byte(`targets:
  a: &a
    <<: [{timeout: 60s}, {timeout: 90s, stall_timeout: 10s}]
    url: http://a:8000/v1
    model: m
  b:
    <<: *a
    url: http://b:8000/v1
    timeout: 20s
probes:
  p: {target: a, arrival: &arr {rate: 2}}
  q: {target: b, arrival: *arr}
`), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Targets["a"], c.Targets["b"]
	if a.Timeout != Duration(60e9) || a.StallTimeout != Duration(10e9) || a.URL != "http://a:8000/v1" {
		t.Errorf("a = %+v", a)
	}
	if b.Timeout != Duration(20e9) || b.StallTimeout != Duration(10e9) || b.URL != "http://b:8000/v1" || b.Model != "m" {
		t.Errorf("b = %+v", b)
	}
	if c.Probes["q"].Arrival.Rate != 2 {
		t.Errorf("q arrival = %+v", c.Probes["q"].Arrival)
	}
}
