package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

// The names bench gives its one target and its one probe in the scenario it builds.
const (
	benchTarget = "targets.bench"
	benchProbe  = "probes.bench"
)

// benchScenario is the run the flags describe, as a scenario of one target
// and one probe, both named bench, so that it is validated exactly as a
// probe would be — and which flag set each field, so that a problem names
// what the user typed.
type benchScenario struct {
	cfg     *scenarios.Config
	written []string          // the fields set, for scenarios.Check and Marshal
	flags   map[string]string // field path → the flag behind it
	notes   []string          // flags accepted but not used, said once before the run
}

// set records that flag set the field at path.
func (b *benchScenario) set(path, flag string) {
	b.written = append(b.written, path)
	b.flags[path] = flag
}

// flagFor names the flag behind a field: that of the field or of its
// nearest recorded parent, with the rest of the path (--extra-inputs.stream).
func (b *benchScenario) flagFor(field string) string {
	for p := field; p != ""; p = p[:max(strings.LastIndexByte(p, '.'), 0)] {
		if flag, ok := b.flags[p]; ok {
			return flag + strings.TrimPrefix(field, p)
		}
	}
	return field
}

// usage prints err, a problem with the flags, naming the flag of each
// field it is about, and returns bench's usage exit status.
func (b *benchScenario) usage(stderr io.Writer, err error) int {
	var errs scenarios.Errors
	if b == nil || !errors.As(err, &errs) {
		fmt.Fprintf(stderr, "inferprobe bench: %v\n", err)
		return 2
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "inferprobe bench: %s: %s\n", b.flagFor(e.Field), e.Msg)
	}
	return 2
}

