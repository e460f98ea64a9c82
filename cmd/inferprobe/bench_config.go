package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/tokenizer"
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

// tokenizerMissing says why path is no tokenizer: err from its stat, or a
// directory where a file was wanted.
func tokenizerMissing(path string, err error) string {
	if err != nil {
		return strings.TrimPrefix(err.Error(), "stat ")
	}
	return path + " is a directory"
}

// builtinTokenizer is AIPerf's tiktoken (o200k_base) tokenizer, which
// inferprobe does not have.
const builtinTokenizer = "builtin"

// benchTokenizer is what --tokenizer names, found once per bench command
// (a sweep's points and a search's steps plan it again).
type benchTokenizer struct {
	path string // the tokenizer.json; "" for none
	note string // what the run should be told, if anything
	err  error
	exit int // bench's exit status for err
}

// tokenizerFile finds the tokenizer.json --tokenizer names: a local file, a
// directory's, or, for a Hugging Face model name that is no local path, the
// model's from the Hugging Face cache, downloaded into it the first time.
// A path that holds no tokenizer and a name the Hub or the settings refuse
// are bad flags; no network or a failing Hub is not.
func (f *benchFlags) tokenizerFile() benchTokenizer {
	if f.tokenizerFound != nil {
		return *f.tokenizerFound
	}
	var bt benchTokenizer
	defer func() { f.tokenizerFound = &bt }()
	if f.tokenizer == "" {
		return bt
	}
	path := f.tokenizer
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "tokenizer.json")
	}
	switch st, err := os.Stat(path); {
	case err == nil && !st.IsDir():
		bt.path = path
		if *f.set["tokenizer-revision"] {
			bt.note = fmt.Sprintf("--tokenizer-revision applies to a Hugging Face model name; --tokenizer %s is a local file, so it is ignored", f.tokenizer)
		}
	case f.tokenizer == builtinTokenizer:
		bt.note = "--tokenizer builtin (AIPerf's tiktoken o200k_base) is ignored: inferprobe has no such tokenizer, so token counts come from the server's usage; give a model's name or its tokenizer.json to count with it"
	case tokenizer.IsHubName(f.tokenizer):
		hub := tokenizer.HubFromEnv(os.Getenv)
		var downloaded bool
		bt.path, downloaded, bt.err = hub.Resolve(context.Background(), f.tokenizer, f.tokenizerRevision)
		switch {
		case bt.err != nil:
			bt.err, bt.exit = fmt.Errorf("--tokenizer %s: %w", f.tokenizer, bt.err), exitCannotRun
			if errors.Is(bt.err, tokenizer.ErrHubRefused) {
				bt.exit = exitUsage
			}
		case downloaded:
			bt.note = fmt.Sprintf("--tokenizer %s: downloaded its tokenizer.json from %s into the Hugging Face cache: %s", f.tokenizer, hub.Endpoint, bt.path)
		default:
			bt.note = fmt.Sprintf("--tokenizer %s: its tokenizer.json from the Hugging Face cache: %s", f.tokenizer, bt.path)
		}
	default:
		bt.err = fmt.Errorf("--tokenizer %s: no tokenizer.json there (%s); give a tokenizer.json file, a directory holding one, or a Hugging Face model name", f.tokenizer, tokenizerMissing(path, err))
		bt.exit = exitUsage
	}
	return bt
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
	bases, err := f.targetURLs()
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
	if *f.set["slice-duration"] {
		if _, err := seconds("--slice-duration", f.sliceDuration); err != nil {
			return nil, err
		}
	}
	t := &scenarios.Target{URL: bases[0], Model: f.model, Endpoint: f.endpointType, Stream: &f.streaming, Timeout: scenarios.Duration(timeout)}
	if len(bases) > 1 {
		t.MoreURLs = bases[1:]
	}
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
			benchTarget + ".template": "--endpoint-type=template (give --extra-inputs payload_template:TEMPLATE and response_field:PATH, or write a template endpoint in a scenario file: inferprobe serve)",
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
	tok := f.tokenizerFile()
	if tok.err != nil {
		return nil, tok.err
	}
	if tok.path != "" {
		t.Tokenizer = tok.path
		b.set(benchTarget+".tokenizer", "--tokenizer")
	}
	if tok.note != "" {
		b.notes = append(b.notes, tok.note)
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
	var tmplSrc, responseField string
	ep, _ := scenarios.LookupEndpoint(f.endpointType)
	for _, kv := range f.extraInputs {
		params, err := extraInputs(kv)
		if err != nil {
			return nil, err
		}
		// A template endpoint's two settings, which AIPerf keeps out of the body.
		if ep.NeedsTemplate {
			if v, ok := params["payload_template"].(string); ok && len(params) == 1 {
				tmplSrc = v
				continue
			}
			if v, ok := params["response_field"].(string); ok && len(params) == 1 {
				responseField = v
				continue
			}
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
	if tmplSrc != "" {
		if err := templateTarget(b.cfg.Targets["bench"], tmplSrc, responseField); err != nil {
			return nil, err
		}
		b.set(benchTarget+".template", "--extra-inputs payload_template")
	}
	return b, nil
}

// templateTarget gives the target AIPerf's payload_template and
// response_field: the whole --url is called, so its path is the template's
// (each --url's, which must agree).
func templateTarget(t *scenarios.Target, src, responseField string) error {
	body, err := scenarios.FromAIPerfPayloadTemplate(src)
	if err != nil {
		return fmt.Errorf("--extra-inputs %w", err)
	}
	if responseField == "" {
		return errors.New("--endpoint-type template: give --extra-inputs response_field:PATH, where the reply keeps its text (e.g. text, or choices[0].text); AIPerf guesses it, bench does not")
	}
	textPath, err := scenarios.TextPathFromJMESPath(responseField)
	if err != nil {
		return fmt.Errorf("--extra-inputs %w", err)
	}
	path, err := originOf(&t.URL)
	if err != nil {
		return err
	}
	t.Template = &scenarios.Template{Path: path, Body: body, TextPath: textPath}
	for i := range t.MoreURLs {
		p, err := originOf(&t.MoreURLs[i])
		if err != nil {
			return err
		}
		if p != path {
			return fmt.Errorf("--endpoint-type template with several --url: their paths differ (%s, %s), and the template calls one", path, p)
		}
	}
	return nil
}

// originOf cuts the path off *raw and returns it, "/" for none.
func originOf(raw *string) (string, error) {
	u, err := url.Parse(*raw)
	if err != nil {
		return "", err
	}
	path := cmp.Or(u.Path, "/")
	u.Path = ""
	*raw = u.String()
	return path, nil
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

// targetURLs are --url's values by AIPerf's conventions (baseURL), each
// path replaced by what comes before the endpoint type's path in --endpoint.
func (f *benchFlags) targetURLs() ([]string, error) {
	var out []string
	for _, raw := range f.urls {
		base, err := f.targetURL(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, base)
	}
	return out, nil
}

// targetURL is one --url value made a target's URL (targetURLs).
func (f *benchFlags) targetURL(raw string) (string, error) {
	base, err := baseURL(raw, f.endpointType)
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
