package dataset

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/tokenizer"
)

func newWorkloadSource(t *testing.T, s scenarios.Synthetic, tok *tokenizer.Tokenizer, seed uint64) Source {
	t.Helper()
	return newSystemSource(t, s, "", tok, seed)
}

// newSystemSource is newWorkloadSource with the dataset's system prompt.
func newSystemSource(t *testing.T, s scenarios.Synthetic, system string, tok *tokenizer.Tokenizer, seed uint64) Source {
	t.Helper()
	return newComponentSource(t, s, system, tok, seed, "probe/p")
}

func newComponentSource(t *testing.T, s scenarios.Synthetic, system string, tok *tokenizer.Tokenizer, seed uint64, component string) Source {
	t.Helper()
	if s.InputTokens.Mean == 0 {
		s.InputTokens.Mean = 16
	}
	if s.OutputTokens.Mean == 0 {
		s.OutputTokens.Mean = 8
	}
	src, err := New(scenarios.Dataset{Synthetic: &s, SystemPrompt: system}, Options{Seed: seed, Component: component, Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func items(t *testing.T, src Source, n int) []Item {
	t.Helper()
	out := make([]Item, n)
	for i := range out {
		var err error
		if out[i], err = src.Next(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestPrefixPoolSharesTokens checks, token by token with GPT-2, that every
// request starts with one of the pool's prefixes: requests drawing the same
// prefix share their first length tokens, and the pool holds exactly
// pool_size distinct ones.
func TestPrefixPoolSharesTokens(t *testing.T) {
	tok := gpt2(t)
	const pool, length = 3, 40
	src := newWorkloadSource(t, scenarios.Synthetic{Prefix: &scenarios.PrefixPool{PoolSize: pool, Length: length}}, tok, 7)
	prefixes, seen := map[string]int{}, map[string]bool{}
	for _, it := range items(t, src, 60) {
		ids := tok.Encode(it.Prompt.Text)
		if len(ids) != length+16 || it.Prompt.InputTokens != length+16 {
			t.Fatalf("prompt of %d tokens (InputTokens %d), want prefix %d + prompt 16", len(ids), it.Prompt.InputTokens, length)
		}
		prefixes[tok.Decode(ids[:length])]++
		// The rest is the request's own: no two requests are the same.
		if seen[it.Prompt.Text] {
			t.Fatalf("two requests are identical: %q", it.Prompt.Text)
		}
		seen[it.Prompt.Text] = true
	}
	if len(prefixes) != pool {
		t.Fatalf("%d distinct %d-token prefixes, want %d", len(prefixes), length, pool)
	}
	for k, n := range prefixes {
		if n < 5 {
			t.Errorf("prefix %.30q… starts %d of 60 requests; want each of %d about 20", k, n, pool)
		}
	}
}

// TestSharedSystemPrompt checks that the generated system message is
// identical, of the asked length in tokens, in every request, and that
// user context is per entry: equal when an entry repeats, different
// between entries.
func TestSharedSystemPromptAndUserContext(t *testing.T) {
	tok := gpt2(t)
	const entries = 4
	src := newWorkloadSource(t, scenarios.Synthetic{SharedSystemPromptLength: 50, UserContextLength: 30, Entries: entries}, tok, 3)
	var system string
	contexts := map[string]string{} // user prompt → its context
	distinct := map[string]bool{}
	for _, it := range items(t, src, 3*entries) {
		m := it.Prompt.Messages
		if len(m) != 3 || m[0].Role != "system" || m[1].Role != "user" || m[2].Role != "user" {
			t.Fatalf("messages %+v, want system, user context, user", m)
		}
		if system == "" {
			system = m[0].Content
		}
		if m[0].Content != system || tok.Count(system) != 50 {
			t.Fatalf("system message of %d tokens differs between requests or is not 50 tokens", tok.Count(m[0].Content))
		}
		if n := tok.Count(m[1].Content); n != 30 {
			t.Fatalf("user context of %d tokens, want 30", n)
		}
		if c, ok := contexts[m[2].Content]; ok && c != m[1].Content {
			t.Fatal("a repeated entry came with another user context")
		}
		contexts[m[2].Content] = m[1].Content
		distinct[m[1].Content] = true
		if want := tok.Count(it.Prompt.Text); it.Prompt.InputTokens != want || !strings.HasPrefix(it.Prompt.Text, system+"\n") {
			t.Fatalf("text/InputTokens %d do not hold the whole conversation (%d)", it.Prompt.InputTokens, want)
		}
	}
	if len(contexts) != entries || len(distinct) != entries {
		t.Fatalf("%d distinct entries with %d distinct contexts over 3 passes, want %d of each", len(contexts), len(distinct), entries)
	}
}

// TestEntriesPool checks that a pool sends each entry once per pass, in an
// order that changes between passes, and the same entries again.
func TestEntriesPool(t *testing.T) {
	const n = 20
	src := newWorkloadSource(t, scenarios.Synthetic{Entries: n}, nil, 1)
	var passes [3][]string
	for p := range passes {
		for _, it := range items(t, src, n) {
			passes[p] = append(passes[p], it.Prompt.Text)
		}
	}
	for p := range passes {
		if len(slices.Compact(slices.Sorted(slices.Values(passes[p])))) != n {
			t.Fatalf("pass %d repeats an entry", p)
		}
		if !reflect.DeepEqual(slices.Sorted(slices.Values(passes[p])), slices.Sorted(slices.Values(passes[0]))) {
			t.Fatalf("pass %d sends other entries than pass 0", p)
		}
	}
	if slices.Equal(passes[0], passes[1]) && slices.Equal(passes[1], passes[2]) {
		t.Fatal("every pass has the same order; want a reshuffle after each")
	}
}

// TestConversationTurnsAndDelays checks that turn counts and think times
// follow normal(mean, stddev), and that each turn carries the conversation
// before it: the previous turn's messages, an answer of the length asked
// for, then its own user message.
func TestConversationTurnsAndDelays(t *testing.T) {
	conv := &scenarios.Conversation{
		Turns:     scenarios.Lengths{Mean: 6, Stddev: 2},
		TurnDelay: scenarios.Delays{Mean: scenarios.Duration(2 * time.Second), Stddev: scenarios.Duration(500 * time.Millisecond)},
	}
	src := newSystemSource(t, scenarios.Synthetic{Conversation: conv}, "Be brief.", nil, 5)
	var turns, delays []float64
	sessions := map[string]bool{}
	for _, it := range items(t, src, 2000) {
		turns = append(turns, float64(1+len(it.Turns)))
		prev := it.Prompt
		if prev.Session == "" || sessions[prev.Session] {
			t.Fatalf("session %q: want a new session id per conversation", prev.Session)
		}
		sessions[prev.Session] = true
		if len(prev.Messages) != 2 || prev.Messages[0] != (Message{Role: "system", Content: "Be brief."}) {
			t.Fatalf("first turn %+v, want the system prompt then the user message", prev.Messages)
		}
		for _, turn := range it.Turns {
			delays = append(delays, turn.Delay.Seconds())
			m := turn.Prompt.Messages
			if turn.Prompt.Session != prev.Session || len(m) != len(prev.Messages)+2 ||
				!slices.Equal(m[:len(prev.Messages)], prev.Messages) {
				t.Fatalf("a later turn does not carry the conversation before it: %d messages after %d", len(m), len(prev.Messages))
			}
			answer, user := m[len(m)-2], m[len(m)-1]
			if answer.Role != "assistant" || len(strings.Fields(answer.Content)) != prev.OutputTokens || user.Role != "user" {
				t.Fatalf("turn ends %+v, %+v; want an answer of %d tokens, then the user", answer.Role, user.Role, prev.OutputTokens)
			}
			if turn.Prompt.InputTokens <= prev.InputTokens {
				t.Fatalf("input grew from %d to %d tokens; want the history to grow", prev.InputTokens, turn.Prompt.InputTokens)
			}
			prev = turn.Prompt
		}
	}
	// AIPerf rounds a normal draw up: the mean is half a unit above.
	mean, std := moments(turns)
	if math.Abs(mean-6.5) > 0.15 || math.Abs(std-2) > 0.15 || slices.Min(turns) < 1 {
		t.Errorf("turns per conversation: mean %.2f, stddev %.2f, min %v; want 6.5, 2 and at least 1", mean, std, slices.Min(turns))
	}
	mean, std = moments(delays)
	if math.Abs(mean-2.0005) > 0.03 || math.Abs(std-0.5) > 0.03 {
		t.Errorf("turn delays: mean %.3fs, stddev %.3fs; want 2s and 0.5s", mean, std)
	}
	for _, d := range delays {
		if ms := d * 1000; math.Abs(ms-math.Round(ms)) > 1e-6 || ms < 1 {
			t.Fatalf("delay %vs: want whole milliseconds, at least 1", d)
		}
	}
}

// TestSessionRequests checks that the requests SessionRequests counts are
// those the source sends in that many conversations: from a pool smaller
// and larger than them, and without one.
func TestSessionRequests(t *testing.T) {
	turns := &scenarios.Conversation{Turns: scenarios.Lengths{Mean: 3, Stddev: 2}}
	for _, entries := range []int{0, 7, 30, 100} {
		s := scenarios.Synthetic{Entries: entries, Conversation: turns}
		src := newWorkloadSource(t, s, nil, 9)
		var sent uint64
		for _, it := range items(t, src, 30) {
			sent += uint64(1 + len(it.Turns))
		}
		if got := SessionRequests(s, 9, "probe/p", 30); got != sent || got == 30 {
			t.Errorf("entries %d: SessionRequests = %d, 30 conversations sent %d", entries, got, sent)
		}
	}
}

// TestWorkloadSeeded checks that the same seed sends the same prompts and
// another seed others, and that a synthetic source without the options
// draws as it always has.
func TestWorkloadSeeded(t *testing.T) {
	s := scenarios.Synthetic{Entries: 5, Prefix: &scenarios.PrefixPool{PoolSize: 2, Length: 8},
		Conversation: &scenarios.Conversation{Turns: scenarios.Lengths{Mean: 3, Stddev: 1}}}
	a, b := items(t, newWorkloadSource(t, s, nil, 1), 12), items(t, newWorkloadSource(t, s, nil, 1), 12)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed sent different prompts")
	}
	if reflect.DeepEqual(a, items(t, newWorkloadSource(t, s, nil, 2), 12)) {
		t.Fatal("another seed sent the same prompts")
	}
	plain := scenarios.Synthetic{InputTokens: scenarios.Lengths{Mean: 16, Stddev: 4}, OutputTokens: scenarios.Lengths{Mean: 8}}
	want := NewSynthetic(plain, 1, "probe/p")
	for _, it := range items(t, newWorkloadSource(t, plain, nil, 1), 10) {
		if w := want.Next(); !reflect.DeepEqual(it.Prompt, w) || it.Turns != nil {
			t.Fatalf("plain synthetic sent %+v, want %+v", it.Prompt, w)
		}
	}
	// With a system prompt only, the user messages are the plain ones.
	want = NewSynthetic(plain, 1, "probe/p")
	for _, it := range items(t, newSystemSource(t, plain, "Hi.", nil, 1), 10) {
		if w := want.Next(); it.Prompt.Messages[1].Content != w.Text || it.Prompt.OutputTokens != w.OutputTokens {
			t.Fatalf("with a system prompt the user message is %q, want %q", it.Prompt.Messages[1].Content, w.Text)
		}
	}
}

func moments(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)))
}

// TestSystemPromptOnFiles checks that the dataset's system prompt comes
// first in the requests of sources that are not synthetic, a multi-turn
// file's later turns too, and that the file is still sent once per pass.
func TestSystemPromptOnFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conv.jsonl")
	data := `{"session_id": "a", "turns": [{"text": "q1"}, {"role": "assistant", "text": "a1"}, {"text": "q2"}]}` + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	d := scenarios.Dataset{SystemPrompt: "Be brief.", File: &scenarios.File{Path: path, Format: FormatMultiTurn, Timing: scenarios.TimingArrival, BlockSize: 4, OutputTokens: scenarios.Lengths{Mean: 64}}}
	src, err := New(d, Options{Seed: 1, Component: "probe/p"})
	if err != nil {
		t.Fatal(err)
	}
	it := items(t, src, 1)[0]
	first, later := it.Prompt.Messages, it.Turns[0].Prompt.Messages
	if first[0] != (Message{Role: "system", Content: "Be brief."}) || later[0] != first[0] || len(later) != 4 || it.Prompt.InputTokens != 3 {
		t.Fatalf("first turn %+v (%d tokens), later %+v; want the system prompt first in each", first, it.Prompt.InputTokens, later)
	}
	if n, ok := PassRequests(src); !ok || n != 2 {
		t.Fatalf("PassRequests = %d, %v; want the file's 2 requests", n, ok)
	}
	list, err := New(scenarios.Dataset{SystemPrompt: "Sys.", Prompts: &scenarios.Prompts{Texts: []string{"hello there"}, OutputTokens: scenarios.Lengths{Mean: 4}}}, Options{Seed: 1, Component: "probe/p"})
	if err != nil {
		t.Fatal(err)
	}
	if p := items(t, list, 1)[0].Prompt; len(p.Messages) != 2 || p.Messages[1] != (Message{Role: "user", Content: "hello there"}) || p.Text != "Sys.\nhello there" || p.InputTokens != 3 {
		t.Fatalf("prompt %+v; want the system prompt, then the text", p)
	}
}

// TestWarmupSharesPrefixes checks that another probe (a warmup) with the
// same seed sends the same shared system prompt, prefixes and pool entries,
// in its own order, so that it warms the cache its measured run hits, while
// fresh prompts stay its own.
func TestWarmupSharesPrefixes(t *testing.T) {
	s := scenarios.Synthetic{SharedSystemPromptLength: 20, Entries: 10, UserContextLength: 5}
	texts := func(component string) ([]string, string) {
		var out []string
		var system string
		for _, it := range items(t, newComponentSource(t, s, "", nil, 4, component), 10) {
			system = it.Prompt.Messages[0].Content
			out = append(out, it.Prompt.Text)
		}
		return out, system
	}
	run, runSystem := texts("burst/b")
	warm, warmSystem := texts("burst/b/warmup")
	if runSystem != warmSystem || !reflect.DeepEqual(slices.Sorted(slices.Values(run)), slices.Sorted(slices.Values(warm))) {
		t.Fatal("the warmup sent other system prompts or entries than its run")
	}
	if slices.Equal(run, warm) {
		t.Error("the warmup sent the entries in the run's order; want its own")
	}
	s = scenarios.Synthetic{Prefix: &scenarios.PrefixPool{PoolSize: 1, Length: 8}}
	a := items(t, newComponentSource(t, s, "", nil, 4, "burst/b"), 1)[0].Prompt.Text
	b := items(t, newComponentSource(t, s, "", nil, 4, "burst/b/warmup"), 1)[0].Prompt.Text
	if !slices.Equal(strings.Fields(a)[:8], strings.Fields(b)[:8]) || a == b {
		t.Fatalf("run %q and warmup %q: want the same prefix, then prompts of their own", a, b)
	}
}

// TestPositiveInteger checks AIPerf's sampling at its edges: a fixed mean
// is rounded, draws below 0 are drawn again (so a wide spread raises the
// mean), and the result is at least 1.
func TestPositiveInteger(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	if got := positiveInteger(rng, 2.6, 0); got != 3 {
		t.Errorf("mean 2.6, stddev 0: %d, want 3", got)
	}
	if got := positiveInteger(rng, 0.2, 0); got != 1 {
		t.Errorf("mean 0.2, stddev 0: %d, want 1", got)
	}
	var xs []float64
	for range 20000 {
		xs = append(xs, float64(positiveInteger(rng, 1, 3)))
	}
	// Normal(1, 3) truncated at 0 has mean 1 + 3·φ(1/3)/Φ(1/3) ≈ 2.80;
	// rounding up adds about 0.5. Clamping at 0 instead would give ≈ 2.5.
	if mean, _ := moments(xs); math.Abs(mean-3.3) > 0.1 || slices.Min(xs) < 1 {
		t.Errorf("mean 1, stddev 3: mean %.2f, min %v; want about 3.3, at least 1", mean, slices.Min(xs))
	}
}
