package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadmeBenchCommands runs the README's first bench commands as written
// against the simulator the same block starts, as a newcomer would: only
// the port (the README's localhost:8000 may be taken here) and the
// simulator's token pace (to keep the test short) differ.
func TestReadmeBenchCommands(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- readme bench commands[^>]*-->\n```sh\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md: no ```sh block after <!-- readme bench commands ... -->")
	}
	var sim []string
	var benches [][]string
	for _, cmd := range strings.Split(strings.ReplaceAll(string(m[1]), "\\\n", " "), "\n") {
		cmd, _, _ = strings.Cut(cmd, "#")
		args := strings.Fields(strings.TrimSuffix(strings.TrimSpace(cmd), "&"))
		switch {
		case len(args) == 0:
		case len(args) > 1 && args[0] == "inferprobe" && args[1] == "simulate":
			sim = args[1:]
		case len(args) > 1 && args[0] == "inferprobe" && args[1] == "bench":
			benches = append(benches, args[1:])
		default:
			t.Fatalf("README.md's bench block: %q is neither inferprobe simulate nor inferprobe bench", cmd)
		}
	}
	if sim == nil || len(benches) == 0 {
		t.Fatalf("README.md's bench block: want inferprobe simulate, then inferprobe bench commands; have %q, %q", sim, benches)
	}
	addr := freeAddr(t)
	p := inferprobe(t, "inferprobe simulate (README)", t.TempDir(), append(sim, "--web.listen-address="+addr, "--sim.itl=1ms")...)
	waitHealthy(t, p, "http://"+addr+"/health", 10*time.Second)
	for i, args := range benches {
		for j := range args {
			if j > 0 && args[j-1] == "--url" {
				args[j] = strings.Replace(args[j], "localhost:8000", addr, 1)
			}
		}
		code, out := benchIn(t, t.TempDir(), args[1:]...)
		if code != 0 || !strings.Contains(out, " 0 errors") {
			t.Errorf("README bench command %d (%s): exit %d:\n%s", i+1, strings.Join(args, " "), code, out)
		}
	}
}
