package e2e

import (
	"os/exec"
	"regexp"
	"testing"
)

// TestVersionWithoutLdflags: the binary TestMain builds with a plain `go build` (no -ldflags,
// as `go install …@latest` builds it) still names a version.
func TestVersionWithoutLdflags(t *testing.T) {
	out, err := exec.Command(binary, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("inferprobe --version: %v\n%s", err, out)
	}
	if m := regexp.MustCompile(`^inferprobe, version (\S+) `).FindSubmatch(out); m == nil {
		t.Errorf("--version names no version:\n%s", out)
	}
}
