package e2e

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docBlock returns the fenced block of lang that follows the comment
// `<!-- MARKER ... -->` in file, a path from the repository root.
func docBlock(t *testing.T, file, marker, lang string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", file))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- " + regexp.QuoteMeta(marker) + "[^>]*-->\n```" + lang + "\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("%s: no ```%s block after <!-- %s ... -->", file, lang, marker)
	}
	return string(m[1])
}

// shCommands splits a shell block into its commands, as a shell reads
// these simple ones: continuation lines joined, comments dropped, `;`
// separating commands and a trailing `&` dropped (the caller knows which
// commands run in the background).
func shCommands(block string) [][]string {
	var cmds [][]string
	for _, line := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, cmd := range strings.Split(line, ";") {
			if args := strings.Fields(strings.TrimSuffix(strings.TrimSpace(cmd), "&")); len(args) > 0 {
				cmds = append(cmds, args)
			}
		}
	}
	return cmds
}

// startDocSimulator starts the block's `inferprobe simulate` on a free port and
// returns its address; itl, when set, shortens its token pace.
func startDocSimulator(t *testing.T, file string, args []string, itl string) string {
	t.Helper()
	addr := freeAddr(t)
	args = append(args[1:], "--web.listen-address="+addr)
	if itl != "" {
		args = append(args, "--sim.itl="+itl)
	}
	p := inferprobe(t, "inferprobe simulate ("+file+")", t.TempDir(), args...)
	waitHealthy(t, p, "http://"+addr+"/health", 10*time.Second)
	return addr
}

// TestReadmeBenchCommands runs the first bench commands of the README and of
// docs/bench.md as written against the simulator each block starts, as a
// newcomer would, every command of a block in one directory (so that one
// may compare with another's artifacts): only the port (localhost:8000 may
// be taken here) and the simulator's token pace (to keep the test short)
// differ.
func TestReadmeBenchCommands(t *testing.T) {
	for _, doc := range []struct{ file, marker string }{
		{"README.md", "readme bench commands"},
		{"docs/bench.md", "bench commands"},
	} {
		t.Run(doc.file, func(t *testing.T) {
			var addr string
			var benches [][]string
			for _, args := range shCommands(docBlock(t, doc.file, doc.marker, "sh")) {
				switch {
				case len(args) > 1 && args[0] == "inferprobe" && args[1] == "simulate" && addr == "":
					addr = startDocSimulator(t, doc.file, args, "1ms")
				case len(args) > 1 && args[0] == "inferprobe" && args[1] == "bench":
					benches = append(benches, args[1:])
				default:
					t.Fatalf("%s's bench block: %q is neither inferprobe simulate (once) nor inferprobe bench", doc.file, args)
				}
			}
			if addr == "" || len(benches) == 0 {
				t.Fatalf("%s's bench block: want inferprobe simulate, then inferprobe bench commands; have %d bench commands", doc.file, len(benches))
			}
			dir := t.TempDir()
			for i, args := range benches {
				for j := range args {
					if j > 0 && args[j-1] == "--url" {
						args[j] = strings.Replace(args[j], "localhost:8000", addr, 1)
					}
				}
				code, out := benchIn(t, dir, args[1:]...)
				if code != 0 || !strings.Contains(out, " 0 errors") {
					t.Errorf("%s bench command %d (%s): exit %d:\n%s", doc.file, i+1, strings.Join(args, " "), code, out)
				}
			}
		})
	}
}

// TestReadmeServeCommands runs the README's quick start as written: its
// scenario saved under the name it gives, the simulator standing in for the
// server, check-config, serve, and the scrape whose line it greps, which
// must count requests answered. Only the ports differ (the simulator's
// localhost:8000 in the scenario, serve's :9470).
func TestReadmeServeCommands(t *testing.T) {
	const scenarioMarker = "readme scenario"
	doc, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("<!-- " + scenarioMarker + ` ([^\s:]+)`).FindSubmatch(doc)
	if m == nil {
		t.Fatalf("README.md: no <!-- %s FILE ... --> comment", scenarioMarker)
	}
	scenarioFile, scenario := string(m[1]), docBlock(t, "README.md", scenarioMarker, "yaml")
	dir := t.TempDir()
	var simAddr, serveAddr string
	var scraped bool
	for _, args := range shCommands(docBlock(t, "README.md", "readme serve commands", "sh")) {
		switch {
		case len(args) > 1 && args[0] == "inferprobe" && args[1] == "simulate" && simAddr == "":
			simAddr = startDocSimulator(t, "README.md", args, "")
			if !strings.Contains(scenario, "127.0.0.1:8000") {
				t.Fatalf("README.md's scenario does not probe the simulator's 127.0.0.1:8000:\n%s", scenario)
			}
			if err := os.WriteFile(filepath.Join(dir, scenarioFile), []byte(strings.ReplaceAll(scenario, "127.0.0.1:8000", simAddr)), 0o644); err != nil {
				t.Fatal(err)
			}
		case len(args) > 1 && args[0] == "inferprobe" && args[1] == "check-config":
			p := inferprobe(t, "inferprobe check-config (README)", dir, args[1:]...)
			if code := p.exitCode(t, 30*time.Second); code != 0 {
				t.Fatalf("%s: exit %d:\n%s", strings.Join(args, " "), code, p.out.String())
			}
		case len(args) > 1 && args[0] == "inferprobe" && args[1] == "serve" && serveAddr == "":
			serveAddr = freeAddr(t)
			p := inferprobe(t, "inferprobe serve (README)", dir, append(args[1:], "--web.listen-address="+serveAddr)...)
			waitHealthy(t, p, "http://"+serveAddr+"/-/ready", 15*time.Second)
		case len(args) == 2 && args[0] == "sleep":
			// The scrape below is polled instead.
		case len(args) == 6 && args[0] == "curl" && args[1] == "-s" && strings.HasPrefix(args[2], "localhost:9470/") &&
			args[3] == "|" && args[4] == "grep" && serveAddr != "":
			url := "http://" + serveAddr + strings.TrimPrefix(args[2], "localhost:9470")
			pattern := regexp.MustCompile(strings.Trim(args[5], "'"))
			eventually(t, 30*time.Second, "a line of "+url+" matching "+pattern.String()+" counts requests", func() error {
				resp, err := httpClient.Get(url)
				if err != nil {
					return err
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					return err
				}
				for _, line := range strings.Split(string(body), "\n") {
					if !pattern.MatchString(line) {
						continue
					}
					fields := strings.Fields(line)
					if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil && v > 0 {
						return nil
					}
				}
				return fmt.Errorf("no matching line with a count above 0")
			})
			scraped = true
		default:
			t.Fatalf("README.md's serve block: %q is not one of its expected commands", args)
		}
	}
	if simAddr == "" || serveAddr == "" || !scraped {
		t.Fatal("README.md's serve block: want inferprobe simulate, inferprobe serve and the scrape")
	}
}
