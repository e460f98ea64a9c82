package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

// workloadFlags are AIPerf's prefix-cache and multi-turn synthesis options,
// with its names and aliases; they fill the scenario's synthetic workload
// fields (scenarios/workload.go), whose validation names these flags.
type workloadFlags struct {
	systemPrompt, systemPromptFile string
	sharedSystemLength             int
	prefixPoolSize, prefixLength   int
	userContextLength              int
	conversationNum, entries       int
	turnMean, turnStddev           float64
	turnDelayMean, turnDelayStdev  float64
	turnDelayRatio                 float64
	// given reports whether the user typed the flag or one of its aliases.
	given func(names ...string) bool
}

func addWorkloadFlags(flag func(name, help string) *kingpin.FlagClause, set map[string]*bool) *workloadFlags {
	w := &workloadFlags{given: func(names ...string) bool {
		for _, n := range names {
			if *set[n] {
				return true
			}
		}
		return false
	}}
	alias := func(of string) string { return "Alias of --" + of + "." }
	flag("system-prompt", "System message sent verbatim ahead of every request's turns, synthetic or from --input-file. Not with --shared-system-prompt-length or a prefix pool.").StringVar(&w.systemPrompt)
	flag("system-prompt-file", "File holding the system message, sent verbatim as --system-prompt is; read once, before the run (UTF-8).").StringVar(&w.systemPromptFile)
	flag("shared-system-prompt-length", "Tokens of a generated system message identical in every request, for prefix-cache runs. Not with a prefix pool.").SetValue(whole("shared-system-prompt-length", &w.sharedSystemLength, &scenarios.TokenBound))
	flag("prompt-prefix-pool-size", "Distinct generated prefixes; each conversation's first user message starts with one, picked at random (seeded). 0: none.").SetValue(whole("prompt-prefix-pool-size", &w.prefixPoolSize, &scenarios.EntryBound))
	flag("prefix-prompt-pool-size", alias("prompt-prefix-pool-size")).SetValue(whole("prefix-prompt-pool-size", &w.prefixPoolSize, &scenarios.EntryBound))
	flag("num-prefix-prompts", alias("prompt-prefix-pool-size")).SetValue(whole("num-prefix-prompts", &w.prefixPoolSize, &scenarios.EntryBound))
	flag("prompt-prefix-length", "Tokens of each prefix of --prompt-prefix-pool-size.").SetValue(whole("prompt-prefix-length", &w.prefixLength, &scenarios.TokenBound))
	flag("prefix-prompt-length", alias("prompt-prefix-length")).SetValue(whole("prefix-prompt-length", &w.prefixLength, &scenarios.TokenBound))
	flag("user-context-prompt-length", "Tokens of a generated user message unique to each dataset entry, sent after the system message; a pool of --num-dataset-entries entries (else --conversation-num, else --request-count, else 100, as AIPerf).").SetValue(whole("user-context-prompt-length", &w.userContextLength, &scenarios.TokenBound))
	flag("conversation-num", "Synthetic conversations to send (the run's length, unless --request-count or --benchmark-duration is given), and the number of distinct ones, sent in a shuffled order, unless --num-dataset-entries is given.").SetValue(whole("conversation-num", &w.conversationNum, &scenarios.EntryBound))
	flag("num-conversations", alias("conversation-num")).SetValue(whole("num-conversations", &w.conversationNum, &scenarios.EntryBound))
	flag("num-sessions", alias("conversation-num")).SetValue(whole("num-sessions", &w.conversationNum, &scenarios.EntryBound))
	flag("num-dataset-entries", "Distinct synthetic entries, reused in a shuffled order (reshuffled after each pass), so that requests repeat; default: every request new.").SetValue(whole("num-dataset-entries", &w.entries, &scenarios.EntryBound))
	flag("num-prompts", alias("num-dataset-entries")).SetValue(whole("num-prompts", &w.entries, &scenarios.EntryBound))
	flag("conversation-turn-mean", "Mean user turns per synthetic conversation, normally distributed (default 1: single turn); each turn carries the conversation so far.").Default("1").Float64Var(&w.turnMean)
	flag("session-turns-mean", alias("conversation-turn-mean")).Default("1").Float64Var(&w.turnMean)
	flag("conversation-turn-stddev", "Standard deviation of the turns per conversation.").Float64Var(&w.turnStddev)
	flag("session-turns-stddev", alias("conversation-turn-stddev")).Float64Var(&w.turnStddev)
	flag("conversation-turn-delay-mean", "Mean think time in milliseconds before each later turn, from the end of the one before; normally distributed, at least 0.").Float64Var(&w.turnDelayMean)
	flag("session-turn-delay-mean", alias("conversation-turn-delay-mean")).Float64Var(&w.turnDelayMean)
	flag("conversation-turn-delay-stddev", "Standard deviation of the think time in milliseconds.").Float64Var(&w.turnDelayStdev)
	flag("session-turn-delay-stddev", alias("conversation-turn-delay-stddev")).Float64Var(&w.turnDelayStdev)
	flag("conversation-turn-delay-ratio", "Multiplies every think time (0: none, below 1 faster, above 1 slower).").Default("1").Float64Var(&w.turnDelayRatio)
	flag("session-delay-ratio", alias("conversation-turn-delay-ratio")).Default("1").Float64Var(&w.turnDelayRatio)
	return w
}

