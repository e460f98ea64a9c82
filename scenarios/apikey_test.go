package scenarios

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secret = "sk-live-7d3f9a"

// writeScenario writes a scenario whose target qwen has the given extra lines
// into a fresh directory, with files beside it, and returns its path.
func writeScenario(t *testing.T, targetLines string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "s.yml")
	if err := os.WriteFile(path, []byte(edit(t, "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n"+targetLines)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAPIKeyFileResolved: a key file is relative to the scenario file (the
// key is read when the scenario is built: prober.Build).
func TestAPIKeyFileResolved(t *testing.T) {
	path := writeScenario(t, "    api_key_file: key\n", map[string]string{"key": secret})
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tg := c.Targets["qwen"]
	if want := filepath.Join(filepath.Dir(path), "key"); tg.APIKeyFile != want {
		t.Errorf("APIKeyFile = %q, want it resolved beside the scenario: %q", tg.APIKeyFile, want)
	}
	if tg.APIKey != "" {
		t.Errorf("the scenario read the key file; prober.Build does")
	}
}

// TestAPIKeyErrors checks each problem with where the API key comes from,
// and that no message shows the key. Problems with the key itself are found
// when it is read, by prober.Build.
func TestAPIKeyErrors(t *testing.T) {
	t.Setenv("INFERPROBE_TEST_KEY", secret)
	for _, tc := range []struct {
		name, lines string
		files       map[string]string
		want        string // after the directory is replaced by DIR
	}{
		{"both sources", "    api_key_file: key\n    api_key_env: INFERPROBE_TEST_KEY\n", map[string]string{"key": secret},
			"DIR/s.yml:6:5: targets.qwen.api_key_env: cannot be used together with api_key_file; keep one"},
		{"authorization header with key file", "    api_key_file: key\n    headers: {authorization: Bearer other}\n", map[string]string{"key": secret},
			`DIR/s.yml:6:15: targets.qwen.headers.authorization: cannot be set together with api_key_file, which is sent as "Authorization: Bearer KEY"; remove one`},
		{"authorization header with key env", "    api_key_env: INFERPROBE_TEST_KEY\n    headers:\n      Authorization: Bearer other\n", nil,
			`DIR/s.yml:7:7: targets.qwen.headers.Authorization: cannot be set together with api_key_env, which is sent as "Authorization: Bearer KEY"; remove one`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeScenario(t, tc.lines, tc.files)
			_, err := Load(path)
			if err == nil {
				t.Fatal("no error")
			}
			got := strings.ReplaceAll(err.Error(), filepath.Dir(path), "DIR")
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if strings.Contains(got, secret) {
				t.Errorf("the key appears in the error")
			}
		})
	}
}

// TestAuthorizationHeaderWithoutKey checks that a custom Authorization header
// is fine when inferprobe sends no key of its own.
func TestAuthorizationHeaderWithoutKey(t *testing.T) {
	c, err := Parse([]byte(edit(t, "    model:", "    headers: {Authorization: Basic dTpw}\n    model:")), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Targets["qwen"].Headers["Authorization"]; got != "Basic dTpw" {
		t.Errorf("header = %q", got)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.yml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want a not-exist error", err)
	}
}
