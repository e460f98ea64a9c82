package prober

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/scenarios"
)

const (
	secret   = "sk-live-7d3f9a"
	plainURL = "http://127.0.0.1:8000/v1"
)

// buildScenario writes a scenario whose target qwen has the given extra
// lines into a fresh directory, with files beside it, then loads and builds
// it; it returns the scenario's path, the targets and Build's error.
func buildScenario(t *testing.T, url, targetLines string, files map[string]string) (string, map[string]*Target, error) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "s.yml")
	yml := "targets:\n  qwen:\n    url: " + url + "\n    model: Qwen/Qwen3-0.6B\n" + targetLines +
		"probes:\n  steady:\n    target: qwen\n    arrival: {rate: 0.2}\n"
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := scenarios.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := Build(cfg)
	if err == nil && cfg.Targets["qwen"].APIKey != targets["qwen"].Spec.APIKey {
		t.Errorf("the key read is not in the scenario's target")
	}
	return path, targets, err
}

func TestAPIKeyFromFile(t *testing.T) {
	_, targets, err := buildScenario(t, plainURL, "    api_key_file: key\n", map[string]string{"key": "\n  " + secret + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := targets["qwen"].Spec.APIKey; got != secret {
		t.Errorf("APIKey = %q, want the file's content trimmed", got)
	}
}

func TestAPIKeyFromEnv(t *testing.T) {
	t.Setenv("INFERPROBE_TEST_KEY", secret+"\n")
	_, targets, err := buildScenario(t, plainURL, "    api_key_env: INFERPROBE_TEST_KEY\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := targets["qwen"].Spec.APIKey; got != secret {
		t.Errorf("APIKey = %q, want %q", got, secret)
	}
}

// TestAPIKeyErrors checks each problem with reading an API key, at the line
// of its field, and that no message shows the key, even when the problem is
// with the key itself.
func TestAPIKeyErrors(t *testing.T) {
	t.Setenv("INFERPROBE_TEST_EMPTY", "  ")
	t.Setenv("INFERPROBE_TEST_TWO_WORDS", secret+" "+secret)
	for _, tc := range []struct {
		name, lines string
		files       map[string]string
		want        string // after the directory is replaced by DIR
	}{
		{"missing file", "    api_key_file: nokey\n", nil,
			"DIR/s.yml:5:19: targets.qwen.api_key_file: cannot read DIR/nokey: no such file or directory"},
		{"empty file", "    api_key_file: key\n", map[string]string{"key": " \n"},
			"DIR/s.yml:5:19: targets.qwen.api_key_file: file DIR/key is empty; it must hold the API key"},
		{"two lines in file", "    api_key_file: key\n", map[string]string{"key": secret + "\n" + secret + "\n"},
			"DIR/s.yml:5:19: targets.qwen.api_key_file: file DIR/key holds more than one line or word; it must hold only the API key"},
		{"unset env", "    api_key_env: INFERPROBE_TEST_UNSET\n", nil,
			"DIR/s.yml:5:18: targets.qwen.api_key_env: environment variable INFERPROBE_TEST_UNSET is not set; export it with the API key"},
		{"empty env", "    api_key_env: INFERPROBE_TEST_EMPTY\n", nil,
			"DIR/s.yml:5:18: targets.qwen.api_key_env: environment variable INFERPROBE_TEST_EMPTY is empty; it must hold the API key"},
		{"two words in env", "    api_key_env: INFERPROBE_TEST_TWO_WORDS\n", nil,
			"DIR/s.yml:5:18: targets.qwen.api_key_env: environment variable INFERPROBE_TEST_TWO_WORDS holds more than one line or word; it must hold only the API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, _, err := buildScenario(t, plainURL, tc.lines, tc.files)
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

func TestAPIKeyFileMustBeASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, maxKeyFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{dir, "not a regular file"},
		{"/dev/zero", "not a regular file"},
		{big, "larger than 64 KiB"},
	} {
		_, _, err := buildScenario(t, plainURL, "    api_key_file: "+tc.file+"\n", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("api_key_file %s: error %v, want it to say %q", tc.file, err, tc.want)
		}
	}
}

// TestBuildFileErrors: a tokenizer or CA file that is there but cannot be
// used is a problem at its field's line, found when the scenario is built.
func TestBuildFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, lines string
		files       map[string]string
		want        string
	}{
		{"tokenizer of an unsupported kind", "    tokenizer: tok.json\n", map[string]string{"tok.json": `{"model":{"type":"WordPiece"}}`},
			"DIR/s.yml:5:16: targets.qwen.tokenizer: tokenizer: DIR/tok.json: "},
		{"CA file without a certificate", "    tls: {ca_file: ca.pem}\n", map[string]string{"ca.pem": "not a certificate\n"},
			"DIR/s.yml:5:20: targets.qwen.tls.ca_file: DIR/ca.pem holds no PEM certificate (-----BEGIN CERTIFICATE-----)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, _, err := buildScenario(t, "https://127.0.0.1:8443/v1", tc.lines, tc.files)
			if err == nil {
				t.Fatal("no error")
			}
			if got := strings.ReplaceAll(err.Error(), filepath.Dir(path), "DIR"); !strings.HasPrefix(got, tc.want) {
				t.Errorf("got\n%s\nwant it to start with\n%s", got, tc.want)
			}
		})
	}
}

// TestBuildTokenizerModelName: a scenario's tokenizer that is a Hugging Face
// model name is its tokenizer.json from the Hugging Face cache; offline and
// not cached, the error says what to do.
func TestBuildTokenizerModelName(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	data, err := os.ReadFile(filepath.Join("..", "tokenizer", "testdata", "tiny_tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	repo := filepath.Join(cache, "models--Org--Tiny")
	for name, content := range map[string][]byte{"refs/main": []byte(commit), "snapshots/" + commit + "/tokenizer.json": data} {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "1")
	_, targets, err := buildScenario(t, plainURL, "    tokenizer: Org/Tiny\n", nil)
	if err != nil || targets["qwen"].Tokenizer() == nil {
		t.Fatalf("tokenizer Org/Tiny from the cache: %v", err)
	}
	_, _, err = buildScenario(t, plainURL, "    tokenizer: Org/Other\n", nil)
	if err == nil || !strings.Contains(err.Error(), "targets.qwen.tokenizer: ") || !strings.Contains(err.Error(), "HF_HUB_OFFLINE forbids downloading it") {
		t.Errorf("tokenizer Org/Other offline, not cached: %v; want the field and what to do", err)
	}
}
