package scenarios

import (
	"strings"
	"testing"
)

// rankingScenario is the valid scenario with a nim_ranking target and its
// probe's synthetic dataset.
func rankingScenario(t *testing.T, synthetic string) string {
	t.Helper()
	s := edit(t, "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n    endpoint: nim_ranking\n")
	return strings.Replace(s, "    arrival: {rate: 0.2}\n", "    arrival: {rate: 0.2}\n    dataset: {synthetic: "+synthetic+"}\n", 1)
}

// Unwritten fields take AIPerf's defaults: 10 passages of 128 tokens and
// a query of 32.
func TestRankingsDefaults(t *testing.T) {
	c, err := Parse([]byte(rankingScenario(t, "{rankings: {passages: {mean: 3, stddev: 1}}}")), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	got := *c.Probes["steady"].Dataset.Synthetic.Rankings
	want := Rankings{Passages: Lengths{Mean: 3, Stddev: 1}, PassageTokens: Lengths{Mean: 128}, QueryTokens: Lengths{Mean: 32}}
	if got != want {
		t.Errorf("rankings %+v, want %+v", got, want)
	}
	c, err = Parse([]byte(rankingScenario(t, "{rankings: {}}")), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	if got := *c.Probes["steady"].Dataset.Synthetic.Rankings; got != (Rankings{Passages: Lengths{Mean: 10}, PassageTokens: Lengths{Mean: 128}, QueryTokens: Lengths{Mean: 32}}) {
		t.Errorf("rankings: {} gave %+v, want AIPerf's defaults", got)
	}
}

func TestRankingsRefused(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"chat target", strings.Replace(rankingScenario(t, "{rankings: {}}"), "    endpoint: nim_ranking\n", "", 1),
			"probes.steady.dataset.synthetic.rankings: applies only to a ranking endpoint (cohere_rerank, nim_ranking, tei_rerank); target qwen is chat"},
		{"fractional count", rankingScenario(t, "{rankings: {passages: {mean: 2.5}}}"), "rankings.passages.mean: must be a whole number, not 2.5"},
		{"no passages", rankingScenario(t, "{rankings: {passages: {mean: 0}}}"), "rankings.passages.mean: must be >= 1"},
		{"too many passages", rankingScenario(t, "{rankings: {passages: {mean: 20000}}}"), "rankings.passages.mean: must be at most 10,000 passages"},
		{"long query", rankingScenario(t, "{rankings: {query_tokens: {mean: 2000000}}}"), "rankings.query_tokens.mean: must be at most 1,048,576 tokens"},
		{"negative stddev", rankingScenario(t, "{rankings: {passage_tokens: {mean: 8, stddev: -1}}}"), "rankings.passage_tokens.stddev: must be >= 0"},
		{"with a conversation", rankingScenario(t, "{rankings: {}, conversation: {turns: {mean: 2}}}"), "synthetic.conversation: cannot be used with rankings"},
		{"with a prefix", rankingScenario(t, "{rankings: {}, prefix: {pool_size: 2, length: 8}}"), "synthetic.prefix: cannot be used with rankings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseError(t, tc.data); !strings.Contains(got, tc.want) {
				t.Errorf("got\n%s\nwant it to hold\n%s", got, tc.want)
			}
		})
	}
}

// Entries make a pool of ranking requests; the estimate of the prompts'
// memory counts every passage.
func TestRankingsPoolAndMemory(t *testing.T) {
	if _, err := Parse([]byte(rankingScenario(t, "{entries: 5, rankings: {}}")), "s.yml"); err != nil {
		t.Fatal(err)
	}
	got := parseError(t, strings.Replace(rankingScenario(t, "{rankings: {passages: {mean: 10000}, passage_tokens: {mean: 1000000}}}"), "arrival: {rate: 0.2}", "arrival: {pattern: concurrency, concurrency: 10}", 1))
	if !strings.Contains(got, "would hold about") {
		t.Errorf("10,000 passages of a million tokens: got %s, want the memory bound", got)
	}
}
