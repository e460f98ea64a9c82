package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/collector/gpu"
	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

func TestPrintGPU(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	var out bytes.Buffer
	printGPU(&out, gpu.WindowStats{
		OutputTokens: 10000,
		GPUs: []gpu.GPUStats{{
			GPU: "0", ModelName: "NVIDIA H200", AvgPowerWatts: f(412.5), PeakPowerWatts: f(655),
			EnergyJoules: f(4125), EnergySource: "counter", EnergyPerOutputTokenJoules: f(0.4125),
			AvgGPUUtilPercent: f(87.5), PeakFBUsedMiB: f(120000),
		}},
		Total: gpu.GPUStats{EnergySource: "counter"},
	})
	for _, want := range []string{"J/output tok", "0 NVIDIA H200", "412.5", "655.0", "4125.0", "0.4125", "87.5", "120000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("GPU section lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	printGPU(&out, gpu.WindowStats{})
	if !strings.Contains(out.String(), "no telemetry over the run") {
		t.Errorf("without telemetry the report says %q", out.String())
	}
}

func TestFlagFor(t *testing.T) {
	sc, err := parseBench(t, "--model", "m", "--request-rate", "5", "--concurrency", "3", "--extra-inputs", "stream:true").scenario()
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{
		"probes.bench.arrival.rate":                          "--request-rate",
		"probes.bench.arrival.max_concurrency":               "--concurrency",
		"probes.bench.dataset.synthetic.input_tokens.stddev": "--synthetic-input-tokens-stddev",
		"probes.bench.params.stream":                         "--extra-inputs.stream",
		"targets.bench.url":                                  "--url",
	} {
		if got := sc.flagFor(field); got != want {
			t.Errorf("flagFor(%q) = %q, want %q", field, got, want)
		}
	}
}

// parseBench parses args as `inferprobe bench` would.
func parseBench(t *testing.T, args ...string) *benchFlags {
	t.Helper()
	app := kingpin.New("inferprobe", "")
	f := addBenchFlags(app.Command("bench", ""))
	if _, err := app.Parse(append([]string{"bench"}, args...)); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	f.args = append([]string{"bench"}, args...)
	return f
}

// The two commands of NVIDIA's AIPerf blog post, less the program name.
var (
	blogStatic = []string{"--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--streaming", "--url", "localhost:8000",
		"--synthetic-input-tokens-mean", "128", "--synthetic-input-tokens-stddev", "0", "--output-tokens-mean", "128",
		"--output-tokens-stddev", "0", "--extra-inputs", "min_tokens:128", "--extra-inputs", "ignore_eos:true"}
	blogPoisson = []string{"--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--streaming", "--url", "localhost:8000",
		"--request-rate", "10", "--arrival-pattern", "poisson", "--synthetic-input-tokens-mean", "512",
		"--synthetic-input-tokens-stddev", "128", "--output-tokens-mean", "128", "--output-tokens-stddev", "32",
		"--random-seed", "42", "--request-count", "200"}
)

// TestBenchScenario: flags become a scenario that loads, with the fields
// AIPerf's flags mean.
func TestBenchScenario(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of the generated YAML
	}{
		{"blog static", blogStatic, []string{"url: http://localhost:8000/v1", "concurrency: 1", "ignore_eos: true", "min_tokens: 128", "mean: 128"}},
		{"blog poisson", blogPoisson, []string{"pattern: poisson", "rate: 10", "seed: 42", "stddev: 128", "stddev: 32"}},
		{"goodput", []string{"--model", "m", "--goodput", "time_to_first_token:500 inter_token_latency:50"},
			[]string{"time_to_first_token: 500ms", "inter_token_latency: 50ms"}},
		{"goodput per user and first output token", []string{"--model", "m", "--goodput", "output_token_throughput_per_user:600 time_to_first_output_token:250"},
			[]string{"output_token_throughput_per_user: 600", "time_to_first_output_token: 250ms"}},
		{"url with scheme and path", []string{"--model", "m", "--url", "https://api.example.com/openai/v1"}, []string{"url: https://api.example.com/openai/v1"}},
		{"rate and concurrency cap", []string{"--model", "m", "--request-rate", "5", "--concurrency", "3"}, []string{"max_concurrency: 3"}},
		{"trace replay", []string{"--model", "m", "--input-file", "trace.jsonl", "--custom-dataset-type", "mooncake_trace", "--fixed-schedule"},
			[]string{"format: mooncake", "timing: replay", "path: trace.jsonl"}},
		{"trace alone replays, as in AIPerf", []string{"--model", "m", "--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace"},
			[]string{"timing: replay"}},
		{"trace at a concurrency", []string{"--model", "m", "--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace", "--concurrency", "4"},
			[]string{"timing: arrival", "concurrency: 4"}},
		{"replay with a cap", []string{"--model", "m", "--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace", "--fixed-schedule", "--concurrency", "4"},
			[]string{"timing: replay", "max_concurrency: 4"}},
		{"random pool", []string{"--model", "m", "--input-file", "p.jsonl", "--custom-dataset-type", "random_pool", "--request-rate", "2"},
			[]string{"format: random_pool", "timing: arrival", "rate: 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := parseBench(t, tc.args...).scenario()
			if err != nil {
				t.Fatal(err)
			}
			yml, err := scenarios.Marshal(sc.cfg, sc.written)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(yml), w) {
					t.Errorf("scenario lacks %q:\n%s", w, yml)
				}
			}
			if sc.cfg.Probes["bench"].Dataset.File == nil {
				if err := scenarios.Check(sc.cfg, "bench", sc.written); err != nil {
					t.Errorf("scenario does not check: %v\n%s", err, yml)
				}
				if _, err := scenarios.Parse(yml, "bench"); err != nil {
					t.Errorf("scenario written out does not load: %v\n%s", err, yml)
				}
			}
		})
	}
}

func TestBenchSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "m", "--goodput", "ttft:5"}, `--goodput "ttft:5": want tag:value with tag one of inter_token_latency, output_token_throughput_per_user, request_latency, time_to_first_output_token, time_to_first_token`},
		{[]string{"--model", "m", "--goodput", "output_token_throughput_per_user:0"}, `"0" is not a number of tokens per second > 0`},
		{[]string{"--model", "m", "--goodput", "time_to_first_token:-1"}, "not a number of milliseconds > 0"},
		{[]string{"--model", "m", "--fixed-schedule"}, "--fixed-schedule replays the timestamps of an --input-file"},
		{[]string{"--model", "m", "--input-file", "p.jsonl", "--custom-dataset-type", "random_pool", "--fixed-schedule"}, "--fixed-schedule replays timestamps, which a random_pool does not keep"},
		{[]string{"--model", "m", "--extra-inputs", "novalue"}, "want key:value"},
		{[]string{"--model", "m", "--warmup-request-count=-1"}, "must be >= 0"},
	} {
		_, err := parseBench(t, tc.args...).scenario()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestBenchTokenizer(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value, target string
		notes         int
	}{
		{file, file, 0},            // a local file goes to targets.bench.tokenizer
		{"Qwen/Qwen3-0.6B", "", 1}, // AIPerf's hub name: accepted, ignored, said
	} {
		sc, err := parseBench(t, "--model", "m", "--tokenizer", tc.value).scenario()
		if err != nil {
			t.Fatal(err)
		}
		got := sc.cfg.Targets["bench"].Tokenizer
		if got != tc.target || len(sc.notes) != tc.notes {
			t.Errorf("--tokenizer %s: target tokenizer %q, notes %q; want %q and %d notes", tc.value, got, sc.notes, tc.target, tc.notes)
		}
	}
}

func TestRepeatCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--model", "m", "--api-key", "sk-secret", "--streaming"}, "inferprobe bench --model m --streaming"},
		{[]string{"bench", "--api-key=sk-secret", "-H", "Authorization: Bearer sk-secret", "-H", "X-Team: sre"},
			"inferprobe bench -H 'Authorization: REDACTED' -H 'X-Team: sre'"},
		{[]string{"bench", "--header=X-Api-Key: sk-secret", "--goodput", "time_to_first_token:500 inter_token_latency:50"},
			"inferprobe bench '--header=X-Api-Key: REDACTED' --goodput 'time_to_first_token:500 inter_token_latency:50'"},
	} {
		got := repeatCommand(tc.args)
		if got != tc.want {
			t.Errorf("repeatCommand(%q) =\n %s\nwant\n %s", tc.args, got, tc.want)
		}
		if strings.Contains(got, "sk-secret") {
			t.Errorf("the key leaked: %s", got)
		}
	}
}

func TestDefaultArtifactDir(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{blogStatic, "artifacts/Qwen_Qwen3-0.6B-chat-concurrency1"},
		{blogPoisson, "artifacts/Qwen_Qwen3-0.6B-chat-request_rate10"},
		{[]string{"--model", "m", "--concurrency", "8", "--endpoint-type", "completions"}, "artifacts/m-completions-concurrency8"},
	} {
		if got := defaultArtifactDir(parseBench(t, tc.args...)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.args, got, tc.want)
		}
	}
}

