package scenarios

import "math"

// Rankings shapes synthetic ranking requests as AIPerf 0.13's rankings
// dataset does (its --rankings-* options): each request has a query of
// QueryTokens and a number of passages drawn from Passages, each passage of
// PassageTokens. Every count and length is drawn as AIPerf draws it: the
// mean when stddev is 0, else normal(mean, stddev) truncated at 0, rounded
// up, at least 1. Unwritten fields take AIPerf's defaults, which it applies
// to every synthetic rankings run, its options given or not.
type Rankings struct {
	// Passages per request: mean whole, 1 to PassageBound's max. Default 10.
	Passages Lengths `yaml:"passages"`
	// PassageTokens is each passage's length. Default mean 128.
	PassageTokens Lengths `yaml:"passage_tokens"`
	// QueryTokens is the query's length. Default mean 32.
	QueryTokens Lengths `yaml:"query_tokens"`
}

// AIPerf 0.13's defaults (its RankingsConfig; the 1, 550 and 550 its
// --help prints are never used).
const (
	DefaultRankingPassages      = 10
	DefaultRankingPassageTokens = 128
	DefaultRankingQueryTokens   = 32
)

func (r *Rankings) setDefaults(written func(string) bool, path string) {
	for _, f := range []struct {
		name string
		ln   *Lengths
		mean float64
	}{{"passages", &r.Passages, DefaultRankingPassages}, {"passage_tokens", &r.PassageTokens, DefaultRankingPassageTokens}, {"query_tokens", &r.QueryTokens, DefaultRankingQueryTokens}} {
		if !written(join(path, f.name+".mean")) {
			f.ln.Mean = f.mean
		}
	}
}

func (r *Rankings) validate(l *loader, path string) {
	for _, f := range []struct {
		name    string
		ln      *Lengths
		example int
		bound   *Bound
	}{{"passages", &r.Passages, DefaultRankingPassages, &PassageBound}, {"passage_tokens", &r.PassageTokens, DefaultRankingPassageTokens, &TokenBound}, {"query_tokens", &r.QueryTokens, DefaultRankingQueryTokens, &TokenBound}} {
		// Whole, as AIPerf's options are.
		if f.ln.Mean != math.Trunc(f.ln.Mean) {
			l.errorf(join(path, f.name+".mean"), "must be a whole number, not %v", f.ln.Mean)
		}
		f.ln.validate(l, join(path, f.name), f.example, f.bound)
	}
}

// validateRankings checks the rankings of s, which build the whole request:
// the options that shape a prompt's text or messages do not apply.
func (s *Synthetic) validateRankings(l *loader, path string, systemPrompt bool) {
	r := s.Rankings
	if r == nil {
		return
	}
	r.validate(l, join(path, "rankings"))
	written := l.under(path)
	for _, field := range []string{"sequence_distribution", "range_ratio", "shared_system_prompt_length", "prefix", "user_context_length", "conversation", "images", "audio"} {
		if written(field) {
			l.errorf(join(path, field), "cannot be used with rankings, which draw each request's query and passages; remove one of them")
		}
	}
	if systemPrompt {
		l.errorf(join(path, "rankings"), "cannot be used with dataset.system_prompt: a ranking request has no messages; remove one of them")
	}
}
