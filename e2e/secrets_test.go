package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// plant returns a secret that appears nowhere else: a test that finds it
// found the secret, not a coincidence.
func plant() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "planted-secret-" + hex.EncodeToString(b)
}

// surfaces collects everything inferprobe showed the outside world, by
// where it showed it, to be searched for secrets at the end.
type surfaces struct {
	t    *testing.T
	seen map[string][]byte
}

func (s *surfaces) add(where string, content []byte) {
	s.t.Helper()
	if len(content) == 0 {
		s.t.Errorf("%s is empty: a surface that shows nothing proves nothing", where)
	}
	s.seen[where] = append(s.seen[where], content...)
}

// addFiles adds every file under dir.
func (s *surfaces) addFiles(what, dir string) {
	s.t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		s.add(what+" "+path, b)
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	if n == 0 {
		s.t.Errorf("%s: no files under %s", what, dir)
	}
}

// leaks reports every surface that holds any of secrets.
func (s *surfaces) leaks(secrets map[string]string) {
	s.t.Helper()
	for _, where := range slices.Sorted(maps.Keys(s.seen)) {
		for what, secret := range secrets {
			if bytes.Contains(s.seen[where], []byte(secret)) {
				s.t.Errorf("the %s appears in %s", what, where)
			}
		}
	}
}

// call sends one request to the daemon and returns its status and body.
func call(t *testing.T, method, u, body string, header http.Header) (int, []byte) {
	t.Helper()
	status, _, b := apiCall(t, method, u, body, header, nil)
	return status, []byte(b)
}

