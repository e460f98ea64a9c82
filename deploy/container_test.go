package deploy

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper case
	args string
}

func parseDockerfile(t *testing.T, file string) []instruction {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur *instruction
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == nil && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur != nil && strings.HasPrefix(trimmed, "#") {
			continue // comments inside a continued instruction
		}
		cont := strings.HasSuffix(trimmed, `\`)
		trimmed = strings.TrimSuffix(trimmed, `\`)
		if cur == nil {
			cmd, args, _ := strings.Cut(trimmed, " ")
			out = append(out, instruction{line: i + 1, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
			cur = &out[len(out)-1]
		} else {
			cur.args += " " + strings.TrimSpace(trimmed)
		}
		if !cont {
			cur = nil
		}
	}
	return out
}

type stage struct {
	from, name string
	body       []instruction
}

// TestDockerfile checks the container build without a Docker daemon: a cgo build stage,
// and a runtime stage that is not the builder, runs as a numeric non-root user, and
// starts the daemon by its exec form on the daemon's port.
func TestDockerfile(t *testing.T) {
	file := filepath.Join("container", "Dockerfile")
	var stages []stage
	for _, in := range parseDockerfile(t, file) {
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			s := stage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("%s:%d: %s before the first FROM", file, in.line, in.cmd)
			}
			continue
		}
		stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
	}
	if len(stages) < 2 {
		t.Fatalf("%s: want a multi-stage build, have %d stage(s)", file, len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]
	if !strings.HasPrefix(build.from, "golang:1.26") || build.name == "" {
		t.Errorf("%s: the build stage must be a named golang:1.26 stage; have %s AS %q", file, build.from, build.name)
	}
	var cgo, cflags, builds bool
	for _, in := range build.body {
		if in.cmd == "ENV" {
			cgo = cgo || strings.Contains(in.args, "CGO_ENABLED=1")
			cflags = cflags || strings.Contains(in.args, "-Wno-deprecated-declarations")
		}
		builds = builds || (in.cmd == "RUN" && strings.Contains(in.args, "go build") && strings.Contains(in.args, "./cmd/inferprobe"))
	}
	if !cgo || !cflags || !builds {
		t.Errorf("%s: the build stage must set CGO_ENABLED=1 and CGO_CFLAGS with -Wno-deprecated-declarations and go build ./cmd/inferprobe (cgo %v, cflags %v, build %v)", file, cgo, cflags, builds)
	}
	for _, s := range stages[:len(stages)-1] {
		if final.from == s.name || final.from == s.from {
			t.Errorf("%s: the final stage must not be a build stage (FROM %s)", file, final.from)
		}
	}
	if strings.HasPrefix(final.from, "golang") {
		t.Errorf("%s: the runtime image must not be the Go toolchain image", file)
	}
	got := map[string][]instruction{}
	for _, in := range final.body {
		got[in.cmd] = append(got[in.cmd], in)
		if in.cmd == "RUN" {
			t.Errorf("%s:%d: RUN in the runtime stage: it has no shell", file, in.line)
		}
		if in.cmd == "COPY" && strings.Contains(in.args, "--from=") && !strings.Contains(in.args, "--from="+build.name+" ") {
			t.Errorf("%s:%d: COPY from an unknown stage: %s", file, in.line, in.args)
		}
	}
	users := got["USER"]
	if len(users) == 0 {
		t.Fatalf("%s: the runtime stage sets no USER", file)
	}
	uid, gid, _ := strings.Cut(users[len(users)-1].args, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("%s: USER %s: want a numeric non-root uid (runAsNonRoot can check only numbers)", file, users[len(users)-1].args)
	}
	if n, err := strconv.Atoi(gid); err != nil || n == 0 {
		t.Errorf("%s: USER %s: want a numeric non-root gid", file, users[len(users)-1].args)
	}
	if e := got["EXPOSE"]; len(e) != 1 || e[0].args != strconv.Itoa(daemonPort(t)) {
		t.Errorf("%s: want EXPOSE %d (the daemon's default port); have %v", file, daemonPort(t), e)
	}
	if h := got["HEALTHCHECK"]; len(h) != 0 {
		t.Errorf("%s: HEALTHCHECK needs a shell or an HTTP client, which the runtime image lacks", file)
	}
	var entry, cmd []string
	for _, pair := range []struct {
		name string
		dst  *[]string
	}{{"ENTRYPOINT", &entry}, {"CMD", &cmd}} {
		ins := got[pair.name]
		if len(ins) != 1 || json.Unmarshal([]byte(ins[0].args), pair.dst) != nil {
			t.Fatalf("%s: want one %s in exec (JSON) form: there is no shell", file, pair.name)
		}
	}
	if len(entry) != 1 || !strings.HasSuffix(entry[0], "/inferprobe") || len(cmd) == 0 || cmd[0] != "serve" {
		t.Errorf("%s: want ENTRYPOINT [.../inferprobe] and CMD [serve, …]; have %v %v", file, entry, cmd)
	}
	t.Run("flags", func(t *testing.T) { checkFlags(t, file, "serve", cmd[1:]) })
	t.Run("run", func(t *testing.T) {
		cfg, _ := flagValue(cmd, "config.file")
		sp, _ := flagValue(cmd, "storage.path")
		checkDeployed(t, file, deployed{args: cmd[1:], files: map[string]string{cfg: composeScenario(t)}, dirs: []string{sp}})
	})

	// The build context must keep what the build needs.
	ignore, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	patterns := map[string]bool{}
	for _, l := range strings.Split(string(ignore), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns[strings.TrimPrefix(l, "/")] = true
		}
	}
	for _, need := range append([]string{"go.mod", "go.sum"}, buildDirs(t)...) {
		if patterns[need] {
			t.Errorf(".dockerignore excludes %s, which the build needs", need)
		}
	}
	for _, drop := range []string{".git", ".cache"} {
		if !patterns[drop] {
			t.Errorf(".dockerignore must exclude %s", drop)
		}
	}
}

// buildDirs returns the top-level directories of the packages cmd/inferprobe imports from
// its own module, found by following the import lines of their non-test files.
func buildDirs(t *testing.T) []string {
	t.Helper()
	const module = "github.com/inferprobe/inferprobe/"
	seen := map[string]bool{}
	top := map[string]bool{}
	var visit func(dir string)
	visit = func(dir string) {
		if seen[dir] {
			return
		}
		seen[dir] = true
		top[strings.SplitN(dir, "/", 2)[0]] = true
		files, err := filepath.Glob(filepath.Join(repoRoot, dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				if p, ok := strings.CutPrefix(strings.Trim(imp.Path.Value, `"`), module); ok {
					visit(p)
				}
			}
		}
	}
	visit("cmd/inferprobe")
	dirs := make([]string, 0, len(top))
	for d := range top {
		dirs = append(dirs, d)
	}
	return dirs
}
