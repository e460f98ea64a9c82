package scenarios

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/inferprobe/inferprobe/tokenizer"
)

// Session header and output-length field defaults.
const (
	DefaultSessionHeader = "X-Session-ID"
	MaxTokens            = "max_tokens"
	MaxCompletionTokens  = "max_completion_tokens"
)

// SessionHeaderName is the header that carries a request's session id.
func (t *Target) SessionHeaderName() string {
	if t.SessionHeader == "" {
		return DefaultSessionHeader
	}
	return t.SessionHeader
}

// UseHTTP2 reports whether HTTP/2 is used when an https server offers it.
func (t *Target) UseHTTP2() bool { return t.HTTP2 == nil || *t.HTTP2 }

// KeepsAlive reports whether connections are reused between requests.
func (t *Target) KeepsAlive() bool { return t.KeepAlive == nil || *t.KeepAlive }

// SendsRequestIDs reports whether requests carry their ID headers.
func (t *Target) SendsRequestIDs() bool { return t.RequestIDs == nil || *t.RequestIDs }

// ServerMetricsOff is the server_metrics value that turns them off.
const ServerMetricsOff = "off"

func (t *Target) validate(l *loader, path string) {
	for _, u := range append([]string{t.URL}, t.MoreURLs...) {
		t.checkURL(l, join(path, "url"), u)
	}
	t.checkServerMetrics(l, join(path, "server_metrics"))
	ep, ok := LookupEndpoint(t.Endpoint)
	switch {
	case !ok:
		l.errorf(join(path, "endpoint"), "must be one of %s, not %q", strings.Join(EndpointNames(), ", "), t.Endpoint)
	case !ep.Streams && l.written(join(path, "stream")) && t.Streaming():
		l.errorf(join(path, "stream"), "endpoint %s does not stream; remove stream (or set it to false)", t.Endpoint)
	}
	if t.Model == "" {
		l.errorf(join(path, "model"), "is required, e.g. model: Qwen/Qwen3-0.6B (a name the server lists at GET /v1/models)")
	}
	t.checkAPIKey(l, path)
	for _, name := range slices.Sorted(maps.Keys(t.Headers)) {
		hp := join(join(path, "headers"), name)
		switch {
		case !isToken(name):
			l.keyErrorf(hp, "%q is not a valid header name; use letters, digits and !#$%%&'*+-.^_`|~", name)
		case strings.ContainsFunc(t.Headers[name], isCtl):
			l.errorf(hp, "value has a line break or control character; a header value is one line of text")
		case strings.EqualFold(name, t.APIKeyHeader()) && t.apiKeySource() != "":
			l.keyErrorf(hp, "cannot be set together with %s, which is sent as \"%s\"; remove one", t.apiKeySource(), t.apiKeyForm())
		}
	}
	if t.SessionHeader != "" && !isToken(t.SessionHeader) {
		l.errorf(join(path, "session_header"), "%q is not a valid header name; use letters, digits and !#$%%&'*+-.^_`|~", t.SessionHeader)
	}
	switch t.MaxTokensField {
	case "", MaxTokens:
	case MaxCompletionTokens:
		if !ep.MaxTokensField {
			choosing := strings.Join(endpointNamesWhere(func(e EndpointType) bool { return e.MaxTokensField }), " or ")
			l.errorf(join(path, "max_tokens_field"), "applies only to endpoint %s; remove it", choosing)
		}
	default:
		l.errorf(join(path, "max_tokens_field"), "must be %s or %s, not %q", MaxTokens, MaxCompletionTokens, t.MaxTokensField)
	}
	t.checkTokenizer(l, join(path, "tokenizer"))
	t.checkTLS(l, join(path, "tls"))
	switch {
	case ep.NeedsTemplate && t.Template == nil:
		l.errorf(join(path, "template"), "is required by endpoint %s, e.g. template: {path: /generate, body: {inputs: \"{{prompt}}\"}, text_path: generated_text}", t.Endpoint)
	case !ep.NeedsTemplate && t.Template != nil:
		templated := strings.Join(endpointNamesWhere(func(e EndpointType) bool { return e.NeedsTemplate }), " or ")
		l.keyErrorf(join(path, "template"), "is used only by endpoint %s; remove it or set endpoint: %s", templated, templated)
	case t.Template != nil:
		t.Template.validate(l, join(path, "template"))
	}
	if t.Timeout <= 0 {
		l.errorf(join(path, "timeout"), "must be > 0, e.g. timeout: 120s")
	}
	switch {
	case t.StallTimeout <= 0:
		l.errorf(join(path, "stall_timeout"), "must be > 0, e.g. stall_timeout: 30s")
	case t.StallTimeout > t.Timeout && t.Timeout > 0:
		l.errorf(join(path, "stall_timeout"), "must be at most timeout (%s)", t.Timeout)
	}
}

