package scenarios

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// targetLines returns valid with lines added to target qwen, and url
// replaced when url is not empty.
func targetLines(t *testing.T, url, lines string) string {
	t.Helper()
	s := edit(t, "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n"+lines)
	if url != "" {
		s = strings.Replace(s, "http://127.0.0.1:8000/v1", url, 1)
	}
	return s
}

func TestTargetOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name, url, lines, want string
	}{
		{"embeddings stream", "", "    endpoint: embeddings\n    stream: true\n", `s.yml:6:13: targets.qwen.stream: endpoint embeddings does not stream; remove stream (or set it to false)`},
		{"max_tokens_field value", "", "    max_tokens_field: max_new_tokens\n", `s.yml:5:23: targets.qwen.max_tokens_field: must be max_tokens or max_completion_tokens, not "max_new_tokens"`},
		{"max_completion_tokens off chat", "", "    endpoint: completions\n    max_tokens_field: max_completion_tokens\n", `s.yml:6:23: targets.qwen.max_tokens_field: applies only to endpoint chat; remove it`},
		{"session header name", "", "    session_header: \"X Session\"\n", `s.yml:5:21: targets.qwen.session_header: "X Session" is not a valid header name; use letters, digits and !#$%&'*+-.^_` + "`" + `|~`},
		{"x-api-key with a key", "", "    endpoint: messages\n    api_key_env: INFERPROBE_TEST_TARGET_KEY\n    headers: {x-api-key: k}\n", `s.yml:7:15: targets.qwen.headers.x-api-key: cannot be set together with api_key_env, which is sent as "x-api-key: KEY"; remove one`},
		{"tls over http", "", "    tls: {insecure_skip_verify: true}\n", `s.yml:5:5: targets.qwen.tls: applies only to https urls; remove it or use https://`},
		{"tls both", "https://h/v1", "    tls: {ca_file: ca.pem, insecure_skip_verify: true}\n", `s.yml:5:28: targets.qwen.tls.insecure_skip_verify: cannot be used together with ca_file, which it would ignore; keep one`},
		{"ca file missing", "https://h/v1", "    tls: {ca_file: /nonexistent/ca.pem}\n", `s.yml:5:20: targets.qwen.tls.ca_file: cannot read /nonexistent/ca.pem: no such file or directory`},
		{"tokenizer missing", "", "    tokenizer: /nonexistent/tokenizer.json\n", `s.yml:5:16: targets.qwen.tokenizer: cannot read /nonexistent/tokenizer.json: no such file or directory; give the model's Hugging Face tokenizer.json (GPT-2, Llama 3 or Qwen2 kind), or remove tokenizer and rely on the server's usage`},
		{"template missing", "", "    endpoint: template\n", `s.yml:2:3: targets.qwen.template: is required by endpoint template, e.g. template: {path: /generate, body: {inputs: "{{prompt}}"}, text_path: generated_text}`},
		{"template elsewhere", "", "    template: {path: /x, body: {a: \"{{prompt}}\"}, text_path: t}\n", `s.yml:5:5: targets.qwen.template: is used only by endpoint template; remove it or set endpoint: template`},
		{"template path", "", "    endpoint: template\n    template: {path: x, body: {a: \"{{prompt}}\"}, text_path: t}\n", `s.yml:6:22: targets.qwen.template.path: must start with /, e.g. path: /generate`},
		{"template without prompt", "", "    endpoint: template\n    template: {path: /x, body: {a: \"{{model}}\"}, text_path: t}\n", `s.yml:6:26: targets.qwen.template.body: does not use {{prompt}} or {{messages}}, so every request would send the same thing`},
		{"template unknown placeholder", "", "    endpoint: template\n    template: {path: /x, body: {a: \"{{prompt}} {{temp}}\"}, text_path: t}\n", `s.yml:6:36: targets.qwen.template.body.a: unknown placeholder {{temp}}; use one of {{prompt}}, {{messages}}, {{max_tokens}}, {{model}}, {{stream}}`},
		{"template messages inside text", "", "    endpoint: template\n    template: {path: /x, body: {a: \"say {{messages}}\"}, text_path: t}\n", `s.yml:6:36: targets.qwen.template.body.a: {{messages}} must be the whole value, as it is not text`},
		{"template text path", "", "    endpoint: template\n    template: {path: /x, body: {a: \"{{prompt}}\"}, text_path: a..b}\n", `s.yml:6:62: targets.qwen.template.text_path: "a..b" has an empty part; write dot-separated keys and array indexes, e.g. usage.completion_tokens`},
		{"template text path missing", "", "    endpoint: template\n    template: {path: /x, body: {a: \"{{prompt}}\"}}\n", `s.yml:6:5: targets.qwen.template.text_path: is required, e.g. text_path: choices.0.text (dot-separated keys and array indexes)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("INFERPROBE_TEST_TARGET_KEY", "k")
			if got := parseError(t, targetLines(t, tc.url, tc.lines)); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// writeCA writes a self-signed CA certificate as PEM to dir/ca.pem.
func writeCA(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTargetTokenizerModelName: a tokenizer that is no file but a Hugging
// Face model name is kept as the name, for prober.Build to find; a missing
// file is still an error.
func TestTargetTokenizerModelName(t *testing.T) {
	c, err := Load(writeScenario(t, "    tokenizer: Qwen/Qwen3-0.6B\n", nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Targets["qwen"].Tokenizer; got != "Qwen/Qwen3-0.6B" {
		t.Errorf("tokenizer %q, want the model name kept", got)
	}
	if _, err := Load(writeScenario(t, "    tokenizer: models/tokenizer.json\n", nil)); err == nil || !strings.Contains(err.Error(), "targets.qwen.tokenizer: cannot read") {
		t.Errorf("a missing tokenizer.json: %v, want it refused", err)
	}
}

// TestTargetFilesResolved: ca_file and tokenizer, like api_key_file, are
// relative to the scenario file, and Load rewrites them to resolved paths
// (workers get the target as data and have another working directory).
func TestTargetFilesResolved(t *testing.T) {
	tokenizer, err := filepath.Abs(filepath.Join("..", "tokenizer", "testdata", "tiny_tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := writeScenario(t, "    tokenizer: tok.json\n    tls: {ca_file: ca.pem}\n    http2: false\n    keep_alive: false\n    session_header: X-Conv\n", nil)
	dir := filepath.Dir(path)
	writeCA(t, dir)
	data, err := os.ReadFile(tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tok.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	// The scenario's url must be https for tls.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(raw), "http://", "https://", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tg := c.Targets["qwen"]
	if tg.Tokenizer != filepath.Join(dir, "tok.json") || tg.TLS.CAFile != filepath.Join(dir, "ca.pem") {
		t.Errorf("tokenizer %q, ca_file %q: want both resolved in %s", tg.Tokenizer, tg.TLS.CAFile, dir)
	}
	if tg.UseHTTP2() || tg.KeepsAlive() || tg.SessionHeaderName() != "X-Conv" {
		t.Errorf("http2 %v keep_alive %v session header %q", tg.UseHTTP2(), tg.KeepsAlive(), tg.SessionHeaderName())
	}
}

func TestTargetDefaults(t *testing.T) {
	c, err := Parse([]byte(valid), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	tg := c.Targets["qwen"]
	if !tg.UseHTTP2() || !tg.KeepsAlive() || tg.SessionHeaderName() != DefaultSessionHeader || tg.APIKeyHeader() != "Authorization" {
		t.Errorf("defaults: http2 %v keep_alive %v session header %q key header %q", tg.UseHTTP2(), tg.KeepsAlive(), tg.SessionHeaderName(), tg.APIKeyHeader())
	}
}

// TestTemplateParses: the template shown in example.yml is valid, and its
// body keeps the types YAML gives it.
func TestTemplateParses(t *testing.T) {
	c, err := Parse([]byte(targetLines(t, "http://127.0.0.1:8080", `    endpoint: template
    template:
      path: /generate
      body: {inputs: "{{prompt}}", parameters: {max_new_tokens: "{{max_tokens}}", top_k: 5}, stream: "{{stream}}"}
      text_path: token.text
      output_tokens_path: details.generated_tokens
      input_tokens_path: details.input_length
`)), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	tp := c.Targets["qwen"].Template
	if tp.Path != "/generate" || tp.TextPath != "token.text" || tp.Body["parameters"].(map[string]any)["top_k"] != 5 {
		t.Errorf("template = %+v", tp)
	}
}

// TestSecretsRedacted: the API key and credential headers, and the token in
// each, are redacted from what a server echoes; other headers are not.
func TestSecretsRedacted(t *testing.T) {
	tg := Target{APIKey: "sk-key-secret", Headers: map[string]string{
		"Authorization": "Bearer sk-header-secret", "X-Api-Key": "xk-other-secret", "X-Team": "sre-team-name"}}
	r := Redactor(tg.Secrets())
	for echo, want := range map[string]string{
		`HTTP 401: {"error":"invalid key sk-key-secret"}`:          `HTTP 401: {"error":"invalid key REDACTED"}`,
		`bad header "Bearer sk-header-secret" and xk-other-secret`: `bad header "REDACTED" and REDACTED`,
		`token sk-header-secret alone, for sre-team-name`:          `token REDACTED alone, for sre-team-name`,
		`nothing secret here`:                                      `nothing secret here`,
	} {
		if got := r.Replace(echo); got != want {
			t.Errorf("%q redacted to %q, want %q", echo, got, want)
		}
	}
	if got := Redactor(nil).Replace("as is"); got != "as is" {
		t.Errorf("without secrets %q", got)
	}
}
