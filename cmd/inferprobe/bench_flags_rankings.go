package main

import (
	"fmt"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/scenarios"
)

// rankingFlags are AIPerf's Rankings options; they fill the synthetic
// dataset's rankings (scenarios/rankings.go), which bench sets for every
// ranking endpoint, as AIPerf draws every synthetic ranking request so.
type rankingFlags struct {
	pairs []rankingPair
	set   map[string]*bool
}

// rankingPair is one mean and stddev of the rankings and its flags.
type rankingPair struct {
	field              string // under dataset.synthetic.rankings
	of                 func(*scenarios.Rankings) *scenarios.Lengths
	meanFlag, sdFlag   string
	mean, stddev       int
	aiperf             float64 // AIPerf's mean when the flags are not given
	meanBound, sdBound *scenarios.Bound
}

func addRankingFlags(flag func(name, help string) *kingpin.FlagClause, set map[string]*bool) *rankingFlags {
	r := &rankingFlags{set: set, pairs: []rankingPair{
		{field: "passages", of: func(r *scenarios.Rankings) *scenarios.Lengths { return &r.Passages }, aiperf: scenarios.DefaultRankingPassages, meanFlag: "rankings-passages-mean", sdFlag: "rankings-passages-stddev", meanBound: &scenarios.PassageBound, sdBound: &scenarios.PassageBound},
		{field: "passage_tokens", of: func(r *scenarios.Rankings) *scenarios.Lengths { return &r.PassageTokens }, aiperf: scenarios.DefaultRankingPassageTokens, meanFlag: "rankings-passages-prompt-token-mean", sdFlag: "rankings-passages-prompt-token-stddev", meanBound: &scenarios.TokenBound, sdBound: &scenarios.TokenBound},
		{field: "query_tokens", of: func(r *scenarios.Rankings) *scenarios.Lengths { return &r.QueryTokens }, aiperf: scenarios.DefaultRankingQueryTokens, meanFlag: "rankings-query-prompt-token-mean", sdFlag: "rankings-query-prompt-token-stddev", meanBound: &scenarios.TokenBound, sdBound: &scenarios.TokenBound},
	}}
	help := [][2]string{
		{fmt.Sprintf("Mean passages per ranking request (default %d, as AIPerf draws them when no --rankings-* is given)", scenarios.DefaultRankingPassages), "Standard deviation of the passages per request; each count is drawn normally, rounded up, at least 1."},
		{fmt.Sprintf("Mean tokens of each passage (default %d)", scenarios.DefaultRankingPassageTokens), "Standard deviation of the passage length."},
		{fmt.Sprintf("Mean tokens of a ranking request's query (default %d)", scenarios.DefaultRankingQueryTokens), "Standard deviation of the query length."},
	}
	for i := range r.pairs {
		p := &r.pairs[i]
		flag(p.meanFlag, help[i][0]+"; ranking endpoint types only, in place of --isl.").SetValue(whole(p.meanFlag, &p.mean, p.meanBound))
		flag(p.sdFlag, help[i][1]).SetValue(whole(p.sdFlag, &p.stddev, p.sdBound))
	}
	return r
}

// given names the first rankings flag the user gave; "" for none.
func (r *rankingFlags) given() string {
	for _, p := range r.pairs {
		for _, f := range []string{p.meanFlag, p.sdFlag} {
			if *r.set[f] {
				return f
			}
		}
	}
	return ""
}

// apply gives s, the synthetic dataset at path of a run against endpoint,
// its rankings when endpoint ranks: those of the flags given, AIPerf's
// defaults for the others.
func (r *rankingFlags) apply(b *benchScenario, s *scenarios.Synthetic, path, endpoint string) error {
	if e, _ := scenarios.LookupEndpoint(endpoint); !e.Ranks {
		if f := r.given(); f != "" {
			b.notes = append(b.notes, fmt.Sprintf("--%s applies only to the ranking endpoint types, not %s, so it is ignored, as AIPerf ignores it", f, endpoint))
		}
		return nil
	}
	if *r.set["synthetic-input-tokens-mean"] || *r.set["isl"] {
		b.notes = append(b.notes, "--synthetic-input-tokens-mean (--isl) does not apply to ranking requests, sized by --rankings-* instead, so it is ignored, as AIPerf ignores it")
	}
	// Every field is written, so that the scenario says AIPerf's defaults
	// whether it is checked before it is written out or after.
	s.Rankings = &scenarios.Rankings{}
	for _, p := range r.pairs {
		ln, meanFlag, sdFlag := p.of(s.Rankings), "--endpoint-type", "--endpoint-type"
		switch {
		case *r.set[p.meanFlag]:
			*ln = scenarios.Lengths{Mean: float64(p.mean), Stddev: float64(p.stddev)}
			meanFlag, sdFlag = "--"+p.meanFlag, "--"+p.sdFlag
		case *r.set[p.sdFlag]:
			return fmt.Errorf("--%s needs --%s, as in AIPerf, which refuses a standard deviation without its mean", p.sdFlag, p.meanFlag)
		default:
			*ln = scenarios.Lengths{Mean: p.aiperf}
		}
		b.set(path+".rankings."+p.field+".mean", meanFlag)
		b.set(path+".rankings."+p.field+".stddev", sdFlag)
	}
	return nil
}

// refuseForFile refuses the flags with an --input-file, whose entries are
// sent as written.
func (r *rankingFlags) refuseForFile() error {
	if f := r.given(); f != "" {
		return fmt.Errorf("--%[1]s shapes synthetic ranking requests, and an --input-file's entries are sent as written; drop --%[1]s, or drop --input-file", f)
	}
	return nil
}