// The flags of each workload option, the first one AIPerf's main name.
var (
	systemPromptFlags   = []string{"system-prompt"}
	systemFileFlags     = []string{"system-prompt-file"}
	sharedSystemFlags   = []string{"shared-system-prompt-length"}
	prefixPoolFlags     = []string{"prompt-prefix-pool-size", "prefix-prompt-pool-size", "num-prefix-prompts"}
	prefixLengthFlags   = []string{"prompt-prefix-length", "prefix-prompt-length"}
	userContextFlags    = []string{"user-context-prompt-length"}
	conversationFlags   = []string{"conversation-num", "num-conversations", "num-sessions"}
	entriesFlags        = []string{"num-dataset-entries", "num-prompts"}
	turnMeanFlags       = []string{"conversation-turn-mean", "session-turns-mean"}
	turnStddevFlags     = []string{"conversation-turn-stddev", "session-turns-stddev"}
	turnDelayMeanFlags  = []string{"conversation-turn-delay-mean", "session-turn-delay-mean"}
	turnDelayStdevFlags = []string{"conversation-turn-delay-stddev", "session-turn-delay-stddev"}
	turnDelayRatioFlags = []string{"conversation-turn-delay-ratio", "session-delay-ratio"}
)

// workloadFlagGroups lists them, those that apply to any dataset first.
var workloadFlagGroups = [][]string{systemPromptFlags, systemFileFlags, sharedSystemFlags, prefixPoolFlags, prefixLengthFlags, userContextFlags,
	conversationFlags, entriesFlags, turnMeanFlags, turnStddevFlags, turnDelayMeanFlags, turnDelayStdevFlags, turnDelayRatioFlags}

// applyToFile sets the system prompt of d, an --input-file's dataset at
// path, and refuses the other workload flags: they shape synthetic prompts,
// and a file's entries are sent as written. A random_pool takes
// --conversation-num, as in AIPerf: the number of entries it draws.
func (w *workloadFlags) applyToFile(b *benchScenario, d *scenarios.Dataset, path string) error {
	for _, g := range workloadFlagGroups[2:] {
		if d.File.Format == dataset.FormatRandomPool && g[0] == conversationFlags[0] {
			continue
		}
		if w.given(g...) {
			return fmt.Errorf("--%s shapes synthetic prompts, and an --input-file's entries are sent as written; drop --%s, or write it into the file", g[0], g[0])
		}
	}
	return w.applySystemPrompt(b, d, path)
}

// applySystemPrompt sets the dataset's system prompt from --system-prompt
// or the file of --system-prompt-file.
func (w *workloadFlags) applySystemPrompt(b *benchScenario, d *scenarios.Dataset, path string) error {
	switch {
	case w.given(systemPromptFlags...) && w.given(systemFileFlags...):
		return errors.New("--system-prompt-file and --system-prompt both give the system prompt; keep one of them")
	case w.given(systemPromptFlags...):
		d.SystemPrompt = w.systemPrompt
		b.set(path+".system_prompt", "--system-prompt")
	case w.given(systemFileFlags...):
		text, err := os.ReadFile(w.systemPromptFile)
		if err != nil {
			return fmt.Errorf("--system-prompt-file: %w", err)
		}
		if !utf8.Valid(text) {
			return fmt.Errorf("--system-prompt-file %s is not UTF-8 text; convert it, e.g. with iconv -t UTF-8", w.systemPromptFile)
		}
		d.SystemPrompt = string(text)
		b.set(path+".system_prompt", "--system-prompt-file")
	}
	return nil
}

// poolSize is the number of distinct entries, as AIPerf resolves it:
// --num-dataset-entries, else --conversation-num; 0 for none.
func (w *workloadFlags) poolSize() int {
	switch {
	case w.given(entriesFlags...):
		return w.entries
	case w.given(conversationFlags...):
		return w.conversationNum
	}
	return 0
}

