package main

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/inferprobe/inferprobe/scenarios"
)

// AIPerf's --seq-dist formats: "ISL[|SD],OSL[|SD]:PERCENT;…", the same
// pairs as "[(ISL[|SD],OSL[|SD]):PERCENT,…]", or JSON {"pairs": [{"isl",
// "isl_stddev", "osl", "osl_stddev", "prob"}, …]}.
const seqNum = `(?:\d+(?:\.\d+)?|\.\d+)`

var (
	seqPair    = regexp.MustCompile(`^(\d+)(?:\|(` + seqNum + `))?\s*,\s*(\d+)(?:\|(` + seqNum + `))?\s*:\s*(` + seqNum + `)$`)
	seqBracket = regexp.MustCompile(`\(\s*(\d+)(?:\|(` + seqNum + `))?\s*,\s*(\d+)(?:\|(` + seqNum + `))?\s*\)\s*:\s*(` + seqNum + `)`)
)

const seqDistExample = `e.g. "64|10,32|8:70;256|40,128|20:20;1024|100,512|50:10" (ISL[|STDDEV],OSL[|STDDEV]:PERCENT, the percents adding up to 100)`

// parseSequenceDistribution reads --seq-dist as AIPerf 0.13 does.
func parseSequenceDistribution(s string) ([]scenarios.SequencePair, error) {
	s = strings.TrimSpace(s)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("--seq-dist %q: %s; %s", s, fmt.Sprintf(format, a...), seqDistExample)
	}
	var pairs []scenarios.SequencePair
	pair := func(m []string) {
		num := func(v string) float64 { f, _ := strconv.ParseFloat(v, 64); return f }
		pairs = append(pairs, scenarios.SequencePair{
			InputTokens:  scenarios.Lengths{Mean: num(m[1]), Stddev: num(m[2])},
			OutputTokens: scenarios.Lengths{Mean: num(m[3]), Stddev: num(m[4])},
			Percent:      num(m[5]),
		})
	}
	switch {
	case strings.HasPrefix(s, "{"):
		var doc struct {
			Pairs []map[string]float64 `json:"pairs"`
		}
		if err := json.Unmarshal([]byte(s), &doc); err != nil || doc.Pairs == nil {
			return nil, bad(`not JSON of the form {"pairs": [{"isl": 256, "osl": 128, "prob": 100}]}`)
		}
		for i, p := range doc.Pairs {
			for _, k := range []string{"isl", "osl", "prob"} {
				if _, ok := p[k]; !ok {
					return nil, bad("pair %d has no %q", i, k)
				}
			}
			pairs = append(pairs, scenarios.SequencePair{
				InputTokens:  scenarios.Lengths{Mean: math.Trunc(p["isl"]), Stddev: p["isl_stddev"]},
				OutputTokens: scenarios.Lengths{Mean: math.Trunc(p["osl"]), Stddev: p["osl_stddev"]},
				Percent:      p["prob"],
			})
		}
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		for _, m := range seqBracket.FindAllStringSubmatch(s[1:len(s)-1], -1) {
			pair(m)
		}
	default:
		for _, p := range strings.Split(s, ";") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			m := seqPair.FindStringSubmatch(p)
			if m == nil {
				return nil, bad("%q is not ISL[|STDDEV],OSL[|STDDEV]:PERCENT", p)
			}
			pair(m)
		}
	}
	if len(pairs) == 0 {
		return nil, bad("no pair in it")
	}
	return pairs, nil
}

// parseRangeRatio reads --random-range-ratio as AIPerf 0.13 does (vLLM's
// style): one ratio for both lengths, or {"input": R, "output": R}.
func parseRangeRatio(s string) (scenarios.RangeRatio, error) {
	s = strings.TrimSpace(s)
	if r, err := strconv.ParseFloat(s, 64); err == nil {
		return scenarios.RangeRatio{Input: r, Output: r}, nil
	}
	var doc map[string]float64
	if err := json.Unmarshal([]byte(s), &doc); err == nil && len(doc) == 2 {
		in, okIn := doc["input"]
		out, okOut := doc["output"]
		if okIn && okOut {
			return scenarios.RangeRatio{Input: in, Output: out}, nil
		}
	}
	return scenarios.RangeRatio{}, fmt.Errorf(`--random-range-ratio %q: want a ratio from 0 to below 1 for both lengths, or {"input": 0.3, "output": 0.5}`, s)
}
