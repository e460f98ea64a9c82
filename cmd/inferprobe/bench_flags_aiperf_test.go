package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

// TestAIPerfValues: AIPerf's spellings and list forms reach the scenario
// as AIPerf means them.
func TestAIPerfValues(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 10, "output_length": 5}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		check func(*testing.T, *benchFlags, *benchScenario)
	}{
		{[]string{"--extra-inputs", `{"temperature": 0.7, "seed": 5}`}, func(t *testing.T, _ *benchFlags, b *benchScenario) {
			if got, want := b.cfg.Probes["bench"].Params, map[string]any{"temperature": 0.7, "seed": 5}; !reflect.DeepEqual(got, want) {
				t.Errorf("params %#v, want %#v", got, want)
			}
		}},
		{[]string{"--extra-inputs", "temperature:0.7", "top_p:0.9", "--concurrency", "2", "--extra-inputs", "ignore_eos:true"}, func(t *testing.T, _ *benchFlags, b *benchScenario) {
			if got, want := b.cfg.Probes["bench"].Params, map[string]any{"temperature": 0.7, "top_p": 0.9, "ignore_eos": true}; !reflect.DeepEqual(got, want) {
				t.Errorf("params %#v, want %#v", got, want)
			}
		}},
		{[]string{"-H", `{"X-A": "1", "X-B": "2"}`, "--header", "X-C:3", "X-D: 4"}, func(t *testing.T, _ *benchFlags, b *benchScenario) {
			if got, want := b.cfg.Targets["bench"].Headers, map[string]string{"X-A": "1", "X-B": "2", "X-C": "3", "X-D": "4"}; !reflect.DeepEqual(got, want) {
				t.Errorf("headers %v, want %v", got, want)
			}
		}},
		{[]string{"--goodput", "time_to_first_token:500", "request_latency:2000"}, func(t *testing.T, _ *benchFlags, b *benchScenario) {
			if slo := b.cfg.Probes["bench"].SLO; slo.TimeToFirstToken == 0 || slo.RequestLatency == 0 {
				t.Errorf("SLO %+v: want both", slo)
			}
		}},
		{[]string{"--endpoint-type", "nim-rankings"}, endpointIs("nim_ranking")},
		{[]string{"--endpoint-type", "HF_TEI_RANKINGS"}, endpointIs("tei_rerank")},
		{[]string{"--endpoint-type", "huggingface-generate", "--streaming"}, endpointIs("tgi")},
		{[]string{"--endpoint-type", "tei_rerank"}, endpointIs("tei_rerank")},
		{[]string{"--endpoint-type", "nim-embeddings", "--streaming"}, func(t *testing.T, f *benchFlags, b *benchScenario) {
			if tg := b.cfg.Targets["bench"]; tg.Endpoint != "embeddings" || tg.Streaming() || len(b.notes) != 1 || !strings.Contains(b.notes[0], "--streaming is off") {
				t.Errorf("endpoint %s, streaming %v, notes %q: want embeddings, off, with a note", tg.Endpoint, tg.Streaming(), b.notes)
			}
		}},
		{[]string{"--input-file", trace, "--custom-dataset-type", "mooncake-trace"}, fileIs(dataset.FormatMooncake, scenarios.TimingReplay)},
		{[]string{"--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--no-fixed-schedule"}, fileIs(dataset.FormatMooncake, scenarios.TimingArrival)},
		{[]string{"--input-file", trace, "--custom-dataset-type", "burst-gpt-trace", "--concurrency", "2"}, fileIs(dataset.FormatBurstGPT, scenarios.TimingArrival)},
		{[]string{"--input-file", trace, "--custom-dataset-type", "single-turn", "--fixed-schedule"}, fileIs(dataset.FormatSingleTurn, scenarios.TimingReplay)},
		{[]string{"--tokenizer", dir}, func(t *testing.T, _ *benchFlags, b *benchScenario) {
			if got := b.cfg.Targets["bench"].Tokenizer; got != filepath.Join(dir, "tokenizer.json") {
				t.Errorf("tokenizer %q, want the directory's tokenizer.json", got)
			}
		}},
		{[]string{"--endpoint", "/my-api/v2/chat/completions", "--url", "host:9000"}, urlIs("http://host:9000/my-api/v2")},
		{[]string{"--custom-endpoint", "/v1/embeddings", "--endpoint-type", "embeddings"}, urlIs("http://localhost:8000/v1")},
		// Several URLs, after one flag or with it repeated (AIPerf's
		// multi-URL tutorial), each by the conventions of one.
		{[]string{"--url", "h1:8000", "http://h2:8000/v1/chat/completions"}, urlsAre("http://h1:8000/v1", "http://h2:8000/v1")},
		{[]string{"--url", "h1:8000", "-u", "h2:8000", "--url", "h3:8000"}, urlsAre("http://h1:8000/v1", "http://h2:8000/v1", "http://h3:8000/v1")},
		{[]string{"--endpoint", "/api/v1/chat/completions", "--url", "h1", "h2"}, urlsAre("http://h1/api/v1", "http://h2/api/v1")},
		{[]string{"--url", "h1:8000"}, urlsAre("http://h1:8000/v1")},
		{[]string{"--num-requests", "7", "--num-warmup-requests", "2", "--isl-stddev", "3", "--osl-stddev", "4", "--prompt-input-tokens-mean", "100", "--prompt-output-tokens-mean", "50"}, func(t *testing.T, f *benchFlags, b *benchScenario) {
			syn := b.cfg.Probes["bench"].Dataset.Synthetic
			if f.limit().Requests != 7 || f.warmupRequests != 2 || syn.InputTokens.Mean != 100 || syn.InputTokens.Stddev != 3 || syn.OutputTokens.Mean != 50 || syn.OutputTokens.Stddev != 4 {
				t.Errorf("limit %+v, warmup %d, lengths %+v", f.limit(), f.warmupRequests, syn)
			}
		}},
		{[]string{"--ui", "none", "--log-level", "WARNING"}, func(t *testing.T, f *benchFlags, _ *benchScenario) {
			if f.progress != "off" || f.logLevel.String() != "warn" {
				t.Errorf("progress %q, log level %q; want off and warn", f.progress, f.logLevel)
			}
		}},
		{[]string{"-vv", "--ui-type", "simple"}, func(t *testing.T, f *benchFlags, _ *benchScenario) {
			if f.progress != "plain" || f.logLevel.String() != "debug" {
				t.Errorf("progress %q, log level %q; want plain and debug", f.progress, f.logLevel)
			}
		}},
		{[]string{"--connection-reuse-strategy", "never", "--request-rate-mode", "constant", "--request-rate", "2"}, func(t *testing.T, _ *benchFlags, b *benchScenario) {
			if ka := b.cfg.Targets["bench"].KeepAlive; ka == nil || *ka || b.cfg.Probes["bench"].Arrival.Pattern != scenarios.ArrivalConstant {
				t.Errorf("keep_alive %v, arrival %+v: want false, constant", ka, b.cfg.Probes["bench"].Arrival)
			}
		}},
		{[]string{"--no-gpu-telemetry"}, func(t *testing.T, f *benchFlags, _ *benchScenario) {
			if v := f.cmd.GetFlag("collector.gpu").Model().Value.String(); v != "false" {
				t.Errorf("--collector.gpu %s, want false", v)
			}
		}},
		// URLs are DCGM exporter endpoints, normalised as AIPerf does; alone,
		// they do not ask for this host's GPUs.
		{[]string{"--gpu-telemetry", "http://node1:9400", "node2:9401/metrics"}, func(t *testing.T, f *benchFlags, _ *benchScenario) {
			if want := []string{"http://node1:9400/metrics", "http://node2:9401/metrics"}; !slices.Equal(f.gpuURLs, want) || f.asksLocalGPUs() || len(f.notes) != 0 {
				t.Errorf("URLs %q, local asked %v, notes %q; want %q, false, none", f.gpuURLs, f.asksLocalGPUs(), f.notes, want)
			}
		}},
		{[]string{"--gpu-telemetry", "pynvml", "node1:9400"}, func(t *testing.T, f *benchFlags, _ *benchScenario) {
			if len(f.gpuURLs) != 1 || !f.asksLocalGPUs() {
				t.Errorf("URLs %q, local asked %v; want one URL and this host's GPUs", f.gpuURLs, f.asksLocalGPUs())
			}
		}},
		{[]string{"--gpu-telemetry", "dashboard", "gpus.csv"}, func(t *testing.T, f *benchFlags, _ *benchScenario) {
			if v := f.cmd.GetFlag("collector.gpu.fields-file").Model().Value.String(); v != "gpus.csv" || len(f.notes) != 1 {
				t.Errorf("--collector.gpu.fields-file %q, notes %q: want gpus.csv and a note on dashboard", v, f.notes)
			}
		}},
	} {
		f := parseBench(t, append([]string{"--model-names", "m"}, tc.args...)...)
		b, err := f.scenario()
		if err == nil {
			err = scenarios.Check(b.cfg, "bench", b.written)
		}
		if err != nil {
			t.Errorf("bench %v: %v", tc.args, err)
			continue
		}
		tc.check(t, f, b)
	}
}

