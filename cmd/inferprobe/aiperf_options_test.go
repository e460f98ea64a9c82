package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"
)

var update = flag.Bool("update", false, "rewrite docs/bench.md's AIPerf option table from aiperfOptions")

// helpOptions reads the options of `aiperf profile --help` (AIPerf 0.13,
// copied from the project's reference fixtures): group and names, in order.
func helpOptions(t *testing.T) [][2]string {
	t.Helper()
	file, err := os.Open("testdata/aiperf-0.13-profile-help.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var (
		group  = regexp.MustCompile(`^╭─ (.+?) ─`)
		option = regexp.MustCompile(`^│ (-\S.*?)(?:\s{2,}|\s*│$)`)
		more   = regexp.MustCompile(`^│   (-\S.*?)(?:\s{2,}|\s*│$)`) // names wrapped onto a second line
		cur    string
		out    [][2]string
	)
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := group.FindStringSubmatch(line); m != nil {
			cur = m[1]
		} else if m := option.FindStringSubmatch(line); m != nil {
			out = append(out, [2]string{cur, strings.Join(strings.Fields(m[1]), " ")})
		} else if m := more.FindStringSubmatch(line); m != nil && len(out) > 0 {
			out[len(out)-1][1] += " " + strings.Join(strings.Fields(m[1]), " ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAIPerfOptionsMatchHelp: the table has every option of AIPerf 0.13's
// profile --help, with its group and all its names, in AIPerf's order.
func TestAIPerfOptionsMatchHelp(t *testing.T) {
	help := helpOptions(t)
	if len(help) != 264 {
		t.Fatalf("read %d options from the help, want AIPerf 0.13's 264", len(help))
	}
	for i, h := range help {
		if i >= len(aiperfOptions) {
			t.Fatalf("the table ends before option %d, %s %s", i+1, h[0], h[1])
		}
		if o := aiperfOptions[i]; o.group != h[0] || o.names != h[1] {
			t.Fatalf("option %d: the table has %q %q, AIPerf's help %q %q", i+1, o.group, o.names, h[0], h[1])
		}
	}
	if len(aiperfOptions) != len(help) {
		t.Errorf("the table has %d options, AIPerf's help %d", len(aiperfOptions), len(help))
	}
	for _, o := range aiperfOptions {
		if (o.status == supported) != (o.flag != "") || o.status != supported && o.why == "" {
			t.Errorf("%s: a supported option has a flag, the others a why and no flag", o.names)
		}
	}
}

// benchApp is bench's command as main builds it.
func benchApp() (*kingpin.Application, *benchFlags) {
	app := kingpin.New("inferprobe", "")
	app.Terminate(nil)
	logConfig := &promslog.Config{Level: promslog.NewLevel()}
	cmd := app.Command("bench", "")
	f := addBenchFlags(cmd, logConfig)
	addWorkerFlags(cmd, logConfig)
	addGPUFlags(cmd)
	return app, f
}

// TestAIPerfOptionsParse gives bench every name of every AIPerf option: a
// supported one is a real bench flag and parses, an unsupported one is
// refused with its reason in one line, an ignored one is noted; none is
// an unknown flag.
func TestAIPerfOptionsParse(t *testing.T) {
	for _, o := range aiperfOptions {
		for _, name := range strings.Fields(o.names) {
			app, f := benchApp()
			args := []string{"bench", "--model", "m", name}
			if o.flag == "model" {
				args = []string{"bench", name}
			}
			if o.status == supported {
				c := f.cmd.GetFlag(o.flag)
				if c == nil {
					t.Errorf("%s: bench has no flag --%s", name, o.flag)
					continue
				}
				if _, stub := c.Model().Value.(*optionStub); stub {
					t.Errorf("%s: --%s is a stub", name, o.flag)
				}
				if b, ok := c.Model().Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
					args = append(args, sampleValue(o.flag))
				}
			}
			_, err := app.Parse(args)
			switch o.status {
			case supported:
				if err != nil {
					t.Errorf("bench %s: %v", strings.Join(args[1:], " "), err)
				}
			case unsupported:
				refused := name
				if !strings.HasPrefix(name, "--") {
					refused = strings.Fields(o.names)[0]
				}
				want := refused + " is an AIPerf option that inferprobe does not support: " + o.why
				if err == nil || err.Error() != want {
					t.Errorf("bench %s: error %v, want %q", strings.Join(args[1:], " "), err, want)
				}
			case ignored:
				if err != nil || len(f.notes) != 1 || !strings.HasPrefix(f.notes[0], name+" is an AIPerf option that changes nothing here: ") {
					t.Errorf("bench %s: error %v, notes %q; want one note about %s", strings.Join(args[1:], " "), err, f.notes, name)
				}
			}
		}
	}
}

// sampleValue is a valid value for a supported flag that takes one.
func sampleValue(flag string) string {
	switch flag {
	case "endpoint-type":
		return "chat"
	case "custom-dataset-type":
		return "single_turn"
	case "arrival-pattern", "warmup-arrival-pattern":
		return "gamma"
	case "log-level":
		return "DEBUG"
	case "ui-type":
		return "simple"
	case "connection-reuse-strategy":
		return "never"
	case "convergence-stat":
		return "p99"
	case "convergence-mode":
		return "cv"
	case "parameter-sweep-mode":
		return "independent"
	case "image-format":
		return "jpeg"
	case "image-source":
		return "noise"
	case "image-source-sampling":
		return "shuffle-cycle"
	case "audio-format":
		return "wav"
	case "extra-inputs":
		return "k:v"
	case "header":
		return "X-A: b"
	case "goodput":
		return "request_latency:100"
	case "url", "model", "input-file", "artifact-dir", "tokenizer", "api-key":
		return "x"
	case "endpoint":
		return "/v1/chat/completions"
	}
	return "1"
}

// TestAIPerfOptionsREADME: the AIPerf option table of docs/bench.md, the
// bench reference the README links, is the one aiperfOptions gives. The
// table between the markers is generated whole, so a conflict in it is
// resolved by running this with -update. (The name is older than the page;
// it stays, as the command the markers give.)
func TestAIPerfOptionsREADME(t *testing.T) {
	const file = "../../docs/bench.md"
	const begin, end = "<!-- begin aiperf-options: generated by go test ./cmd/inferprobe -run TestAIPerfOptionsREADME -update -->\n", "<!-- end aiperf-options -->\n"
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), begin)
	_, after, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("%s has no %q … %q section", file, begin, end)
	}
	want := aiperfOptionsMarkdown()
	if *update {
		if err := os.WriteFile(file, []byte(before+begin+want+end+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got, _, _ := strings.Cut(rest, end); got != want {
		t.Errorf("%s's AIPerf option table is out of date: run go test ./cmd/inferprobe -run TestAIPerfOptionsREADME -update", file)
	}
}

// aiperfOptionsMarkdown is docs/bench.md's table: per AIPerf group, the
// supported options with the bench flag behind each, the ignored ones, and
// the unsupported ones grouped by their reason.
func aiperfOptionsMarkdown() string {
	var b strings.Builder
	counts := map[optionStatus]int{}
	for _, o := range aiperfOptions {
		counts[o.status]++
	}
	fmt.Fprintf(&b, "Of AIPerf 0.13's %d `profile` options, bench supports %d, accepts %d that would change nothing here (with a note saying so), and refuses %d with one line saying why and what to use instead.\n\n",
		len(aiperfOptions), counts[supported], counts[ignored], counts[unsupported])
	b.WriteString("| AIPerf group | supported (→ bench flag) | accepted, no effect | not supported: why, and what to use instead |\n|---|---|---|---|\n")
	var groups []string
	for _, o := range aiperfOptions {
		if !slices.Contains(groups, o.group) {
			groups = append(groups, o.group)
		}
	}
	code := func(names string) string { return "`" + strings.Join(strings.Fields(names), "` `") + "`" }
	for _, g := range groups {
		var sup, ign []string
		var whys []string
		byWhy := map[string][]string{}
		for _, o := range aiperfOptions {
			if o.group != g {
				continue
			}
			switch o.status {
			case supported:
				s := code(o.names)
				if !slices.Contains(strings.Fields(o.names), "--"+o.flag) {
					s += " → `--" + o.flag + "`"
				}
				if o.why != "" {
					s += " (differs: " + o.why + ")"
				}
				sup = append(sup, s)
			case ignored:
				ign = append(ign, code(o.names)+": "+o.why)
			case unsupported:
				if _, ok := byWhy[o.why]; !ok {
					whys = append(whys, o.why)
				}
				byWhy[o.why] = append(byWhy[o.why], code(o.names))
			}
		}
		var uns []string
		for _, w := range whys {
			uns = append(uns, strings.Join(byWhy[w], ", ")+": "+w)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", g, strings.Join(sup, "; "), strings.Join(ign, "; "), strings.Join(uns, "; "))
	}
	return b.String()
}