func TestProgressLine(t *testing.T) {
	t0 := time.Unix(0, 0)
	r := report.NewReport()
	for i := range 30 {
		rec := &prober.Record{Seq: uint64(i), Scheduled: t0, Sent: t0, Duration: time.Millisecond}
		if i%10 == 0 {
			rec.Outcome, rec.Reason = prober.OutcomeError, prober.ReasonHTTP5xx
		}
		r.Observe(rec)
	}
	for _, tc := range []struct {
		limit prober.Limit
		want  string
	}{
		{prober.Limit{Requests: 120}, "profiling: 30/120 requests (25%), 3.0 req/s, 3 errors, elapsed 10s, ETA 30s"},
		{prober.Limit{Duration: time.Minute}, "profiling: 30 requests done, 10s of 1m0s, 3.0 req/s, 3 errors, elapsed 10s, ETA 50s"},
	} {
		var out bytes.Buffer
		p := newProgress(&out, progressTTY, "profiling", tc.limit, time.Time{})
		p.start = t0
		p.now = func() time.Time { return t0.Add(10 * time.Second) }
		p.update(r)
		if want := "\r\033[K" + tc.want; out.String() != want {
			t.Errorf("tty progress %q, want %q", out.String(), want)
		}
		out.Reset()
		p.mode, p.lastPlain = progressPlain, t0
		p.update(r)
		if out.String() != tc.want+"\n" {
			t.Errorf("plain progress %q, want %q", out.String(), tc.want+"\n")
		}
	}
}

// TestSaveScenario: the saved file loads as a scenario, with the run as an
// on-demand burst, and carries no secret.
func TestSaveScenario(t *testing.T) {
	t.Setenv("INFERPROBE_API_KEY", "sk-from-env")
	path := filepath.Join(t.TempDir(), "burst.yml")
	f := parseBench(t, append(blogPoisson, "--api-key", "sk-flag-secret", "-H", "Authorization: Bearer sk-header-secret",
		"--goodput", "time_to_first_token:500", "--warmup-request-count", "5", "--save-scenario", path)...)
	sc, err := f.scenario()
	if err != nil {
		t.Fatal(err)
	}
	plan := &finite.Plan{Limit: f.limit(), WarmupLimit: prober.Limit{Requests: uint64(f.warmupRequests)}}
	if err := saveScenario(f, sc, plan); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("secret")) {
		t.Errorf("saved scenario holds a secret:\n%s", b)
	}
	// The header is REDACTED, and a scenario may not set Authorization with a key.
	b = bytes.ReplaceAll(b, []byte("Authorization: REDACTED"), []byte("X-Team: sre"))
	cfg, err := scenarios.Parse(b, path)
	if err != nil {
		t.Fatalf("saved scenario does not load: %v\n%s", err, b)
	}
	burst := cfg.Bursts["bench"]
	if burst == nil || !burst.OnDemand || burst.Requests != 200 || burst.Arrival.Rate != 10 || burst.Warmup.Requests != 5 ||
		time.Duration(burst.SLO.TimeToFirstToken) != 500*time.Millisecond {
		t.Errorf("burst = %+v\n%s", burst, b)
	}
	if len(cfg.Probes) != 0 {
		t.Errorf("saved scenario has probes %v; it should hold only the run, as a burst", cfg.Probes)
	}
}

func TestBaseURL(t *testing.T) {
	for _, tc := range []struct{ raw, endpoint, want string }{
		{"localhost:8000", "chat", "http://localhost:8000/v1"},
		{"http://h:8000/", "completions", "http://h:8000/v1"},
		{"https://h/api/v2", "cohere_rerank", "https://h/api/v2"},
		{"localhost:8080", "tgi", "http://localhost:8080"},
		{"http://tei:80", "tei_rerank", "http://tei:80"},
	} {
		got, err := baseURL(tc.raw, tc.endpoint)
		if err != nil || got != tc.want {
			t.Errorf("baseURL(%q, %s) = %q, %v; want %q", tc.raw, tc.endpoint, got, err, tc.want)
		}
	}
}