func endpointIs(want string) func(*testing.T, *benchFlags, *benchScenario) {
	return func(t *testing.T, _ *benchFlags, b *benchScenario) {
		if got := b.cfg.Targets["bench"].Endpoint; got != want {
			t.Errorf("endpoint %q, want %q", got, want)
		}
	}
}

func fileIs(format, timing string) func(*testing.T, *benchFlags, *benchScenario) {
	return func(t *testing.T, _ *benchFlags, b *benchScenario) {
		if file := b.cfg.Probes["bench"].Dataset.File; file.Format != format || file.Timing != timing {
			t.Errorf("file %s, %s; want %s, %s", file.Format, file.Timing, format, timing)
		}
	}
}

// urlsAre wants the target's URL to be want[0] and its MoreURLs the rest.
func urlsAre(want ...string) func(*testing.T, *benchFlags, *benchScenario) {
	return func(t *testing.T, _ *benchFlags, b *benchScenario) {
		tg := b.cfg.Targets["bench"]
		if got := append([]string{tg.URL}, tg.MoreURLs...); !slices.Equal(got, want) {
			t.Errorf("urls %q, want %q", got, want)
		}
	}
}

func urlIs(want string) func(*testing.T, *benchFlags, *benchScenario) {
	return func(t *testing.T, _ *benchFlags, b *benchScenario) {
		if got := b.cfg.Targets["bench"].URL; got != want {
			t.Errorf("url %q, want %q", got, want)
		}
	}
}

