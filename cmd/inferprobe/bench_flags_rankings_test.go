package main

import (
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/scenarios"
)

// TestRankingFlags: a ranking endpoint's synthetic dataset always has
// rankings, AIPerf's defaults where no --rankings-* flag says otherwise;
// elsewhere the flags are noted as ignored, as AIPerf ignores them.
func TestRankingFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		want  *scenarios.Rankings
		notes int
	}{
		{"AIPerf's defaults without the flags", []string{"--endpoint-type", "nim-rankings"},
			&scenarios.Rankings{Passages: scenarios.Lengths{Mean: 10}, PassageTokens: scenarios.Lengths{Mean: 128}, QueryTokens: scenarios.Lengths{Mean: 32}}, 0},
		{"the flags given, defaults for the rest", []string{"--endpoint-type", "cohere-rankings", "--rankings-passages-mean", "3", "--rankings-passages-stddev", "1", "--rankings-query-prompt-token-mean", "16"},
			&scenarios.Rankings{Passages: scenarios.Lengths{Mean: 3, Stddev: 1}, PassageTokens: scenarios.Lengths{Mean: 128}, QueryTokens: scenarios.Lengths{Mean: 16}}, 0},
		{"passage lengths, and --isl noted", []string{"--endpoint-type", "hf-tei-rankings", "--isl", "100", "--rankings-passages-prompt-token-mean", "64", "--rankings-passages-prompt-token-stddev", "8"},
			&scenarios.Rankings{Passages: scenarios.Lengths{Mean: 10}, PassageTokens: scenarios.Lengths{Mean: 64, Stddev: 8}, QueryTokens: scenarios.Lengths{Mean: 32}}, 1},
		{"chat: ignored", []string{"--rankings-passages-mean", "3"}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, yml := scenarioYAML(t, append([]string{"--model", "m"}, tc.args...), nil)
			if len(sc.notes) != tc.notes {
				t.Errorf("notes %q, want %d", sc.notes, tc.notes)
			}
			checkWritten(t, sc, yml)
			got := sc.cfg.Probes["bench"].Dataset.Synthetic.Rankings
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Errorf("rankings %+v, want %+v\n%s", got, tc.want, yml)
			}
			if c, err := scenarios.Parse(yml, "bench"); err == nil && tc.want != nil && *c.Probes["bench"].Dataset.Synthetic.Rankings != *tc.want {
				t.Errorf("written out and read back: rankings %+v, want %+v", *c.Probes["bench"].Dataset.Synthetic.Rankings, *tc.want)
			}
		})
	}
}

// TestRankingFlagsRefused: what AIPerf refuses, and what cannot apply.
func TestRankingFlagsRefused(t *testing.T) {
	nim := []string{"--model", "m", "--endpoint-type", "nim-rankings"}
	wantScenarioError(t, append(nim, "--rankings-passages-stddev", "2"), "--rankings-passages-stddev needs --rankings-passages-mean")
	wantScenarioError(t, append(nim, "--rankings-query-prompt-token-mean", "8", "--input-file", "bench_test.go"), "an --input-file's entries are sent as written")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(nim, "--rankings-passages-mean", "0"), "inferprobe bench: --rankings-passages-mean: must be >= 1"},
		{append(nim, "--shared-system-prompt-length", "8"), "inferprobe bench: --shared-system-prompt-length: cannot be used with rankings"},
	} {
		var stderr strings.Builder
		if _, err := parseBench(t, tc.args...).planRun(&stderr, false); err == nil || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: error %v, printed %q; want %q", tc.args, err, stderr.String(), tc.want)
		}
	}
}
