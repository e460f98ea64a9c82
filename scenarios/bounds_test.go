package scenarios

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestBoundsRefused feeds each bounded field a value past its bound: every
// one is refused with the field, the value and the range, before anything
// is built (the first case used to pass and crash serve).
func TestBoundsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"input tokens", "arrival: {rate: 0.2}", "arrival: {rate: 0.2}\n    dataset: {synthetic: {input_tokens: {mean: 99999999999999}}}",
			"probes.steady.dataset.synthetic.input_tokens.mean: must be at most 1,048,576 tokens (tokens of one prompt, output, prefix or block: 1 to 1,048,576 tokens), not 99999999999999"},
		{"output tokens", "arrival: {rate: 0.2}", "arrival: {rate: 0.2}\n    dataset: {synthetic: {output_tokens: {mean: 1e20}}}",
			"output_tokens.mean: must be at most 1,048,576 tokens"},
		{"stddev", "arrival: {rate: 0.2}", "arrival: {rate: 0.2}\n    dataset: {synthetic: {input_tokens: {mean: 10, stddev: 1e9}}}",
			"input_tokens.stddev: must be at most 1,048,576 tokens"},
		{"rate", "rate: 0.2", "rate: 1e6", "probes.steady.arrival.rate: must be at most 100,000 requests/s (arrival rate: 0 to 100,000 requests/s), not 1000000"},
		{"concurrency", "arrival: {rate: 0.2}", "arrival: {pattern: concurrency, concurrency: 100000000}",
			"probes.steady.arrival.concurrency: must be at most 100,000 requests"},
		{"turns", "arrival: {rate: 0.2}", "arrival: {rate: 0.2}\n    dataset: {synthetic: {conversation: {turns: {mean: 5000}}}}",
			"conversation.turns.mean: must be at most 1,000 turns"},
		{"timeout", "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n    timeout: 10000h\n",
			"targets.qwen.timeout: must be at most 720h0m0s (any duration: 0s to 720h0m0s), not 10000h0m0s"},
		{"min_tokens", "arrival: {rate: 0.2}", "arrival: {rate: 0.2}\n    params: {min_tokens: 99999999}",
			"probes.steady.params.min_tokens: must be at most 1,048,576 tokens"},
		{"burst duration, once", "probes:", "bursts:\n  b: {target: qwen, on_demand: true, duration: 1000h, arrival: {rate: 1}}\nprobes:",
			"bursts.b.duration: must be at most 720h0m0s (any duration: 0s to 720h0m0s), not 1000h0m0s"},
		{"workers", "targets:", "global: {workers: 100000}\ntargets:", "global.workers: must be at most 1,024 workers (worker processes: 1 to 1,024 workers), not 100000"},
		{"memory", "arrival: {rate: 0.2}", "arrival: {pattern: concurrency, concurrency: 100000}\n    dataset: {synthetic: {input_tokens: {mean: 1000000}}}",
			"probes.steady.dataset: would hold about"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One problem, said once: not again through a value derived from it.
			if got := parseError(t, edit(t, tc.old, tc.new)); !strings.Contains(got, tc.want) || strings.Contains(got, "\n") {
				t.Errorf("got\n%s\nwant one problem holding\n%s", got, tc.want)
			}
		})
	}
}

// TestBoundsDocumented checks that docs/configuration.md's table of bounds
// lists every bound with its range as Bounds holds it.
func TestBoundsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range Bounds {
		row := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(b.Quantity) + ` \| ` + regexp.QuoteMeta(b.Range()) + ` \|`)
		if !row.Match(doc) {
			t.Errorf("docs/configuration.md has no row | %s | %s | in its table of bounds", b.Quantity, b.Range())
		}
	}
}