// TestAIPerfRefusals: what bench cannot do is refused in one line that
// says what to do instead.
func TestAIPerfRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "m", "--public-dataset", "sharegpt", "--reset-kv-cache"}, "--public-dataset is an AIPerf option that inferprobe does not support: " + whyDownload + " (nor does it support --reset-kv-cache)"},
		{[]string{"--model", "m", "--endpoint-type", "image-generation"}, "--endpoint-type image-generation is an AIPerf endpoint type that inferprobe does not support: " + whyModality},
		{[]string{"--model", "m", "--custom-dataset-type", "speed_bench_coding"}, "--custom-dataset-type speed_bench_coding is an AIPerf dataset type that inferprobe does not support: " + whySpeedBench},
		{[]string{"--model", "m", "--endpoint-type", "nope"}, `--endpoint-type "nope": want one of chat, `},
		{[]string{"--model-names", "a,b"}, "--model a,b names several models: " + whyOneModel},
		{[]string{"--model", "a", "b"}, "--model a b: " + whyOneModel},
		{[]string{"-m", "a", "--model", "b"}, "--model a b: " + whyOneModel},
		{[]string{"--model", "m", "--concurrency", "2", "4"}, "unexpected argument '4' after --concurrency, which takes one value"},
		{[]string{"--concurrency", "2"}, "--model is required"},
		{[]string{"--model", "m", "--streaming", "x"}, "unexpected argument 'x' after --streaming, which takes no value"},
		{[]string{"--model", "m", "--gpu-telemetry", "amdsmi"}, "--gpu-telemetry amdsmi: inferprobe reads NVIDIA GPUs only"},
		{[]string{"--model", "m", "--connection-reuse-strategy", "sticky-user-sessions"}, "--connection-reuse-strategy sticky-user-sessions is an AIPerf connection reuse strategy that inferprobe does not support"},
	} {
		app, _ := benchApp()
		_, err := app.Parse(append([]string{"bench"}, tc.args...))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("bench %v: error %v, want %q", tc.args, err, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--endpoint", "/v1/completions"}, `--endpoint /v1/completions does not end in "/chat/completions"`},
		{[]string{"--request-rate", "2", "--arrival-pattern", "concurrency-burst"}, "--arrival-pattern concurrency-burst sends at --concurrency without a rate"},
	} {
		_, err := parseBench(t, append([]string{"--model", "m"}, tc.args...)...).scenario()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("bench %v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