// TestSecretsNeverShown plants unique secrets everywhere inferprobe takes
// one (an api_key_file, an api_key_env, the burst API's token file, bench's
// --api-key and a credential header, and keys in files that fail to load)
// and searches every surface for them: the logs at debug level, /metrics in
// text and protobuf, the landing page, /api/v1/status, every burst API
// answer (errors too), the run history files, /-/reload's error, the
// workers' command lines, check-config's output for good and broken files,
// and bench's output and every file it writes. Recorders in front of the simulator prove that the
// keys were sent, so the test cannot pass by never using them. It also walks
// every route offered and checks that none fetches a URL it is given.
func TestSecretsNeverShown(t *testing.T) {
	dir := t.TempDir()
	secrets := map[string]string{}
	for _, what := range []string{"api_key_file key", "api_key_env key", "burst API token", "key of a failed reload",
		"key of a broken file", "key in a broken environment variable", "password in a target URL", "bench --api-key", "bench credential header"} {
		secrets[what] = plant()
	}
	fileKey, envKey, token := secrets["api_key_file key"], secrets["api_key_env key"], secrets["burst API token"]
	t.Setenv("INFERPROBE_E2E_KEY", envKey)
	t.Setenv("INFERPROBE_E2E_BAD_KEY", secrets["key in a broken environment variable"]+" second-word")
	writeFile := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	keyFile := writeFile("key.txt", fileKey+"\n")
	tokenFile := writeFile("token.txt", token+"\n")

	var fetched atomic.Int64 // requests to a URL that was only ever given to inferprobe as a parameter
	canary := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { fetched.Add(1) }))
	defer canary.Close()

	sim := freeAddr(t)
	startSimulator(t, sim)
	viaFile, viaEnv := newRecorder(t, sim), newRecorder(t, sim)
	dataset := "dataset: {synthetic: {input_tokens: {mean: 16}, output_tokens: {mean: 8}}}"
	config := writeFile("scenario.yml", fmt.Sprintf(`targets:
  filekey: {url: %s, model: inferprobe-simulator, api_key_file: key.txt, timeout: 10s}
  envkey: {url: %s, model: inferprobe-simulator, api_key_env: INFERPROBE_E2E_KEY, timeout: 10s}
probes:
  viafile: {target: filekey, arrival: {pattern: constant, rate: 5}, %[3]s}
  viaenv: {target: envkey, arrival: {pattern: constant, rate: 5}, %[3]s}
bursts:
  load: {target: filekey, on_demand: true, requests: 5, arrival: {pattern: constant, rate: 50}, %[3]s}
`, viaFile.base(), viaEnv.base(), dataset))
	seen := &surfaces{t: t, seen: map[string][]byte{}}

	checkConfig := inferprobe(t, "inferprobe check-config", dir, "check-config", config)
	if code := checkConfig.exitCode(t, 10*time.Second); code != 0 {
		t.Fatalf("check-config of the good file exited %d", code)
	}
	seen.add("check-config output for a valid file", []byte(checkConfig.out.String()))

	storage := filepath.Join(dir, "runs")
	addr := freeAddr(t)
	serve := inferprobe(t, "inferprobe serve", dir, "serve", "--workers=2", "--config.file="+config,
		"--web.listen-address="+addr, "--log.level=debug", "--storage.path="+storage, "--web.enable-lifecycle",
		"--web.enable-burst-api", "--web.burst-api.token-file="+tokenFile)
	base := "http://" + addr
	waitHealthy(t, serve, base+"/-/ready", 10*time.Second)

	// The keys were sent, each to its target, on every request.
	eventually(t, 10*time.Second, "both targets probed", func() error {
		if f, e := viaFile.counts().completed, viaEnv.counts().completed; f < 2 || e < 2 {
			return fmt.Errorf("%d and %d requests completed", f, e)
		}
		return nil
	})
	for _, c := range []struct {
		rec  *recorder
		want string
	}{{viaFile, "Bearer " + fileKey}, {viaEnv, "Bearer " + envKey}} {
		for _, h := range c.rec.requestHeaders() {
			if got := h.Values("Authorization"); len(got) != 1 || got[0] != c.want {
				t.Fatalf("a request came with Authorization %q, want the planted key (%q)", got, c.want)
			}
		}
	}

	// What ps shows: the keys reach the workers through their pipe, not
	// their command lines.
	workers := children(t, serve.cmd.Process.Pid)
	if len(workers) != 2 {
		t.Fatalf("serve has %d child processes, want its 2 workers", len(workers))
	}
	for _, pid := range workers {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			t.Fatal(err)
		}
		seen.add(fmt.Sprintf("the command line of worker %d", pid), cmdline)
	}

	auth := http.Header{"Authorization": {"Bearer " + token}}
	get := func(where, path string, header http.Header) {
		t.Helper()
		_, b := call(t, "GET", base+path, "", header)
		seen.add(where, b)
	}
	get("the landing page", "/", nil)
	get("/api/v1/status", "/api/v1/status", nil)
	get("/-/healthy", "/-/healthy", nil)
	get("/-/ready", "/-/ready", nil)
	for _, accept := range []string{"text/plain;version=0.0.4", protobufAccept} {
		_, b := call(t, "GET", base+"/metrics", "", http.Header{"Accept": {accept}})
		if !bytes.Contains(b, []byte("inferprobe_requests_total")) {
			t.Fatalf("/metrics (%s) has no inferprobe_requests_total", accept)
		}
		seen.add("/metrics as "+accept, b)
	}

	// The burst API, its answers and its errors. The token works, and is
	// not echoed even when a wrong one holding it is presented.
	api := base + "/api/v1/bursts"
	for _, c := range []struct {
		what, method, path, body string
		header                   http.Header
		want                     int
	}{
		{"without the token", "GET", "", "", nil, http.StatusUnauthorized},
		{"with a wrong token that holds the real one", "GET", "", "", http.Header{"Authorization": {"Bearer " + token + "x"}}, http.StatusUnauthorized},
		{"the list", "GET", "", "", auth, http.StatusOK},
		{"an unknown burst", "POST", "/nope", "", auth, http.StatusNotFound},
		{"a bad body", "POST", "/load", `{"duration":`, auth, http.StatusBadRequest},
		{"a body over the limit", "POST", "/load", `{"duration":"` + strings.Repeat("1", 5000) + `s"}`, auth, http.StatusRequestEntityTooLarge},
		{"a wrong method", "PUT", "/load", "", auth, http.StatusMethodNotAllowed},
		{"an unknown run", "GET", "/runs/nope", "", auth, http.StatusNotFound},
	} {
		status, b := call(t, c.method, api+c.path, c.body, c.header)
		if status != c.want {
			t.Errorf("burst API, %s: %d %s, want %d", c.what, status, b, c.want)
		}
		seen.add("the burst API's answer to "+c.what, b)
	}
	status, _, body := apiCall(t, "POST", api+"/load", "", auth, nil)
	if status != http.StatusAccepted {
		t.Fatalf("POST /api/v1/bursts/load with the token: %d %s", status, body)
	}
	seen.add("the burst API's answer to a start", []byte(body))
	var run keptRun
	eventually(t, 30*time.Second, "the run ends", func() error {
		runs := struct{ Runs []keptRun }{}
		apiCall(t, "GET", api+"/runs", "", auth, &runs)
		if len(runs.Runs) != 1 || runs.Runs[0].State == "running" || runs.Runs[0].State == "queued" {
			return fmt.Errorf("runs %+v", runs.Runs)
		}
		run = runs.Runs[0]
		return nil
	})
	if run.State != "succeeded" || run.counts() != [3]int{5, 0, 0} {
		t.Fatalf("run %+v, want succeeded with 5 ok", run)
	}
	get("the burst API's run", "/api/v1/bursts/runs/"+run.ID, auth)
	get("the burst API's runs", "/api/v1/bursts/runs", auth)
	get("the burst API's list with a run", "/api/v1/bursts", auth)
	status, b := call(t, "DELETE", api+"/runs/"+run.ID, "", auth)
	if status != http.StatusConflict {
		t.Errorf("DELETE of a finished run: %d %s, want 409", status, b)
	}
	seen.add("the burst API's answer to cancelling a finished run", b)

	// A reload whose key file is broken fails, and says so without the key.
	writeFile("key.txt", secrets["key of a failed reload"]+" second-word\n")
	status, b = call(t, "POST", base+"/-/reload", "", nil)
	if status != http.StatusInternalServerError || !bytes.Contains(b, []byte(keyFile)) {
		t.Errorf("reload with a two-word key file: %d %s, want 500 naming %s", status, b, keyFile)
	}
	seen.add("/-/reload's error", b)
	writeFile("key.txt", fileKey+"\n")
	if status, b := call(t, "POST", base+"/-/reload", "", nil); status != http.StatusOK {
		t.Errorf("reload with the key file fixed: %d %s", status, b)
	}

	noFetch(t, seen, base, canary.URL, auth, run.ID)

	serve.signal(t, syscall.SIGTERM)
	if code := serve.exitCode(t, 30*time.Second); code != 0 {
		t.Errorf("serve exited %d after SIGTERM", code)
	}
	seen.add("serve's log", []byte(serve.out.String()))
	seen.addFiles("the run history file", storage)
	if n := fetched.Load(); n != 0 {
		t.Errorf("%d requests reached a URL given only as a parameter", n)
	}
	for _, rec := range []*recorder{viaFile, viaEnv} {
		for path := range rec.requestPaths() {
			// GET /metrics: bursts read the engine's own metrics, without the key.
			if path != "POST /v1/chat/completions" && path != "GET /metrics" {
				t.Errorf("a target received %s: inferprobe sent something other than probes", path)
			}
		}
		for _, h := range rec.scrapeHeaders() {
			if h.Get("Authorization") != "" {
				t.Errorf("a read of the engine's metrics carried Authorization %q: the target's key is for its API", h.Get("Authorization"))
			}
		}
	}

	// Broken files: check-config and serve name the problem, not the key. A
	// file's own problems (the URL) come first; the keys are read, and their
	// problems found, once the file is valid.
	badKeyFile := writeFile("bad-key.txt", secrets["key of a broken file"]+" second-word\n")
	brokenKeys := writeFile("broken-keys.yml", fmt.Sprintf(`targets:
  badfile: {url: %s, model: m, api_key_file: %s}
  badenv: {url: %s, model: m, api_key_env: INFERPROBE_E2E_BAD_KEY}
probes:
  p: {target: badfile, arrival: {pattern: constant, rate: 1}, %s}
`, viaFile.base(), badKeyFile, viaEnv.base(), dataset))
	brokenURL := writeFile("broken-url.yml", fmt.Sprintf(`targets:
  badurl: {url: "http://user:%s@127.0.0.1:9/v1", model: m}
probes:
  p: {target: badurl, arrival: {pattern: constant, rate: 1}, %s}
`, secrets["password in a target URL"], dataset))
	for file, problems := range map[string][]string{brokenKeys: {badKeyFile, "INFERPROBE_E2E_BAD_KEY"}, brokenURL: {"badurl"}} {
		for _, cmd := range [][]string{
			{"check-config", file},
			{"serve", "--config.file=" + file, "--log.level=debug", "--web.listen-address=" + freeAddr(t)},
		} {
			p := inferprobe(t, "inferprobe "+cmd[0], dir, cmd...)
			if code := p.exitCode(t, 20*time.Second); code != 1 {
				t.Errorf("%s of %s exited %d, want 1", cmd[0], filepath.Base(file), code)
			}
			out := p.out.String()
			for _, want := range problems {
				if !strings.Contains(out, want) {
					t.Errorf("%s of %s does not name %q:\n%s", cmd[0], filepath.Base(file), want, out)
				}
			}
			seen.add(cmd[0]+" output for "+filepath.Base(file), []byte(out))
		}
	}

	benchSecrets(t, seen, sim, secrets["bench --api-key"], secrets["bench credential header"])
	seen.leaks(secrets)
}

