package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// datasetScenario is a scenario whose probe has the given arrival and dataset,
// written in dir beside a trace file, trace.jsonl.
func datasetScenario(t *testing.T, arrival, dataset string) (dir string, cfg *Config, err error) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "trace.jsonl"), []byte(`{"timestamp": 0, "input_length": 5}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	y := "targets: {t: {url: http://127.0.0.1:9/v1, model: m}}\nprobes:\n  p:\n    target: t\n"
	if arrival != "" {
		y += "    arrival: " + arrival + "\n"
	}
	y += "    dataset: " + dataset + "\n"
	cfg, err = Parse([]byte(y), filepath.Join(dir, "s.yml"))
	return dir, cfg, err
}

func TestDatasetDefaults(t *testing.T) {
	for _, tc := range []struct {
		name, arrival, dataset string
		want                   File
	}{
		{"trace replays", "", "{file: {path: trace.jsonl, format: mooncake}}",
			File{Format: "mooncake", Timing: TimingReplay, Speedup: 1, BlockSize: 512, OutputTokens: Lengths{Mean: 64}}},
		{"jsonl follows arrival", "{rate: 1}", "{file: {path: trace.jsonl, format: single_turn}}",
			File{Format: "single_turn", Timing: TimingArrival, Speedup: 1, BlockSize: 512, OutputTokens: Lengths{Mean: 64}}},
		{"written values", "{max_concurrency: 4}", "{file: {path: trace.jsonl, format: azure, speedup: 10, block_size: 16, output_tokens: {mean: 0}}}",
			File{Format: "azure", Timing: TimingReplay, Speedup: 10, BlockSize: 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, cfg, err := datasetScenario(t, tc.arrival, tc.dataset)
			if err != nil {
				t.Fatal(err)
			}
			got := *cfg.Probes["p"].Dataset.File
			tc.want.Path = filepath.Join(dir, "trace.jsonl")
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDatasetErrors(t *testing.T) {
	for _, tc := range []struct {
		name, arrival, dataset, want string
	}{
		{"two sources", "{rate: 1}", "{synthetic: {}, prompts: {texts: [hi]}}", "probes.p.dataset: sets synthetic and prompts; keep exactly one source"},
		{"no texts", "{rate: 1}", "{prompts: {texts: []}}", "probes.p.dataset.prompts.texts: must list at least one prompt"},
		{"empty text", "{rate: 1}", `{prompts: {texts: [hi, " "]}}`, "probes.p.dataset.prompts.texts[1]: is empty; remove it or write the prompt"},
		{"prompts output", "{rate: 1}", "{prompts: {texts: [hi], output_tokens: {mean: 0.5}}}", "probes.p.dataset.prompts.output_tokens.mean: must be >= 1 (or 0, with stddev 0, to send no max_tokens), e.g. mean: 64"},
		{"sequences sum", "{rate: 1}", "{synthetic: {sequence_distribution: [{input_tokens: {mean: 64}, output_tokens: {mean: 32}, percent: 70}, {input_tokens: {mean: 256}, output_tokens: {mean: 128}, percent: 20}]}}", "probes.p.dataset.synthetic.sequence_distribution: percents add up to 90; they must add up to 100"},
		{"sequence mean", "{rate: 1}", "{synthetic: {sequence_distribution: [{input_tokens: {mean: 64.5}, output_tokens: {mean: 32}, percent: 100}]}}", "probes.p.dataset.synthetic.sequence_distribution[0].input_tokens.mean: must be a whole number of tokens, not 64.5"},
		{"sequences and ratio", "{rate: 1}", "{synthetic: {sequence_distribution: [{input_tokens: {mean: 64}, output_tokens: {mean: 32}, percent: 100}], range_ratio: {input: 0.1, output: 0.1}}}", "probes.p.dataset.synthetic.range_ratio: cannot be used with sequence_distribution"},
		{"ratio", "{rate: 1}", "{synthetic: {range_ratio: {input: 1, output: 0.1}}}", "probes.p.dataset.synthetic.range_ratio.input: must be 0 to below 1"},
		{"ratio stddev", "{rate: 1}", "{synthetic: {input_tokens: {mean: 100, stddev: 5}, range_ratio: {input: 0.2, output: 0.1}}}", "probes.p.dataset.synthetic.input_tokens.stddev: must be 0 with range_ratio"},
		{"no limit drawn", "{rate: 1}", "{synthetic: {output_tokens: {mean: 0, stddev: 8}}}", "probes.p.dataset.synthetic.output_tokens.mean: must be >= 1 (or 0, with stddev 0, to send no max_tokens)"},
		{"no path", "", "{file: {format: mooncake}}", "probes.p.dataset.file.path: is required: the dataset file, e.g. path: ./conversations.jsonl"},
		{"missing file", "", "{file: {path: nope.jsonl, format: mooncake}}", "probes.p.dataset.file.path: cannot read"},
		{"directory", "", "{file: {path: ., format: mooncake}}", "is not a regular file"},
		{"bad format", "", "{file: {path: trace.jsonl, format: csv}}", `probes.p.dataset.file.format: must be one of azure, baseten, burstgpt, mooncake, multi_turn, random_pool, sharegpt, single_turn, weka_agentx, not "csv"`},
		{"bad timing", "", "{file: {path: trace.jsonl, format: mooncake, timing: live}}", `probes.p.dataset.file.timing: must be replay (the file's timestamps) or arrival (the probe's arrival process), not "live"`},
		{"sharegpt replay", "", "{file: {path: trace.jsonl, format: sharegpt, timing: replay}}", "probes.p.dataset.file.timing: sharegpt files have no timestamps to replay; write timing: arrival"},
		{"speedup zero", "", "{file: {path: trace.jsonl, format: mooncake, speedup: 0}}", "probes.p.dataset.file.speedup: must be > 0"},
		{"speedup with arrival", "{rate: 1}", "{file: {path: trace.jsonl, format: mooncake, timing: arrival, speedup: 2}}", "probes.p.dataset.file.speedup: applies only to timing: replay; remove it"},
		{"block size", "", "{file: {path: trace.jsonl, format: mooncake, block_size: 0}}", "probes.p.dataset.file.block_size: must be >= 1"},
		{"rate with replay", "{rate: 1}", "{file: {path: trace.jsonl, format: mooncake}}", "probes.p.arrival.rate: does not apply when dataset.file.timing is replay"},
		{"arrival needs rate", "", "{file: {path: trace.jsonl, format: mooncake, timing: arrival}}", "probes.p.arrival.rate: must be > 0"},
		{"cancel rate", "{rate: 1}", "{synthetic: {}, cancel: {rate: 1.5, after: 1s}}", "probes.p.dataset.cancel.rate: must be between 0 and 1"},
		{"cancel after", "{rate: 1}", "{synthetic: {}, cancel: {rate: 0.5, after: -1s}}", "probes.p.dataset.cancel.after: must be >= 0"},
		{"offset with arrival", "{rate: 1}", "{file: {path: trace.jsonl, format: mooncake, timing: arrival, start_offset: 1s}}", "probes.p.dataset.file.start_offset: applies only to timing: replay; remove it"},
		{"end before start", "", "{file: {path: trace.jsonl, format: mooncake, start_offset: 2s, end_offset: 1s}}", "probes.p.dataset.file.end_offset: must be at least start_offset (2s)"},
		{"end zero", "", "{file: {path: trace.jsonl, format: mooncake, end_offset: 0s}}", "probes.p.dataset.file.end_offset: must be > 0"},
		{"absolute with start", "", "{file: {path: trace.jsonl, format: mooncake, start_offset: 2s, absolute_timestamps: true}}", "probes.p.dataset.file.absolute_timestamps: cannot be used with start_offset"},
		{"absolute wall clock", "", "{file: {path: trace.jsonl, format: azure, absolute_timestamps: true}}", "probes.p.dataset.file.absolute_timestamps: azure timestamps are wall-clock times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := datasetScenario(t, tc.arrival, tc.dataset)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
}
