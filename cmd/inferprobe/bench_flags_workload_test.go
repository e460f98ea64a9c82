package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

// TestWorkloadFlags: AIPerf's workload flags, under each of their names,
// become the scenario's synthetic workload fields, which check and load.
func TestWorkloadFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		want  []string // substrings of the generated YAML
		notes int
	}{
		{"system prompt", []string{"--system-prompt", "You are terse."}, []string{"system_prompt: You are terse."}, 0},
		{"system prompt on a file", []string{"--system-prompt", "You are terse.", "--input-file", "bench_test.go"}, []string{"system_prompt: You are terse.", "path: bench_test.go"}, 0},
		{"shared system prompt and user context", []string{"--shared-system-prompt-length", "1000", "--user-context-prompt-length", "200", "--num-dataset-entries", "50"},
			[]string{"shared_system_prompt_length: 1000", "user_context_length: 200", "entries: 50"}, 0},
		{"prefix pool", []string{"--prompt-prefix-pool-size", "8", "--prompt-prefix-length", "512"}, []string{"pool_size: 8", "length: 512"}, 0},
		{"prefix pool, GenAI-Perf names", []string{"--num-prefix-prompts", "4", "--prefix-prompt-length", "64"}, []string{"pool_size: 4", "length: 64"}, 0},
		{"prefix length alone is ignored", []string{"--prompt-prefix-length", "64"}, nil, 1},
		{"multi-turn", []string{"--conversation-num", "20", "--conversation-turn-mean", "3", "--conversation-turn-stddev", "1",
			"--conversation-turn-delay-mean", "1500", "--conversation-turn-delay-stddev", "200"},
			[]string{"entries: 20", "mean: 3", "stddev: 1", "mean: 1.5s", "stddev: 200ms"}, 0},
		{"delay ratio", []string{"--conversation-turn-mean", "2", "--conversation-turn-delay-mean", "1000", "--conversation-turn-delay-stddev", "100", "--session-delay-ratio", "0.5"},
			[]string{"mean: 500ms", "stddev: 50ms"}, 0},
		{"multi-turn, session names", []string{"--num-sessions", "5", "--session-turns-mean", "2", "--session-turn-delay-mean", "10"},
			[]string{"entries: 5", "mean: 2", "mean: 10ms"}, 0},
		{"num-dataset-entries sizes the pool, conversation-num the run", []string{"--conversation-num", "5", "--num-prompts", "9"}, []string{"entries: 9"}, 0},
		{"delay without turns is ignored", []string{"--conversation-turn-delay-mean", "100"}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, yml := scenarioYAML(t, append([]string{"--model", "m"}, tc.args...), tc.want)
			if len(sc.notes) != tc.notes {
				t.Errorf("notes %q, want %d", sc.notes, tc.notes)
			}
			checkWritten(t, sc, yml)
		})
	}
}

// TestUserContextEntries: each entry has its own user context, so the
// dataset is a pool, sized as AIPerf sizes it: --num-dataset-entries, else
// --conversation-num, else --request-count, else 100 (AIPerf's command
// line: --shared-system-prompt-length 20 --user-context-prompt-length 10
// --request-count 3).
func TestUserContextEntries(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--request-count", "3"}, 3},
		{nil, aiperfEntries},
		{[]string{"--request-count", "3", "--conversation-num", "5"}, 5},
		{[]string{"--request-count", "3", "--num-dataset-entries", "7"}, 7},
	} {
		args := append([]string{"--model", "m", "--shared-system-prompt-length", "20", "--user-context-prompt-length", "10"}, tc.args...)
		sc, err := parseBench(t, args...).scenario()
		if err == nil {
			err = scenarios.Check(sc.cfg, "bench", sc.written)
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if s := sc.cfg.Probes["bench"].Dataset.Synthetic; s.Entries != tc.want || s.UserContextLength != 10 {
			t.Errorf("%v: %d entries with user context %d, want %d with 10", tc.args, s.Entries, s.UserContextLength, tc.want)
		}
	}
}