// benchSecrets runs `inferprobe bench` with an API key and a credential
// header, checks that both were sent, and adds its output and every file it
// wrote to seen.
func benchSecrets(t *testing.T, seen *surfaces, sim, key, header string) {
	t.Helper()
	rec := newRecorder(t, sim)
	dir := t.TempDir()
	artifacts, saved := filepath.Join(dir, "artifacts"), filepath.Join(dir, "saved", "scenario.yml")
	if err := os.Mkdir(filepath.Dir(saved), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out := benchIn(t, dir, "--model", "inferprobe-simulator", "--url", rec.srv.URL, "--endpoint-type", "chat",
		"--streaming", "--request-count", "5", "--request-rate", "20", "--output-tokens-mean", "8",
		"--api-key", key, "-H", "X-Upstream-Token: "+header, "--artifact-dir", artifacts, "--save-scenario", saved,
		"--progress", "plain")
	if code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}
	headers := rec.requestHeaders()
	if len(headers) != 5 {
		t.Fatalf("bench sent %d requests, want 5", len(headers))
	}
	for _, h := range headers {
		if h.Get("Authorization") != "Bearer "+key || h.Get("X-Upstream-Token") != header {
			t.Fatalf("a bench request came with Authorization %q and X-Upstream-Token %q, want the planted ones",
				h.Get("Authorization"), h.Get("X-Upstream-Token"))
		}
	}
	seen.add("bench's output", []byte(out))
	seen.addFiles("bench's artifact", artifacts)
	seen.addFiles("bench's saved scenario", filepath.Dir(saved))
}