// hubName is a Hugging Face model name (namespace/name or name), which a
// --tokenizer that is not a local file or directory may be, as in AIPerf;
// anything else is a path.
var hubName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?$`)

// tokenizerMissing says why path is no tokenizer: err from its stat, or a
// directory where a file was wanted.
func tokenizerMissing(path string, err error) string {
	if err != nil {
		return strings.TrimPrefix(err.Error(), "stat ")
	}
	return path + " is a directory"
}

// apiKeyEnv carries --api-key to the scenario, which takes keys only from
// files or the environment, so the key never lands in a generated file.
const apiKeyEnv = "INFERPROBE_BENCH_API_KEY"

// scenario builds the scenario the flags describe. Its errors are about a
// flag and name it.
func (f *benchFlags) scenario() (*benchScenario, error) {
	if f.inputFile != "" && !*f.set["custom-dataset-type"] {
		f.datasetFormat = dataset.Detect(f.inputFile) // as AIPerf, from the file
	}
	// Two flags fill each mean, so neither can carry a kingpin default.
	// Without an output length no limit is sent (mean 0), as AIPerf.
	if !*f.set["synthetic-input-tokens-mean"] && !*f.set["isl"] {
		f.islMean = 550
	}
	base, err := f.targetURL()
	if err != nil {
		return nil, err
	}
	notes := slices.Clone(f.notes)
	// As AIPerf does, --streaming is turned off for an API that does not stream.
	if e, _ := scenarios.LookupEndpoint(f.endpointType); f.streaming && !e.Streams {
		f.streaming = false
		notes = append(notes, fmt.Sprintf("--streaming is off: endpoint type %s does not stream", f.endpointType))
	}
	timeout, err := seconds("--request-timeout-seconds", f.timeout)
	if err != nil {
		return nil, err
	}
	t := &scenarios.Target{URL: base, Model: f.model, Endpoint: f.endpointType, Stream: &f.streaming, Timeout: scenarios.Duration(timeout)}
	// AIPerf has only a request timeout: a stream may be silent as long.
	t.StallTimeout = t.Timeout
	if *f.set["stall-timeout-seconds"] {
		stall, err := seconds("--stall-timeout-seconds", f.stallTimeout)
		if err != nil {
			return nil, err
		}
		t.StallTimeout = scenarios.Duration(stall)
	}
	p := &scenarios.Probe{Target: "bench"}
	b := &benchScenario{
		cfg: &scenarios.Config{
			Global:  scenarios.Global{Seed: f.seed},
			Targets: map[string]*scenarios.Target{"bench": t},
			Probes:  map[string]*scenarios.Probe{"bench": p},
		},
		flags: map[string]string{
			// Not a field bench sets, but where a template endpoint fails.
			benchTarget + ".template": "--endpoint-type=template (a template endpoint needs a scenario file: use inferprobe serve or check-config)",
		},
		notes: notes,
	}
	b.set("global.seed", "--random-seed")
	b.set(benchTarget+".url", "--url")
	b.set(benchTarget+".model", "--model")
	b.set(benchTarget+".endpoint", "--endpoint-type")
	b.set(benchTarget+".stream", "--streaming")
	b.set(benchTarget+".timeout", "--request-timeout-seconds")
	b.set(benchTarget+".stall_timeout", "--stall-timeout-seconds")
	if *f.set["keep-alive"] {
		t.KeepAlive = &f.keepAlive
		b.set(benchTarget+".keep_alive", "--keep-alive")
	}
	if f.sessionHeader != "" {
		t.SessionHeader = f.sessionHeader
		b.set(benchTarget+".session_header", "--session-header")
	}
	if *f.set["request-ids"] {
		t.RequestIDs = &f.requestIDs
		b.set(benchTarget+".request_ids", "--request-ids")
	}
	if !f.server.on { // --save-scenario's burst reads none either
		t.ServerMetrics = scenarios.ServerMetricsOff
		b.set(benchTarget+".server_metrics", "--no-server-metrics")
	}
	b.set(benchProbe+".target", "--model")
	if f.apiKey != "" {
		if err := os.Setenv(apiKeyEnv, f.apiKey); err != nil {
			return nil, err
		}
		t.APIKeyEnv = apiKeyEnv
		b.set(benchTarget+".api_key_env", "--api-key")
	}
	if len(f.headers) > 0 {
		t.Headers = map[string]string{}
		for i, kv := range f.headers {
			// AIPerf takes a JSON object of headers too.
			var obj map[string]string
			if strings.HasPrefix(strings.TrimSpace(kv), "{") {
				if err := json.Unmarshal([]byte(kv), &obj); err != nil {
					return nil, fmt.Errorf("-H (header %d of %d) is not a JSON object of strings; write it as 'Name: value', or '{\"Name\": \"value\"}'", i+1, len(f.headers))
				}
			} else if k, v, ok := strings.Cut(kv, ":"); ok {
				obj = map[string]string{k: v}
			} else {
				// The value is not echoed: it is likely a credential.
				return nil, fmt.Errorf("-H (header %d of %d) has no ':'; write it as 'Name: value', e.g. -H 'X-Team: sre'", i+1, len(f.headers))
			}
			for k, v := range obj {
				t.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		b.set(benchTarget+".headers", "-H")
	}
	if f.tokenizer != "" {
		// AIPerf takes a hub name and downloads it; we read only local
		// files: a tokenizer.json, or a directory holding one.
		path := f.tokenizer
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			path = filepath.Join(path, "tokenizer.json")
		}
		switch st, err := os.Stat(path); {
		case err == nil && !st.IsDir():
			t.Tokenizer = path
			b.set(benchTarget+".tokenizer", "--tokenizer")
		case hubName.MatchString(f.tokenizer) && !strings.HasSuffix(f.tokenizer, ".json") && !strings.Contains(f.tokenizer, ".."):
			b.notes = append(b.notes, fmt.Sprintf("--tokenizer %s is a Hugging Face model name, not a tokenizer.json file here nor a directory holding one, so it is ignored (inferprobe downloads nothing): token counts come from the server's usage", f.tokenizer))
		default:
			return nil, fmt.Errorf("--tokenizer %s: no tokenizer.json there (%s); give a tokenizer.json file or a directory holding one", f.tokenizer, tokenizerMissing(path, err))
		}
	}
	if err := f.arrival(b, &p.Arrival); err != nil {
		return nil, err
	}
	if err := f.dataset(b, &p.Dataset); err != nil {
		return nil, err
	}
	if err := f.load.apply(f, b); err != nil {
		return nil, err
	}
	for _, kv := range f.extraInputs {
		params, err := extraInputs(kv)
		if err != nil {
			return nil, err
		}
		if p.Params == nil {
			p.Params = map[string]any{}
			b.set(benchProbe+".params", "--extra-inputs")
		}
		maps.Copy(p.Params, params)
	}
	if err := parseGoodput(f.goodput, b, &p.SLO); err != nil {
		return nil, err
	}
	return b, nil
}

// extraInputs reads one --extra-inputs value: key:value, or a JSON object.
// YAML reads JSON as JSON means it, and whole numbers as integers, as a
// scenario file's params are read.
func extraInputs(kv string) (map[string]any, error) {
	if strings.HasPrefix(strings.TrimSpace(kv), "{") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(kv), &obj); err != nil || !json.Valid([]byte(kv)) {
			return nil, fmt.Errorf(`--extra-inputs %q is not a JSON object; write e.g. '{"temperature": 0.7}', or key:value`, kv)
		}
		return obj, nil
	}
	k, v, ok := strings.Cut(kv, ":")
	if !ok || k == "" {
		return nil, fmt.Errorf(`--extra-inputs %q: want key:value, e.g. ignore_eos:true, or a JSON object, e.g. '{"temperature": 0.7}'`, kv)
	}
	var parsed any = v
	if json.Valid([]byte(v)) {
		if err := yaml.Unmarshal([]byte(v), &parsed); err != nil {
			parsed = v
		}
	}
	return map[string]any{k: parsed}, nil
}

// targetURL is --url by AIPerf's conventions (baseURL), its path replaced
// by what comes before the endpoint type's path in --endpoint.
func (f *benchFlags) targetURL() (string, error) {
	base, err := baseURL(f.url, f.endpointType)
	if err != nil || f.customEndpoint == "" {
		return base, err
	}
	e, _ := scenarios.LookupEndpoint(f.endpointType)
	prefix, ok := strings.CutSuffix(f.customEndpoint, e.Path)
	if !ok && e.StreamPath != "" {
		prefix, ok = strings.CutSuffix(f.customEndpoint, e.StreamPath)
	}
	if !ok || e.Path == "" {
		return "", fmt.Errorf("--endpoint %s does not end in %q, the path of --endpoint-type %s; bench calls --url's path followed by it, so give --endpoint PREFIX%s, or describe another API with a template endpoint in a scenario file (inferprobe serve)", f.customEndpoint, e.Path, f.endpointType, e.Path)
	}
	u, _ := url.Parse(base) // baseURL made it
	u.Path = strings.TrimSuffix(prefix, "/")
	return u.String(), nil
}
