package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/inferprobe/inferprobe/report/export"
)

// exportConfig is the run's configuration for the artifacts; it never
// carries the API key.
func (f *benchFlags) exportConfig() export.Config {
	base, _ := baseURL(f.url, f.endpointType) // validated before the run
	c := export.Config{
		Model: f.model, EndpointType: f.endpointType, Streaming: f.streaming, URL: base, Seed: f.seed,
		RequestCount: 10, Command: repeatCommand(f.args),
	}
	if n := f.fileRequests(); n > 0 { // one pass over --input-file, as benchProbe sends
		c.RequestCount = int(n)
	}
	if *f.set["request-rate"] {
		c.RequestRate, c.ArrivalPattern = f.requestRate, f.arrivalPattern
	}
	if *f.set["concurrency"] || !*f.set["request-rate"] {
		c.Concurrency = max(f.concurrency, 1)
	}
	switch {
	case *f.set["benchmark-duration"]:
		c.Duration, c.RequestCount = f.duration, 0
	case *f.set["request-count"]:
		c.RequestCount = f.requestCount
	}
	return c
}

var unsafePath = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultArtifactDir is AIPerf's artifacts/MODEL-ENDPOINT-LOAD naming, e.g.
// artifacts/Qwen_Qwen3-0.6B-chat-concurrency1.
func defaultArtifactDir(f *benchFlags) string {
	load := "concurrency" + strconv.Itoa(max(f.concurrency, 1))
	switch {
	case *f.set["request-rate"]:
		load = "request_rate" + strconv.FormatFloat(f.requestRate, 'f', -1, 64)
	case f.replays():
		load = "fixed_schedule"
	}
	return filepath.Join("artifacts", unsafePath.ReplaceAllString(f.model, "_")+"-"+f.endpointType+"-"+load)
}

// sensitiveHeader reports whether a header's value is likely a credential.
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"authorization", "key", "token", "secret", "cookie", "password"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// secrets are the credentials the run sends: the API key and the values of
// credential headers, and the token in each (the key of "Bearer KEY").
func (f *benchFlags) secrets() []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= 4 {
			out = append(out, v)
		}
	}
	add(f.apiKey)
	for _, h := range f.headers {
		name, v, ok := strings.Cut(h, ":")
		if !ok || !sensitiveHeader(name) {
			continue
		}
		add(v)
		for _, w := range strings.Fields(v) {
			if len(w) >= 8 { // not the scheme word (Bearer, Basic)
				add(w)
			}
		}
	}
	return out
}

// repeatCommand is the command line that repeats the run, without the API
// key (it comes from INFERPROBE_API_KEY) and with credential headers
// redacted.
func repeatCommand(args []string) string {
	out := []string{"inferprobe"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--api-key":
			i++
			continue
		case strings.HasPrefix(a, "--api-key="):
			continue
		case a == "-H" || a == "--header":
			if i+1 < len(args) {
				out = append(out, a, shellQuote(redactHeader(args[i+1])))
				i++
				continue
			}
		case strings.HasPrefix(a, "--header="):
			a = "--header=" + redactHeader(strings.TrimPrefix(a, "--header="))
		case strings.HasPrefix(a, "-H") && len(a) > 2:
			a = "-H" + redactHeader(a[2:])
		}
		out = append(out, shellQuote(a))
	}
	return strings.Join(out, " ")
}

func redactHeader(h string) string {
	if name, _, ok := strings.Cut(h, ":"); ok && sensitiveHeader(name) {
		return name + ": REDACTED"
	}
	return h
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,+@%-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// saveScenario writes the run as an on-demand burst named bench, with a
// low-rate probe of the same workload, for inferprobe serve. The API key is read from INFERPROBE_API_KEY there, and
// credential headers are written as REDACTED for the user to fill in.
func saveScenario(f *benchFlags, sp *benchSpec) error {
	target := map[string]any{}
	for k, v := range sp.target {
		target[k] = v
	}
	if _, ok := target["api_key_env"]; ok {
		target["api_key_env"] = "INFERPROBE_API_KEY"
	}
	if h, ok := target["headers"].(map[string]string); ok {
		safe := map[string]string{}
		for k, v := range h {
			if sensitiveHeader(k) {
				v = "REDACTED"
			}
			safe[k] = v
		}
		target["headers"] = safe
	}
	dataset := sp.dataset
	if file, ok := dataset["file"].(map[string]any); ok {
		// Paths in a scenario are relative to the file's directory, not to
		// where bench ran.
		abs, err := filepath.Abs(file["path"].(string))
		if err != nil {
			return err
		}
		copied := map[string]any{}
		for k, v := range file {
			copied[k] = v
		}
		copied["path"] = abs
		dataset = map[string]any{"file": copied}
	}
	if tok, ok := target["tokenizer"].(string); ok {
		abs, err := filepath.Abs(tok)
		if err != nil {
			return err
		}
		target["tokenizer"] = abs
	}
	burst := map[string]any{"target": "bench", "on_demand": true, "arrival": sp.arrival, "dataset": dataset}
	switch {
	case *f.set["benchmark-duration"]:
		burst["duration"] = fmt.Sprintf("%gs", f.duration)
	case *f.set["request-count"]:
		burst["requests"] = f.requestCount
	default:
		burst["requests"] = 10
	}
	if len(sp.params) > 0 {
		burst["params"] = sp.params
	}
	if sp.slo != nil {
		burst["slo"] = sp.slo
	}
	if sp.warmup > 0 {
		burst["warmup"] = map[string]any{"requests": sp.warmup}
	}
	b, err := yaml.Marshal(map[string]any{
		"global":  map[string]any{"seed": f.seed},
		"targets": map[string]any{"bench": target},
		"bursts":  map[string]any{"bench": burst},
	})
	if err != nil {
		return err
	}
	header := "# Written by: " + repeatCommand(f.args) + "\n" +
		"# Burst bench is the run; trigger it with POST /api/v1/bursts/bench (inferprobe serve --web.enable-burst-api),\n" +
		"# or give it a schedule (every: 6h, or a cron expression). Add probes to watch the target between bursts.\n"
	return os.WriteFile(f.saveScenario, append([]byte(header), b...), 0o644)
}

// fileRequests is the default request count of a run from --input-file:
// one pass over the file, as AIPerf sends it. Every line of the single-request
// formats is a request; for multi_turn (sessions of several turns) and
// without a file it is 0, and the default of 10 applies.
func (f *benchFlags) fileRequests() uint64 {
	if f.inputFile == "" || f.datasetType == "multi_turn" {
		return 0
	}
	b, err := os.ReadFile(f.inputFile)
	if err != nil {
		return 0 // the scenario loader has said why already
	}
	var n uint64
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n
}