// TestWorkloadFlagErrors: a bad combination is reported naming the flag.
func TestWorkloadFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--system-prompt", "hi", "--shared-system-prompt-length", "10"}, "inferprobe bench: --shared-system-prompt-length: cannot be used with dataset.system_prompt"},
		{[]string{"--prompt-prefix-pool-size", "4"}, "inferprobe bench: --prompt-prefix-length: must be 1 to 1,048,576 tokens (per prefix), not 0"},
		{[]string{"--prompt-prefix-pool-size", "4", "--prompt-prefix-length", "8", "--shared-system-prompt-length", "10"}, "--shared-system-prompt-length: cannot be used with prefix"},
		{[]string{"--conversation-turn-mean", "3", "--conversation-turn-delay-mean=-5"}, "--conversation-turn-delay-mean: must be >= 0"},
		{[]string{"--input-file", "p.jsonl", "--num-sessions", "3"}, "--conversation-num shapes synthetic prompts"},
		{[]string{"--system-prompt", "a", "--system-prompt-file", "bench_test.go"}, "--system-prompt-file and --system-prompt both give the system prompt"},
		{[]string{"--system-prompt-file", "no-such-file"}, "--system-prompt-file: open no-such-file: no such file or directory"},
		{[]string{"--conversation-turn-mean", "2", "--conversation-turn-delay-ratio=-1"}, "--conversation-turn-delay-ratio -1: must be >= 0"},
	} {
		f := parseBench(t, append([]string{"--model", "m"}, tc.args...)...)
		sc, err := f.scenario()
		if err == nil {
			err = scenarios.Check(sc.cfg, "bench", sc.written)
		}
		var out bytes.Buffer
		if err == nil || sc.usage(&out, err) != 2 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v: %q, want %q", tc.args, out.String(), tc.want)
		}
	}
}

// TestConversationNumLimit: --conversation-num bounds the run to each
// conversation once, every turn a request; --request-count still wins.
func TestConversationNumLimit(t *testing.T) {
	f := parseBench(t, "--model", "m", "--conversation-num", "40", "--conversation-turn-mean", "4", "--conversation-turn-stddev", "2", "--random-seed", "3")
	sc, err := f.scenario()
	if err != nil {
		t.Fatal(err)
	}
	want := dataset.SessionRequests(*sc.cfg.Probes["bench"].Dataset.Synthetic, 3, dataset.Component("bench"), 40)
	if got := f.limit().Requests; got != want || got < 40*2 {
		t.Errorf("limit %d requests, want the %d turns of the 40 conversations", got, want)
	}
	// From a pool of 7: the turns of the 40 conversations drawn from it.
	f = parseBench(t, "--model", "m", "--conversation-num", "40", "--num-dataset-entries", "7", "--conversation-turn-mean", "4", "--conversation-turn-stddev", "2", "--random-seed", "3")
	if sc, err = f.scenario(); err != nil {
		t.Fatal(err)
	}
	want = dataset.SessionRequests(*sc.cfg.Probes["bench"].Dataset.Synthetic, 3, dataset.Component("bench"), 40)
	if got := f.limit().Requests; got != want || sc.cfg.Probes["bench"].Dataset.Synthetic.Entries != 7 {
		t.Errorf("limit %d requests, want the %d turns of 40 conversations drawn from a pool of 7", got, want)
	}
	if got := parseBench(t, "--model", "m", "--conversation-num", "40", "--request-count", "7").limit().Requests; got != 7 {
		t.Errorf("limit %d requests with --request-count 7", got)
	}
	pool := parseBench(t, "--model", "m", "--input-file", "bench_test.go", "--custom-dataset-type", "random_pool", "--num-conversations", "12")
	if _, err := pool.scenario(); err != nil || pool.limit().Requests != 12 {
		t.Errorf("random_pool with --num-conversations 12: %v, limit %d requests; want 12", err, pool.limit().Requests)
	}
	if got := parseBench(t, "--model", "m", "--num-dataset-entries", "40").limit().Requests; got != 0 {
		t.Errorf("--num-dataset-entries alone limits the run to %d requests; want the default", got)
	}
}

// TestSystemPromptFile: the file's text is the system prompt, verbatim.
func TestSystemPromptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "system.txt")
	if err := os.WriteFile(path, []byte("You are terse.\nAnswer in one line.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := parseBench(t, "--model", "m", "--system-prompt-file", path).scenario()
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.cfg.Probes["bench"].Dataset.SystemPrompt; got != "You are terse.\nAnswer in one line.\n" {
		t.Errorf("system prompt %q", got)
	}
	if got := sc.flagFor(benchProbe + ".dataset.system_prompt"); got != "--system-prompt-file" {
		t.Errorf("flag of the system prompt %q", got)
	}
}
