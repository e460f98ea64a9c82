package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// buildFlags is what makes one inferprobe binary like another: the variables -ldflags sets,
// whether paths are trimmed, and the C flags of the cgo bindings.
type buildFlags struct {
	variables []string // of -X, sorted
	trimpath  bool
	cflags    string
}

var ldflagVariable = regexp.MustCompile(`-X\s+([\w./-]+)=`)

func variables(s string) []string {
	var vs []string
	for _, m := range ldflagVariable.FindAllStringSubmatch(s, -1) {
		vs = append(vs, m[1])
	}
	slices.Sort(vs)
	return vs
}

// TestReleaseBuildsAgree: make build, the GoReleaser release and the Dockerfile build the
// same binary: cgo with the same C flags, -trimpath, the same version variables.
func TestReleaseBuildsAgree(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var gr struct {
		Version int    `json:"version"`
		Dist    string `json:"dist"`
		Builds  []struct {
			Main    string   `json:"main"`
			Env     []string `json:"env"`
			Flags   []string `json:"flags"`
			Ldflags []string `json:"ldflags"`
		} `json:"builds"`
		Checksum struct {
			NameTemplate string `json:"name_template"`
		} `json:"checksum"`
	}
	if err := yaml.Unmarshal(data, &gr); err != nil {
		t.Fatal(err)
	}
	if gr.Version != 2 || len(gr.Builds) == 0 || gr.Checksum.NameTemplate == "" {
		t.Fatalf(".goreleaser.yaml: want version 2, builds and checksums; have %+v", gr)
	}
	if !strings.HasPrefix(gr.Dist, ".cache/") {
		t.Errorf(".goreleaser.yaml: dist %q: keep release output under .cache/, out of the work tree", gr.Dist)
	}
	// One build per architecture (a snapshot builds the machine's own): each the same.
	var release buildFlags
	for i, b := range gr.Builds {
		flags := buildFlags{variables: variables(strings.Join(b.Ldflags, " ")), trimpath: slices.Contains(b.Flags, "-trimpath")}
		var cgo bool
		for _, e := range b.Env {
			cgo = cgo || e == "CGO_ENABLED=1"
			if v, ok := strings.CutPrefix(e, "CGO_CFLAGS="); ok {
				flags.cflags = v
			}
		}
		if !cgo || b.Main != "./cmd/inferprobe" {
			t.Errorf(".goreleaser.yaml: build %d: want CGO_ENABLED=1 (go-dcgm and go-nvml are cgo bindings) and main ./cmd/inferprobe", i)
		}
		if i == 0 {
			release = flags
		} else if !slices.Equal(flags.variables, release.variables) || flags.trimpath != release.trimpath || flags.cflags != release.cflags {
			t.Errorf(".goreleaser.yaml: build %d differs from build 0: %+v, want %+v", i, flags, release)
		}
	}

	mk, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	makefile := string(mk)
	ldflags := regexp.MustCompile(`(?ms)^LDFLAGS\s*:=(.*?[^\\])$`).FindStringSubmatch(makefile)
	buildLine := regexp.MustCompile(`(?m)^build:\n\t(.*)$`).FindStringSubmatch(makefile)
	cflags := regexp.MustCompile(`(?m)^export CGO_CFLAGS \?= (.*)$`).FindStringSubmatch(makefile)
	if ldflags == nil || buildLine == nil || cflags == nil {
		t.Fatal("Makefile: want LDFLAGS :=, export CGO_CFLAGS ?= and a build: recipe")
	}
	byMake := buildFlags{variables: variables(ldflags[1]), trimpath: strings.Contains(buildLine[1], "-trimpath"), cflags: cflags[1]}

	var docker buildFlags
	for _, in := range parseDockerfile(t, filepath.Join("container", "Dockerfile")) {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			docker.variables, docker.trimpath = variables(in.args), strings.Contains(in.args, "-trimpath")
		}
		if m := regexp.MustCompile(`CGO_CFLAGS="([^"]*)"`).FindStringSubmatch(in.args); in.cmd == "ENV" && m != nil {
			docker.cflags = m[1]
		}
	}

	if len(release.variables) == 0 || !release.trimpath || !strings.Contains(release.cflags, "-Wno-deprecated-declarations") {
		t.Errorf(".goreleaser.yaml: want -X version variables, -trimpath and CGO_CFLAGS with -Wno-deprecated-declarations; have %+v", release)
	}
	for where, got := range map[string]buildFlags{"Makefile": byMake, "container/Dockerfile": docker} {
		if !slices.Equal(got.variables, release.variables) || got.trimpath != release.trimpath || got.cflags != release.cflags {
			t.Errorf("%s builds another binary than .goreleaser.yaml: %+v, want %+v", where, got, release)
		}
	}
}