// TestBenchLimitsMustEnd: a zero or negative limit would mean "no limit" to
// the prober, and the run would never end; it is a flag error instead.
func TestBenchLimitsMustEnd(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "m", "--request-count", "0"}, "--request-count 0: must be at least 1"},
		{[]string{"--model", "m", "--request-count=-5"}, "--request-count -5: must be at least 1"},
		{[]string{"--model", "m", "--benchmark-duration", "0"}, "--benchmark-duration 0: must be a number of seconds > 0"},
		{[]string{"--model", "m", "--benchmark-duration=-3"}, "--benchmark-duration -3: must be"},
	} {
		var stdout, stderr bytes.Buffer
		code := runBench(nil, &stdout, &stderr, parseBench(t, tc.args...), nil, nil)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestCompareRuleCheckedBeforeRun: a relative rule on a metric the baseline
// lacks is refused before anything is sent, not after the whole run.
func TestCompareRuleCheckedBeforeRun(t *testing.T) {
	base := filepath.Join(t.TempDir(), "base.json")
	if err := os.WriteFile(base, []byte(`{"time_to_first_token":{"unit":"ms","avg":100,"p99":200}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	missing := filepath.Join(t.TempDir(), "nope.json")
	if code := runBench(nil, &stdout, &stderr, parseBench(t, "--model", "m", "--compare", missing), nil, nil); code != 2 ||
		!strings.Contains(stderr.String(), "give the profile_export_inferprobe.json of an earlier run") {
		t.Errorf("missing baseline: exit %d, %q; want exit 2 and what to give", code, stderr.String())
	}
	stderr.Reset()
	f := parseBench(t, "--model", "m", "--compare", base, "--compare-fail", "time_to_first_tokn.p99>10%")
	if code := runBench(nil, &stdout, &stderr, f, nil, nil); code != 2 ||
		!strings.Contains(stderr.String(), "has no time_to_first_tokn.p99; metrics there: time_to_first_token") {
		t.Errorf("exit %d, %q; want exit 2 naming the metrics the baseline has", code, stderr.String())
	}
}

// TestNoCredentialInErrors: flag errors do not echo a header value or a URL
// password, and servers that echo the key do not put it in the artifacts.
func TestNoCredentialInErrors(t *testing.T) {
	_, err := parseBench(t, "--model", "m", "-H", "Authorization Bearer sk-header-secret").scenario()
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "'Name: value'") {
		t.Errorf("-H without a colon: %v", err)
	}
	if _, err := baseURL("http://user:pa ss-secret@host:8000", "chat"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad --url: %v", err)
	}

	f := parseBench(t, "--model", "m", "--api-key", "sk-flag-secret", "-H", "Authorization: Bearer sk-header-secret",
		"-H", "X-Api-Key: xk-other-secret", "-H", "X-Team: sre")
	failed := report.Contribution{Outcome: prober.OutcomeError}
	reqs := []report.RequestRecord{
		{Seq: 0, Contribution: failed, Status: 401, Err: `HTTP 401: {"error":"invalid key sk-flag-secret"}`},
		{Seq: 1, Contribution: failed, Status: 401, Err: `HTTP 401: bad header "Bearer sk-header-secret" and xk-other-secret for sre`},
		{Seq: 2},
	}
	got := export.ScrubErrors(reqs, f.secrets())
	for _, q := range got {
		if strings.Contains(q.Err, "secret") {
			t.Errorf("error message keeps a credential: %s", q.Err)
		}
	}
	if want := `HTTP 401: bad header "REDACTED" and REDACTED for sre`; got[1].Err != want {
		t.Errorf("scrubbed %q, want %q", got[1].Err, want)
	}
}

// TestExportConfigInputFile: input_config's request_count is what the run
// sends: one pass over --input-file, not the default of 10.
func TestExportConfigInputFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := os.WriteFile(file, []byte("{\"text\":\"a\"}\n{\"text\":\"b\"}\n\n{\"text\":\"c\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	requests := func(args ...string) int {
		f := parseBench(t, append([]string{"--model", "m", "--input-file", file}, args...)...)
		sc, err := f.scenario()
		if err == nil {
			err = scenarios.Check(sc.cfg, "bench", sc.written)
		}
		if err != nil {
			t.Fatal(err)
		}
		target, err := prober.NewTarget("bench", sc.cfg.Targets["bench"])
		if err != nil {
			t.Fatal(err)
		}
		plan, err := finite.NewPlan(finite.Spec{Name: "bench", Probe: sc.cfg.Probes["bench"], Target: target, Shard: prober.Shard{Count: 1}, Limit: f.limit()})
		if err != nil {
			t.Fatal(err)
		}
		return f.exportConfig(plan.Limit).RequestCount
	}
	if got := requests(); got != 3 {
		t.Errorf("request_count %d, want the file's 3 requests", got)
	}
	if got := requests("--request-count", "7"); got != 7 {
		t.Errorf("request_count %d, want --request-count's 7", got)
	}
}

// TestProgressNote: a note replaces the live line on a terminal and stands
// on its own line everywhere.
func TestProgressNote(t *testing.T) {
	for mode, want := range map[string]string{progressTTY: "\r\033[Kinterrupted\n", progressPlain: "interrupted\n", progressOff: "interrupted\n"} {
		var out bytes.Buffer
		newProgress(&out, mode, "profiling", prober.Limit{Requests: 1}, time.Time{}).note("interrupted")
		if out.String() != want {
			t.Errorf("%s: %q, want %q", mode, out.String(), want)
		}
	}
}