// hrefs are the local links of a page.
var hrefs = regexp.MustCompile(`href="(/[^"]*)"`)

// noFetch walks every route the landing page links to and every route of the
// API, with GET and POST, giving each a URL in every parameter name such an
// endpoint might read. None may fetch it (the caller counts the canary's
// requests at the end). A burst name that is a URL is no burst (404), and an
// overrides body with a URL is refused (400).
func noFetch(t *testing.T, seen *surfaces, base, canary string, auth http.Header, runID string) {
	t.Helper()
	_, page := call(t, "GET", base+"/", "", nil)
	routes := []string{"/-/reload", "/api/v1/bursts", "/api/v1/bursts/runs", "/api/v1/bursts/runs/" + runID, "/api/v1/bursts/load"}
	for _, m := range hrefs.FindAllSubmatch(page, -1) {
		route, _, _ := strings.Cut(string(m[1]), "?")
		routes = append(routes, route)
	}
	slices.Sort(routes)
	routes = slices.Compact(routes)
	if len(routes) < 8 {
		t.Fatalf("routes %v: the landing page links fewer routes than it should", routes)
	}
	query := url.Values{}
	for _, name := range []string{"url", "target", "endpoint", "config.file", "module", "callback", "webhook"} {
		query.Set(name, canary+"/v1")
	}
	for _, route := range routes {
		for _, method := range []string{"GET", "POST"} {
			if route == "/api/v1/bursts/load" && method == "POST" {
				continue // a start, tried below with a URL body
			}
			status, b := call(t, method, base+route+"?"+query.Encode(), "", auth)
			if status >= 500 {
				t.Errorf("%s %s with URL parameters: %d %s", method, route, status, b)
			}
			seen.add(method+" "+route+" with URL parameters", b)
		}
	}
	status, b := call(t, "POST", base+"/api/v1/bursts/"+url.PathEscape(canary+"/v1"), "", auth)
	if status != http.StatusNotFound {
		t.Errorf("POST of a burst named by a URL: %d %s, want 404", status, b)
	}
	seen.add("the burst API's answer to a burst named by a URL", b)
	status, b = call(t, "POST", base+"/api/v1/bursts/load", `{"url":"`+canary+`/v1"}`, auth)
	if status != http.StatusBadRequest {
		t.Errorf("POST of overrides holding a URL: %d %s, want 400", status, b)
	}
	seen.add("the burst API's answer to overrides holding a URL", b)
}
