package scenarios

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func (t *Target) validate(l *loader, path string) {
	t.checkURL(l, join(path, "url"))
	if t.Endpoint != EndpointChat && t.Endpoint != EndpointCompletions {
		l.errorf(join(path, "endpoint"), "must be %s or %s, not %q", EndpointChat, EndpointCompletions, t.Endpoint)
	}
	if t.Model == "" {
		l.errorf(join(path, "model"), "is required, e.g. model: Qwen/Qwen3-0.6B (a name the server lists at GET /v1/models)")
	}
	t.resolveAPIKey(l, path)
	for _, name := range slices.Sorted(maps.Keys(t.Headers)) {
		hp := join(join(path, "headers"), name)
		switch {
		case !isToken(name):
			l.keyErrorf(hp, "%q is not a valid header name; use letters, digits and !#$%%&'*+-.^_`|~", name)
		case strings.ContainsFunc(t.Headers[name], isCtl):
			l.errorf(hp, "value has a line break or control character; a header value is one line of text")
		case strings.EqualFold(name, "Authorization") && t.apiKeySource() != "":
			l.keyErrorf(hp, "cannot be set together with %s, which is sent as \"Authorization: Bearer KEY\"; remove one", t.apiKeySource())
		}
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

// checkURL wants an API base. The URL itself is never echoed: it may hold a
// password.
func (t *Target) checkURL(l *loader, path string) {
	const example = "e.g. url: http://127.0.0.1:8000/v1"
	if t.URL == "" {
		l.errorf(path, "is required, %s", example)
		return
	}
	u, err := url.Parse(t.URL)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		if err != nil && strings.Contains(t.URL, "://") {
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
	for _, suffix := range []string{"/chat/completions", "/completions"} {
		if strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), suffix) {
			l.errorf(path, "is the API base, so leave out %q: endpoint %q adds its own path", suffix, t.Endpoint)
			return
		}
	}
}

// resolveAPIKey reads the key into t.APIKey. Messages name the file or the
// variable, never the key.
func (t *Target) resolveAPIKey(l *loader, path string) {
	switch {
	case t.APIKeyFile != "" && t.APIKeyEnv != "":
		l.keyErrorf(join(path, "api_key_env"), "cannot be used together with api_key_file; keep one")
	case t.APIKeyFile != "":
		fp := join(path, "api_key_file")
		if !filepath.IsAbs(t.APIKeyFile) {
			t.APIKeyFile = filepath.Join(filepath.Dir(l.file), t.APIKeyFile)
		}
		data, err := readKeyFile(t.APIKeyFile)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			l.errorf(fp, "cannot read %s: %v", t.APIKeyFile, err)
			return
		}
		t.setAPIKey(l, fp, string(data), "file "+t.APIKeyFile)
	case t.APIKeyEnv != "":
		fp := join(path, "api_key_env")
		key, ok := os.LookupEnv(t.APIKeyEnv)
		if !ok {
			l.errorf(fp, "environment variable %s is not set; export it with the API key", t.APIKeyEnv)
			return
		}
		t.setAPIKey(l, fp, key, "environment variable "+t.APIKeyEnv)
	}
}

func (t *Target) setAPIKey(l *loader, path, key, source string) {
	key = strings.TrimSpace(key)
	switch {
	case key == "":
		l.errorf(path, "%s is empty; it must hold the API key", source)
	case strings.ContainsFunc(key, func(r rune) bool { return isCtl(r) || r == ' ' }):
		l.errorf(path, "%s holds more than one line or word; it must hold only the API key", source)
	default:
		t.APIKey = key
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

// maxKeyFile bounds what is read as a key file: keys are short, and a path
// such as /dev/zero must not be read until memory runs out.
const maxKeyFile = 64 << 10

// readKeyFile reads a key file, refusing what is not a regular file (a FIFO
// or /dev/stdin would block the load) and what is too large to be a key.
// Symbolic links are followed: Kubernetes mounts secrets through them.
func readKeyFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errors.New("not a regular file; it must be a file holding only the key")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err == nil && len(data) > maxKeyFile {
		err = fmt.Errorf("larger than %d KiB; it must hold only the key", maxKeyFile>>10)
	}
	return data, err
}
