package inferprobe_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/inferprobe/inferprobe"

// parquet is the one outside module kept to the package that needs it: it
// is most of what the dataset readers link.
const parquet = "github.com/parquet-go/parquet-go"

// anything lets a package import every other: the binary wires them all.
const anything = "*"

// layers is what each package of the module may import of the module
// (paths relative to it) and of parquet; the standard library and the
// other outside modules are free. Readers of records (report, collector,
// servermetrics, gputelemetry, dashboards) see record, never prober: they must not link
// the HTTP client, the dataset readers or parquet. docs/architecture.md
// shows this table: change both together.
var layers = map[string][]string{
	// Leaves: the vocabulary every layer shares.
	"record":            {},
	"record/recordtest": {"record"},
	"stats":             {},
	"scenarios":         {"capacity", "mp3", "tokenizer"},
	"tokenizer":         {},
	"cluster":           {},
	"simulator":         {"mp3"},
	"mixin":             {},
	"alerts":            {},
	"mp3":               {},
	"collector/gpu":     {},
	"capacity":          {},

	// The request path: plans, datasets, the HTTP client, the workers.
	"prober/seeded":         {},
	"prober/sse":            {},
	"prober/internal/http1": {},
	"prober/arrival":        {"scenarios"},
	"prober/dataset":        {"mp3", "prober/seeded", "scenarios", "tokenizer", parquet},
	"prober":                {"prober/arrival", "prober/dataset", "prober/internal/http1", "prober/seeded", "prober/sse", "record", "scenarios", "tokenizer"},
	"prober/wire":           {"prober", "record", "scenarios"},
	"prober/pool":           {"prober", "prober/wire", "record"},

	// Readers of records.
	"report":        {"record", "scenarios", "stats"},
	"servermetrics": {"stats"},
	"gputelemetry":  {"stats"},
	"collector":     {"record", "report", "stats"},
	"report/export": {"capacity", "collector/gpu", "gputelemetry", "record", "report", "scenarios", "servermetrics", "stats"},
	"dashboards":    {"mixin", "servermetrics"},

	// Runs: a finite run (bench, bursts) and the daemon.
	"finite": {"collector/gpu", "gputelemetry", "prober", "record", "report", "scenarios", "servermetrics"},
	"daemon": {"capacity", "cluster", "collector", "collector/gpu", "finite", "prober", "record", "report", "report/export", "scenarios", "servermetrics", "stats"},

	"cmd/inferprobe": {anything},
	// Load tests, which import what they measure; the package is their doc.
	"loadbench": {},
}

// TestLayers fails when a package imports one the table does not allow it,
// or is missing from the table. Tests may import more: they are not linked
// into the binary.
func TestLayers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	// One line per package with non-test files: its path, then its imports.
	out, err := exec.Command(goTool, "list", "-f", "{{if or .GoFiles .CgoFiles}}{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{end}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := strings.TrimPrefix(fields[0], module+"/")
		allowed, ok := layers[pkg]
		if !ok {
			t.Errorf("%s is not in the table of layers (layers_test.go): add it, with what it may import", pkg)
			continue
		}
		if slices.Contains(allowed, anything) {
			continue
		}
		for _, imp := range fields[1:] {
			dep, governed := governedImport(imp)
			if governed && !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s, which its layer does not allow (layers_test.go)", pkg, imp)
			}
		}
	}
}

// governedImport is imp as the table names it, and whether the table
// governs it: a package of this module, or of parquet.
func governedImport(imp string) (string, bool) {
	if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
		return rel, true
	}
	if imp == parquet || strings.HasPrefix(imp, parquet+"/") {
		return parquet, true
	}
	return imp, false
}