// multiTurn reports whether the flags ask for conversations of several turns.
func (w *workloadFlags) multiTurn() bool { return w.turnMean > 1 || w.turnStddev > 0 }

// aiperfEntries is AIPerf's number of entries of a synthetic dataset when
// none of the flags that name it is given (its SyntheticDataset.entries).
const aiperfEntries = 100

// apply fills d, the synthetic dataset at path, from the flags; requests is
// --request-count when given, else 0.
func (w *workloadFlags) apply(b *benchScenario, d *scenarios.Dataset, path string, requests int) error {
	if err := w.applySystemPrompt(b, d, path); err != nil {
		return err
	}
	s := d.Synthetic
	field := func(name string, flags []string) { b.set(path+".synthetic."+name, "--"+flags[0]) }
	if w.given(sharedSystemFlags...) {
		s.SharedSystemPromptLength = w.sharedSystemLength
		field("shared_system_prompt_length", sharedSystemFlags)
	}
	switch {
	case w.prefixPoolSize != 0:
		s.Prefix = &scenarios.PrefixPool{PoolSize: w.prefixPoolSize, Length: w.prefixLength}
		field("prefix.pool_size", prefixPoolFlags)
		field("prefix.length", prefixLengthFlags)
	case w.given(prefixLengthFlags...):
		b.notes = append(b.notes, "--prompt-prefix-length applies only with --prompt-prefix-pool-size above 0, so it is ignored, as AIPerf ignores it")
	}
	switch {
	case w.given(entriesFlags...):
		field("entries", entriesFlags)
	case w.given(conversationFlags...):
		field("entries", conversationFlags)
	}
	s.Entries = w.poolSize()
	if w.given(userContextFlags...) {
		// Each entry has its own user context, so the dataset is a pool:
		// without a flag that sizes it, as AIPerf sizes it, by
		// --request-count, else its default.
		if s.Entries == 0 {
			s.Entries = cmp.Or(requests, aiperfEntries)
			b.set(path+".synthetic.entries", "--user-context-prompt-length")
		}
		s.UserContextLength = w.userContextLength
		field("user_context_length", userContextFlags)
	}
	if !w.multiTurn() {
		if w.given(turnDelayMeanFlags...) || w.given(turnDelayStdevFlags...) || w.given(turnDelayRatioFlags...) {
			b.notes = append(b.notes, "--conversation-turn-delay-mean/-stddev/-ratio apply only to multi-turn conversations (--conversation-turn-mean above 1), so they are ignored, as AIPerf ignores them")
		}
		return nil
	}
	if w.turnDelayRatio < 0 {
		return fmt.Errorf("--conversation-turn-delay-ratio %v: must be >= 0 (0 removes the think times)", w.turnDelayRatio)
	}
	// Scaling a normal draw by the ratio, as AIPerf does, is drawing from
	// the scaled distribution.
	s.Conversation = &scenarios.Conversation{
		Turns:     scenarios.Lengths{Mean: w.turnMean, Stddev: w.turnStddev},
		TurnDelay: scenarios.Delays{Mean: millis(w.turnDelayMean * w.turnDelayRatio), Stddev: millis(w.turnDelayStdev * w.turnDelayRatio)},
	}
	field("conversation.turns.mean", turnMeanFlags)
	field("conversation.turns.stddev", turnStddevFlags)
	field("conversation.turn_delay.mean", turnDelayMeanFlags)
	field("conversation.turn_delay.stddev", turnDelayStdevFlags)
	return nil
}

// limit is the length of a run bounded by --conversation-num: that many
// conversations, every turn counted as a request (a random_pool's entries
// are single requests), as the bench probe will draw them.
func (w *workloadFlags) limit(seed uint64) prober.Limit {
	return prober.Limit{Requests: w.sessionRequests(seed, strings.TrimPrefix(benchProbe, "probes."), w.conversationNum)}
}

// sessionRequests is how many requests the first sessions of the synthetic
// conversations of the probe named name take.
func (w *workloadFlags) sessionRequests(seed uint64, name string, sessions int) uint64 {
	s := scenarios.Synthetic{Entries: w.poolSize()}
	if w.multiTurn() {
		s.Conversation = &scenarios.Conversation{Turns: scenarios.Lengths{Mean: w.turnMean, Stddev: w.turnStddev}}
	}
	return dataset.SessionRequests(s, seed, dataset.Component(name), sessions)
}
