package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const goodScenario = `targets:
  vllm: {url: http://127.0.0.1:8000/v1, model: Qwen/Qwen3-0.6B}
  llama: {url: http://127.0.0.1:8080/v1, model: llama, endpoint: completions}
probes:
  steady: {target: vllm, arrival: {rate: 1}}
`

// badScenario has four problems, one per kind of check: a value, an unknown
// field, a reference and a range.
const badScenario = `targets:
  vllm:
    url: ftp://x
    model: m
    bogus: 1
probes:
  steady:
    target: nope
    arrival: {rate: 0}
`

// errorLine is the shape of a located problem: FILE:LINE:COL: FIELD: MSG.
var errorLine = regexp.MustCompile(`^(.+):(\d+):(\d+): ([A-Za-z0-9_.-]+): (.+)$`)

func TestRunCheckConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yml", goodScenario)
	bad := write("bad.yml", badScenario)
	empty := write("empty.yml", "# nothing yet\n")
	write("prompts.jsonl", "{\"text\": \"fine\"}\n{\"text\": 7}\n")
	badData := write("baddata.yml", "targets:\n  vllm: {url: http://127.0.0.1:8000/v1, model: m}\n"+
		"probes:\n  steady: {target: vllm, arrival: {rate: 0.2}, dataset: {file: {path: prompts.jsonl, format: single_turn}}}\n")
	// Valid to check-config once, and a crash of serve and of a reload.
	huge := write("huge.yml", "targets:\n  vllm: {url: http://127.0.0.1:8000/v1, model: m}\n"+
		"probes:\n  steady: {target: vllm, arrival: {rate: 0.2}, dataset: {synthetic: {input_tokens: {mean: 99999999999999}}}}\n")
	missing := filepath.Join(dir, "missing.yml")
	example := filepath.Join("..", "..", "scenarios", "example.yml")

	for _, tc := range []struct {
		name   string
		files  []string
		code   int
		stdout []string // lines, in order
		stderr []string // lines, in order; each a regexp
		// located is how many leading stderr lines are FILE:LINE:COL: FIELD: MSG.
		located int
	}{
		{
			name:   "good",
			files:  []string{good},
			stdout: []string{"SUCCESS: " + good + " is valid: 2 targets, 1 probes, 0 bursts"},
		},
		{
			name:   "bundled example",
			files:  []string{example},
			stdout: []string{"SUCCESS: " + example + " is valid: 1 targets, 1 probes, 2 bursts"},
		},
		{
			name:   "dataset file with a bad entry: found before anything is sent",
			files:  []string{badData},
			code:   1,
			stderr: []string{q(badData) + `: probe steady: dataset: .*prompts\.jsonl:2: .*`, `FAILED: ` + q(badData) + ` is not valid`},
		},
		{
			name:  "bad: every problem, located",
			files: []string{bad},
			code:  1,
			stderr: []string{
				q(bad) + `:3:10: targets\.vllm\.url: must start with http:// or https://.*`,
				q(bad) + `:5:5: targets\.vllm: unknown field "bogus"; valid fields: url, endpoint, model, .*`,
				q(bad) + `:8:13: probes\.steady\.target: target "nope" is not defined; defined targets: vllm`,
				q(bad) + `:9:21: probes\.steady\.arrival\.rate: must be > 0.*`,
				`FAILED: ` + q(bad) + ` is not valid`,
			},
			located: 4,
		},
		{
			name:   "good and bad: both reported, exit 1",
			files:  []string{bad, good},
			code:   1,
			stdout: []string{"SUCCESS: " + good + " is valid: 2 targets, 1 probes, 0 bursts"},
			stderr: []string{q(bad) + `:3:10: .*`, q(bad) + `:5:5: .*`, q(bad) + `:8:13: .*`, q(bad) + `:9:21: .*`,
				`FAILED: ` + q(bad) + ` is not valid`},
			located: 4,
		},
		{
			name:  "a prompt too long to build: refused with the field's range",
			files: []string{huge},
			code:  1,
			stderr: []string{q(huge) + `:4:91: probes\.steady\.dataset\.synthetic\.input_tokens\.mean: must be at most 1,048,576 tokens \(.*: 1 to 1,048,576 tokens\), not 99999999999999`,
				`FAILED: ` + q(huge) + ` is not valid`},
			located: 1,
		},
		{
			name:   "empty: a file-level problem has no position",
			files:  []string{empty},
			code:   1,
			stderr: []string{q(empty) + `: file is empty; a minimal scenario is .*`, `FAILED: ` + q(empty) + ` is not valid`},
		},
		{
			name:   "missing",
			files:  []string{missing},
			code:   1,
			stderr: []string{`reading scenario file: open ` + q(missing) + `: .+`, `FAILED: ` + q(missing) + ` is not valid`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runCheckConfig(&stdout, &stderr, tc.files)
			if code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			if got := lines(stdout.String()); strings.Join(got, "\n") != strings.Join(tc.stdout, "\n") {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), strings.Join(tc.stdout, "\n"))
			}
			got := lines(stderr.String())
			if len(got) != len(tc.stderr) {
				t.Fatalf("stderr has %d lines, want %d:\n%s", len(got), len(tc.stderr), stderr.String())
			}
			for i, l := range got {
				if !regexp.MustCompile("^" + tc.stderr[i] + "$").MatchString(l) {
					t.Errorf("stderr line %d:\n got %s\nwant /%s/", i+1, l, tc.stderr[i])
				}
			}
			// The located problems have the editor-friendly shape and name
			// the file they are in.
			for i, l := range got[:tc.located] {
				if m := errorLine.FindStringSubmatch(l); m == nil || !slices.Contains(tc.files, m[1]) {
					t.Errorf("stderr line %d is not FILE:LINE:COL: FIELD: MSG for a checked file: %s", i+1, l)
				}
			}
		})
	}
}

func q(s string) string { return regexp.QuoteMeta(s) }

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
