package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

// TestBenchWorkload runs AIPerf's multi-turn prefix-cache workload flags
// against the simulator: --conversation-num conversations are each sent
// once (every turn a request), each turn's input is the shared system
// prompt, the user's context and the conversation so far, and the same
// seed sends the same sequence.
func TestBenchWorkload(t *testing.T) {
	url := startBlogSimulator(t)
	const conversations, system, context, isl, osl = 6, 64, 16, 32, 8
	run := func() (string, []float64) {
		work := t.TempDir()
		code, out := benchIn(t, work, "--model", blogModel, "--url", url, "--streaming", "--concurrency", "3",
			"--conversation-num", strconv.Itoa(conversations), "--conversation-turn-mean", "3", "--conversation-turn-stddev", "1",
			"--conversation-turn-delay-mean", "20", "--shared-system-prompt-length", strconv.Itoa(system),
			"--user-context-prompt-length", strconv.Itoa(context), "--isl", strconv.Itoa(isl), "--osl", strconv.Itoa(osl),
			"--extra-inputs", "ignore_eos:true", "--random-seed", "5", "--artifact-dir", "out")
		if code != 0 {
			t.Fatalf("bench exited %d:\n%s", code, out)
		}
		m := digestLine.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no digest line:\n%s", out)
		}
		want := dataset.SessionRequests(scenarios.Synthetic{Entries: conversations, Conversation: &scenarios.Conversation{Turns: scenarios.Lengths{Mean: 3, Stddev: 1}}},
			5, dataset.Component("bench"), conversations)
		if m[2] != strconv.FormatUint(want, 10) || !strings.Contains(out, m[2]+" ok, 0 errors") {
			t.Fatalf("sent %s requests, want the %d turns of the %d conversations, all ok:\n%s", m[2], want, conversations, out)
		}
		b, err := os.ReadFile(filepath.Join(work, "out", "profile_export.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var isls []float64
		for line := range strings.Lines(string(b)) {
			var rec struct {
				Metrics struct {
					// The server's count: the simulator's, of every message's words.
					UsagePromptTokens struct {
						Value float64 `json:"value"`
					} `json:"usage_prompt_tokens"`
				} `json:"metrics"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			isls = append(isls, rec.Metrics.UsagePromptTokens.Value)
		}
		return m[1], isls
	}
	digest, isls := run()
	// The simulator counts the words of every message: turn k (from 0)
	// carries k earlier user turns and k stand-in answers.
	later := 0
	for _, v := range isls {
		k := (v - system - context - isl) / (isl + osl)
		if k < 0 || k != float64(int(k)) {
			t.Fatalf("input of %v tokens is not system %d + context %d + k×(%d + %d) + %d", v, system, context, isl, osl, isl)
		}
		if k > 0 {
			later++
		}
	}
	if later != len(isls)-conversations {
		t.Fatalf("%d of %d requests carry history, want all but the %d first turns", later, len(isls), conversations)
	}
	if again, _ := run(); again != digest {
		t.Errorf("the same seed gave digests %s and %s", digest, again)
	}
}
