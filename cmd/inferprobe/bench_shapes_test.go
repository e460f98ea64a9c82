package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/scenarios"
)

// TestSequenceDistributionFlag: AIPerf's three spellings of --seq-dist
// (its sequence-distributions tutorial's among them) give the scenario's
// pairs, which the scenario then checks.
func TestSequenceDistributionFlag(t *testing.T) {
	tutorial := []scenarios.SequencePair{
		{InputTokens: scenarios.Lengths{Mean: 64, Stddev: 10}, OutputTokens: scenarios.Lengths{Mean: 32, Stddev: 8}, Percent: 70},
		{InputTokens: scenarios.Lengths{Mean: 256, Stddev: 40}, OutputTokens: scenarios.Lengths{Mean: 128, Stddev: 20}, Percent: 20},
		{InputTokens: scenarios.Lengths{Mean: 1024, Stddev: 100}, OutputTokens: scenarios.Lengths{Mean: 512, Stddev: 50}, Percent: 10},
	}
	plain := []scenarios.SequencePair{
		{InputTokens: scenarios.Lengths{Mean: 256}, OutputTokens: scenarios.Lengths{Mean: 128}, Percent: 40},
		{InputTokens: scenarios.Lengths{Mean: 512}, OutputTokens: scenarios.Lengths{Mean: 256}, Percent: 60},
	}
	for _, tc := range []struct {
		flag, value string
		want        []scenarios.SequencePair
	}{
		{"--seq-dist", "64|10,32|8:70;256|40,128|20:20;1024|100,512|50:10", tutorial},
		{"--sequence-distribution", "[(256,128):40,(512,256):60]", plain},
		{"--seq-dist", `{"pairs": [{"isl": 256, "osl": 128, "prob": 40}, {"isl": 512, "osl": 256, "prob": 60}]}`, plain},
	} {
		sc, err := parseBench(t, "--model", "m", tc.flag, tc.value).scenario()
		if err == nil {
			err = scenarios.Check(sc.cfg, "bench", sc.written)
		}
		if err != nil {
			t.Errorf("%s %s: %v", tc.flag, tc.value, err)
			continue
		}
		if got := sc.cfg.Probes["bench"].Dataset.Synthetic.SequenceDistribution; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s: pairs %+v, want %+v", tc.flag, tc.value, got, tc.want)
		}
	}
}

// TestRangeRatioFlag: --random-range-ratio is one ratio or one per length,
// around --isl and --osl, which it needs, as AIPerf.
func TestRangeRatioFlag(t *testing.T) {
	for value, want := range map[string]scenarios.RangeRatio{
		"0.3":                           {Input: 0.3, Output: 0.3},
		`{"input": 0.2, "output": 0.5}`: {Input: 0.2, Output: 0.5},
	} {
		sc, err := parseBench(t, "--model", "m", "--isl", "100", "--osl", "20", "--random-range-ratio", value).scenario()
		if err == nil {
			err = scenarios.Check(sc.cfg, "bench", sc.written)
		}
		if err != nil {
			t.Errorf("%s: %v", value, err)
			continue
		}
		if got := sc.cfg.Probes["bench"].Dataset.Synthetic.RangeRatio; got == nil || *got != want {
			t.Errorf("%s: ratio %+v, want %+v", value, got, want)
		}
	}
}

func TestShapeFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--seq-dist", "256,128:40;512,256:50"}, "percents add up to 90"},
		{[]string{"--seq-dist", "256;128"}, `--seq-dist "256;128": "256" is not ISL[|STDDEV],OSL[|STDDEV]:PERCENT`},
		{[]string{"--random-range-ratio", "0.3"}, "--random-range-ratio draws around --isl and --osl: give both"},
		{[]string{"--isl", "100", "--osl", "20", "--random-range-ratio", "1.5"}, "--random-range-ratio.input: must be 0 to below 1"},
		{[]string{"--isl", "100", "--osl", "20", "--random-range-ratio", "x"}, `--random-range-ratio "x": want a ratio`},
		{[]string{"--isl", "100", "--osl", "20", "--isl-stddev", "5", "--random-range-ratio", "0.2"}, "--synthetic-input-tokens-stddev: must be 0 with range_ratio"},
		{[]string{"--seq-dist", "256,128:100", "--random-range-ratio", "0.2"}, "--random-range-ratio cannot be used with --seq-dist"},
		{[]string{"--input-file", "p.jsonl", "--seq-dist", "256,128:100"}, "--seq-dist shapes synthetic prompts"},
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
