// Package deploy holds the tests of the deployment files under deploy/: every Kubernetes
// manifest and the rendered Helm chart decoded strictly into its typed API object, the
// compose stack, the container build and the systemd unit. It is a module of its own so
// that the main module does not carry the Kubernetes and Helm libraries.
//
// With $INFERPROBE set to a built binary (make deploy-test does it), the tests also check
// every flag the files pass against the binary's --help and run check-config on every
// scenario they ship; without it those parts are skipped, unless INFERPROBE_E2E=1.
package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// repoRoot is the main module's root, one level up from this module.
const repoRoot = ".."

// daemonPort is the port of the daemon's default --web.listen-address, read from the source
// so that a changed default fails here instead of in a cluster.
func daemonPort(t *testing.T) int {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, "cmd", "inferprobe", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`defaultListen\s*=\s*":(\d+)"`).FindSubmatch(src)
	if m == nil {
		t.Fatal("cmd/inferprobe/main.go: no defaultListen = \":PORT\" constant")
	}
	p, _ := strconv.Atoi(string(m[1]))
	return p
}

// binary returns the inferprobe binary named by $INFERPROBE, skipping the calling test
// without one (failing it under INFERPROBE_E2E=1).
func binary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("INFERPROBE")
	if bin == "" {
		if os.Getenv("INFERPROBE_E2E") == "1" {
			t.Fatal("INFERPROBE is not set; build inferprobe and set INFERPROBE=/path/to/inferprobe")
		}
		t.Skip("INFERPROBE is not set (make deploy-test sets it); not checking flags and scenarios against the binary")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

var helpFlag = regexp.MustCompile(`--(?:\[no-\])?([a-z][a-z0-9.-]*)`)

// checkFlags fails for every --flag in args that `inferprobe COMMAND --help` does not list.
func checkFlags(t *testing.T, where string, command string, args []string) {
	t.Helper()
	bin := binary(t)
	out, err := exec.Command(bin, append(strings.Fields(command), "--help")...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s --help: %v\n%s", bin, command, err, out)
	}
	known := map[string]bool{}
	for _, m := range helpFlag.FindAllStringSubmatch(string(out), -1) {
		known[m[1]] = true
		known["no-"+m[1]] = true // kingpin's negation of boolean flags
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !known[name] {
			t.Errorf("%s: inferprobe %s has no flag --%s", where, command, name)
		}
	}
}

// deployed is what a container of a deployment sees: the arguments after the command,
// files by absolute path (the scenario, a key file), the directories it may write, and
// environment variables the arguments refer to as $(NAME), as Kubernetes expands them.
type deployed struct {
	args  []string
	files map[string]string
	dirs  []string
	env   map[string]string
}

// layout writes d's files and directories under a temporary root and returns d's arguments
// and a rewriting function with every such path moved under that root.
func (d deployed) layout(t *testing.T) ([]string, func(string) string) {
	t.Helper()
	root := t.TempDir()
	var paths []string
	for p := range d.files {
		paths = append(paths, p)
	}
	paths = append(paths, d.dirs...)
	rewrite := func(s string) string {
		for _, p := range paths {
			s = strings.ReplaceAll(s, p, filepath.Join(root, p))
		}
		for k, v := range d.env {
			s = strings.ReplaceAll(s, "$("+k+")", v)
		}
		return s
	}
	for p, content := range d.files {
		dst := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, []byte(rewrite(content)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range d.dirs {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	args := make([]string, len(d.args))
	for i, a := range d.args {
		args[i] = rewrite(a)
	}
	return args, rewrite
}

// checkDeployed runs the binary as the deployment would: `inferprobe check-config` on the
// scenario of --config.file, then `inferprobe serve` with the deployment's arguments (on a
// free local port instead of its listen address) until /-/ready answers 200, then SIGTERM,
// which must end it with status 0 within the grace period.
func checkDeployed(t *testing.T, where string, d deployed) {
	t.Helper()
	bin := binary(t)
	args, rewrite := d.layout(t)
	cfg, ok := flagValue(d.args, "config.file")
	if _, inFiles := d.files[cfg]; !ok || !inFiles {
		t.Fatalf("%s: --config.file=%s is not among the files the container sees", where, cfg)
	}
	if out, err := exec.Command(bin, "check-config", rewrite(cfg)).CombinedOutput(); err != nil {
		t.Fatalf("%s: inferprobe check-config %s: %v\n%s", where, cfg, err, out)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	serve := []string{"serve", "--web.listen-address=" + addr}
	for _, a := range args {
		if !strings.HasPrefix(a, "--web.listen-address=") {
			serve = append(serve, a)
		}
	}
	cmd := exec.Command(bin, serve...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	ready := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !ready; time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("%s: inferprobe %s exited before it was ready: %v\n%s", where, strings.Join(serve, " "), err, out.String())
		default:
		}
		if resp, err := http.Get("http://" + addr + "/-/ready"); err == nil {
			ready = resp.StatusCode == http.StatusOK
			resp.Body.Close()
		}
	}
	if !ready {
		t.Fatalf("%s: inferprobe %s not ready within 15s\n%s", where, strings.Join(serve, " "), out.String())
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: after SIGTERM: %v\n%s", where, err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("%s: still running 30s after SIGTERM\n%s", where, out.String())
	}
}

// flagValue returns the value of --name=VALUE in args.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// splitYAML splits a multi-document YAML stream, dropping empty documents.
func splitYAML(t *testing.T, data []byte) [][]byte {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			t.Fatal(err)
		}
		if v != nil {
			docs = append(docs, doc)
		}
	}
}

// secretLike matches what must never appear in plain configuration: credentials belong in
// key files or environment variables.
var secretLike = regexp.MustCompile(`(?i)authorization|bearer\s|\bapi_key\s*:|password\s*:|\bsk-[a-z0-9]{8,}`)
