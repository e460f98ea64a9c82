// Package alerts holds inferprobe's Prometheus recording and alerting rules. Its test runs
// Prometheus 3.16's promtool over them: older promtools cannot read native-histogram input series.
package alerts

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The promtool release these rules are tested with. `make tools` builds it with go install, which
// leaves `promtool --version` empty, so the module version in the binary's build info is checked
// first; a release binary (as $PROMTOOL) is recognised by its --version line instead.
const (
	wantModule   = "github.com/prometheus/prometheus"
	wantModVer   = "v0.316."
	wantPromtool = "3.16."
)

// promtool returns the path of a 3.16 promtool: $PROMTOOL, else .cache/bin/promtool under the
// repository root. Without one the test is skipped, unless INFERPROBE_E2E=1 asks for a failure.
func promtool(t *testing.T) string {
	t.Helper()
	path := os.Getenv("PROMTOOL")
	if path == "" {
		path = filepath.Join("..", ".cache", "bin", "promtool")
	}
	missing := func(why string) {
		t.Helper()
		if os.Getenv("INFERPROBE_E2E") == "1" {
			t.Fatalf("%s and INFERPROBE_E2E=1: run `make tools` to install promtool 3.16 into .cache/bin", why)
		}
		t.Skipf("%s; run `make tools` to install promtool 3.16 into .cache/bin (set INFERPROBE_E2E=1 to fail instead of skipping)", why)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		missing("promtool not found at " + abs + " (set $PROMTOOL to use another)")
	}
	if bi, err := buildinfo.ReadFile(abs); err == nil && bi.Main.Path == wantModule && strings.HasPrefix(bi.Main.Version, wantModVer) {
		return abs
	}
	out, err := exec.Command(abs, "--version").CombinedOutput()
	if err != nil {
		missing("cannot run " + abs + " --version: " + err.Error())
	}
	if !strings.Contains(string(out), "version "+wantPromtool) {
		missing(abs + " is not promtool " + wantPromtool + "x (module " + wantModule + " " + wantModVer + "x): " + firstLine(string(out)))
	}
	return abs
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func runPromtool(t *testing.T, args ...string) {
	t.Helper()
	bin := promtool(t)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
}

func TestCheckRules(t *testing.T) {
	runPromtool(t, "check", "rules", "inferprobe-rules.yml")
}

func TestRulesUnitTests(t *testing.T) {
	runPromtool(t, "test", "rules", "inferprobe-rules.test.yml")
}
