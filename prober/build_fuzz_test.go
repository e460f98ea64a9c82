package prober

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// FuzzBuild runs what serve does at start on every scenario validation
// accepts: Build, NewProbe for each probe and burst, and the planning of
// its first requests, where a length nobody bounded used to panic. It
// starts from the scenarios fuzz corpus and the bundled files; go test
// -run '^$' -fuzz '^FuzzBuild$' ./prober/ explores from them.
func FuzzBuild(f *testing.F) {
	corpus, _ := filepath.Glob("../scenarios/testdata/fuzz/FuzzParse/*")
	for _, p := range append(corpus, "../scenarios/example.yml", "../scenarios/demo.yml") {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if seed, ok := strings.CutPrefix(string(data), "go test fuzz v1\n[]byte("); ok {
			text, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(seed), ")"))
			if err != nil {
				f.Fatalf("%s: %v", p, err)
			}
			data = []byte(text)
		}
		f.Add(data)
	}
	// The file that crashed serve, and lengths whose tail draws pass the bound.
	f.Add([]byte("targets:\n  v: {url: http://127.0.0.1:8000/v1, model: m}\nprobes:\n  p: {target: v, arrival: {rate: 1}, " +
		"dataset: {synthetic: {input_tokens: {mean: 99999999999999}}}}\n"))
	f.Add([]byte("targets:\n  v: {url: http://127.0.0.1:8000/v1, model: m}\nprobes:\n  p: {target: v, arrival: {rate: 1}, " +
		"dataset: {synthetic: {input_tokens: {mean: 1000, stddev: 1048576}, conversation: {turns: {mean: 3, stddev: 1000}}}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := scenarios.Parse(data, "fuzz.yml")
		if err != nil {
			return
		}
		targets, err := Build(cfg)
		if err != nil {
			return // a problem with a field, reported as serve would
		}
		probes := map[string]*scenarios.Probe{}
		for name, p := range cfg.Probes {
			probes[name] = p
		}
		for name, b := range cfg.Bursts {
			probes["burst/"+name] = b.Probe()
		}
		for name, p := range probes {
			if p.Dataset.File != nil {
				continue // files are read as they are sent; the dataset fuzzers cover them
			}
			probe, err := NewProbe(name, p, targets[p.Target], cfg.Global.Seed, record.Shard{})
			if err != nil {
				continue
			}
			for range 2 {
				if pl := probe.plan(); pl.stop {
					t.Fatalf("probe %s: planning stopped: %v", name, pl.err)
				}
			}
		}
	})
}