// apiKeySource names the field the API key comes from, "" when there is none.
func (t *Target) apiKeySource() string {
	switch {
	case t.APIKeyFile != "":
		return "api_key_file"
	case t.APIKeyEnv != "":
		return "api_key_env"
	}
	return ""
}

// checkURL wants raw, the target's URL or one of its MoreURLs, to be an API
// base. The URL itself is never echoed: it may hold a password.
func (t *Target) checkURL(l *loader, path, raw string) {
	const example = "e.g. url: http://127.0.0.1:8000/v1"
	if raw == "" {
		l.errorf(path, "is required, %s", example)
		return
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		if err != nil && strings.Contains(raw, "://") {
			l.errorf(path, "is not a valid URL: %v", errors.Unwrap(err))
			return
		}
		l.errorf(path, "must start with http:// or https://, %s", example)
		return
	}
	switch {
	case u.User != nil:
		l.errorf(path, "must not hold a user or password; put the key in api_key_file or api_key_env")
	case u.Host == "":
		l.errorf(path, "has no host, %s", example)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		l.errorf(path, "must not have a query (?...) or fragment (#...); write only the API base, %s", example)
	}
	// The longest match names /chat/completions rather than /completions.
	// Streaming paths only: TGI's plain /generate may end another API's base.
	var suffix string
	for _, e := range endpointTypes {
		if p := e.PathFor(true); len(p) > len(suffix) && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), p) {
			suffix = p
		}
	}
	if suffix != "" {
		l.errorf(path, "is the API base, so leave out %q: endpoint %q adds its own path", suffix, t.Endpoint)
	}
}

// checkServerMetrics wants off or an http(s) URL with a host.
func (t *Target) checkServerMetrics(l *loader, path string) {
	if t.ServerMetrics == "" || t.ServerMetrics == ServerMetricsOff {
		return
	}
	u, err := url.Parse(t.ServerMetrics)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil {
		l.errorf(path, "must be %q or an http(s) URL without a password, e.g. server_metrics: http://10.0.0.5:8000/metrics", ServerMetricsOff)
	}
}

// checkAPIKey checks where the API key comes from and resolves a key file's
// path; prober.Build reads the key.
func (t *Target) checkAPIKey(l *loader, path string) {
	switch {
	case t.APIKeyFile != "" && t.APIKeyEnv != "":
		l.keyErrorf(join(path, "api_key_env"), "cannot be used together with api_key_file; keep one")
	case t.APIKeyFile != "":
		t.APIKeyFile = l.resolve(t.APIKeyFile)
	}
}

// isToken reports whether s is an HTTP token (RFC 9110 section 5.6.2), which
// header names must be.
func isToken(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r))
	})
}

// isCtl reports control characters, which may not appear in header values.
func isCtl(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }

// resolve makes a relative path relative to the scenario file's directory.
func (l *loader) resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(l.file), p)
}

// checkTokenizer resolves the tokenizer path and checks that the file is
// there; prober.Build loads it. A Hugging Face model name that is no file
// is kept as it is: prober.Build finds its tokenizer.json (in the cache or
// on the Hub).
func (t *Target) checkTokenizer(l *loader, path string) {
	if t.Tokenizer == "" {
		return
	}
	if _, err := os.Stat(l.resolve(t.Tokenizer)); err != nil && tokenizer.IsHubName(t.Tokenizer) {
		return
	}
	t.Tokenizer = l.resolve(t.Tokenizer)
	l.checkFile(path, t.Tokenizer, "; give the model's Hugging Face tokenizer.json (GPT-2, Llama 3 or Qwen2 kind), or remove tokenizer and rely on the server's usage")
}

func (t *Target) checkTLS(l *loader, path string) {
	if t.TLS == (TLS{}) {
		return
	}
	if !strings.HasPrefix(t.URL, "https://") {
		l.keyErrorf(path, "applies only to https urls; remove it or use https://")
		return
	}
	if t.TLS.CAFile == "" {
		return
	}
	fp := join(path, "ca_file")
	if t.TLS.InsecureSkipVerify {
		l.keyErrorf(join(path, "insecure_skip_verify"), "cannot be used together with ca_file, which it would ignore; keep one")
		return
	}
	t.TLS.CAFile = l.resolve(t.TLS.CAFile)
	l.checkFile(fp, t.TLS.CAFile, "")
}

// Template placeholders.
const (
	PlaceholderPrompt    = "{{prompt}}"
	PlaceholderMessages  = "{{messages}}"
	PlaceholderMaxTokens = "{{max_tokens}}"
	PlaceholderModel     = "{{model}}"
	PlaceholderStream    = "{{stream}}"
)

var placeholders = []string{PlaceholderPrompt, PlaceholderMessages, PlaceholderMaxTokens, PlaceholderModel, PlaceholderStream}

func (tp *Template) validate(l *loader, path string) {
	if !strings.HasPrefix(tp.Path, "/") {
		l.errorf(join(path, "path"), "must start with /, e.g. path: /generate")
	}
	if len(tp.Body) == 0 {
		l.errorf(join(path, "body"), "is required, e.g. body: {inputs: \"{{prompt}}\", parameters: {max_new_tokens: \"{{max_tokens}}\"}}")
	} else {
		var usesPrompt bool
		var walk func(p string, v any)
		walk = func(p string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(v)) {
					walk(join(p, k), v[k])
				}
			case []any:
				for i, e := range v {
					walk(fmt.Sprintf("%s.%d", p, i), e)
				}
			case string:
				usesPrompt = usesPrompt || strings.Contains(v, PlaceholderPrompt) || strings.Contains(v, PlaceholderMessages)
				for rest := v; ; {
					i := strings.Index(rest, "{{")
					if i < 0 {
						break
					}
					j := strings.Index(rest[i:], "}}")
					if j < 0 {
						break
					}
					if ph := rest[i : i+j+2]; !slices.Contains(placeholders, ph) {
						l.errorf(p, "unknown placeholder %s; use one of %s", ph, strings.Join(placeholders, ", "))
					} else if v != ph && (ph == PlaceholderMessages || ph == PlaceholderStream) {
						l.errorf(p, "%s must be the whole value, as it is not text", ph)
					}
					rest = rest[i+j+2:]
				}
			}
		}
		walk(join(path, "body"), tp.Body)
		if !usesPrompt {
			l.errorf(join(path, "body"), "does not use %s or %s, so every request would send the same thing", PlaceholderPrompt, PlaceholderMessages)
		}
	}
	for _, f := range []struct {
		name, value string
		required    bool
	}{{"text_path", tp.TextPath, true}, {"output_tokens_path", tp.OutputTokensPath, false}, {"input_tokens_path", tp.InputTokensPath, false}} {
		switch {
		case f.value == "" && f.required:
			l.errorf(join(path, f.name), "is required, e.g. %s: choices.0.text (dot-separated keys and array indexes)", f.name)
		case f.value != "" && slices.Contains(strings.Split(f.value, "."), ""):
			l.errorf(join(path, f.name), "%q has an empty part; write dot-separated keys and array indexes, e.g. usage.completion_tokens", f.value)
		}
	}
}

// SensitiveHeader reports whether a header's value is likely a credential.
func SensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"authorization", "key", "token", "secret", "cookie", "password"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// Secrets are the credentials t sends — its API key (once resolved from its
// file or variable), the values of its credential headers and the token in
// each (the key of "Bearer KEY") — so that what a server echoes of them can
// be redacted with Redactor.
func (t *Target) Secrets() []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= 4 {
			out = append(out, v)
		}
	}
	add(t.APIKey)
	for _, name := range slices.Sorted(maps.Keys(t.Headers)) {
		if !SensitiveHeader(name) {
			continue
		}
		v := t.Headers[name]
		add(v)
		for _, w := range strings.Fields(v) {
			if len(w) >= 8 { // not the scheme word (Bearer, Basic)
				add(w)
			}
		}
	}
	return out
}

// Redactor replaces every one of secrets with REDACTED. The longest go
// first, so that a token inside a longer header value goes with it.
func Redactor(secrets []string) *strings.Replacer {
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, "REDACTED")
	}
	return strings.NewReplacer(pairs...)
}
