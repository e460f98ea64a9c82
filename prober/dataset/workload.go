package dataset

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/inferprobe/inferprobe/prober/seeded"
	"github.com/inferprobe/inferprobe/scenarios"
)

// workload is a synthetic source with AIPerf's workload options: a system
// message (verbatim or generated), a prefix pool, per-entry user context, a
// pool of entries reused in shuffled order, and multi-turn conversations.
type workload struct {
	cfg   scenarios.Synthetic
	words *Text
	seed  uint64
	// system is the system message of every request; "" for none.
	system string
	// fresh draws the entries of a source without a pool: each is new.
	fresh entryStreams
	// order is the pool's order; nil without a pool.
	order *poolOrder
	// sessions counts the conversations sent, naming each session.
	sessions uint64
	// media are the entries' images and audio; nil for none.
	media *mediaPool
}

// entryStreams are the random streams one entry is drawn from.
type entryStreams struct {
	lengths, text, turns, delays, pick *rand.Rand
	// index is the entry's place in the pool; -1 outside one.
	index int
}

// usesWorkload reports whether s sets any workload option; a synthetic
// source without one (and without a system prompt) draws exactly as it
// always has, so its digest stays.
func usesWorkload(s scenarios.Synthetic) bool {
	return s.SharedSystemPromptLength > 0 || s.Prefix != nil ||
		s.UserContextLength > 0 || s.Entries > 0 || s.Conversation != nil || s.HasMedia()
}

func newWorkload(cfg scenarios.Synthetic, system string, text *Text, o Options) (*workload, error) {
	w := &workload{cfg: cfg, words: text, seed: o.Seed, system: system}
	if cfg.SharedSystemPromptLength > 0 {
		w.system = text.Words(seeded.New(o.Seed, sharedStreams+"/system"), cfg.SharedSystemPromptLength)
	}
	if cfg.HasMedia() {
		var err error
		if w.media, err = newMediaPool(cfg, o.Seed); err != nil {
			return nil, err
		}
	}
	if cfg.Entries > 0 {
		w.order = newPoolOrder(o.Seed, o.Component, cfg.Entries)
	} else {
		// The same streams as a plain synthetic source's lengths and text, so
		// the prompts differ from its only by what the options add.
		w.fresh = entryStreams{
			lengths: seeded.New(o.Seed, o.Component+"/lengths"),
			text:    seeded.New(o.Seed, o.Component+"/text"),
			turns:   freshTurns(o.Seed, o.Component),
			delays:  seeded.New(o.Seed, o.Component+"/delays"),
			pick:    seeded.New(o.Seed, o.Component+"/prefix-pick"),
			index:   -1,
		}
	}
	return w, nil
}

// sharedStreams names the streams of what a workload shares between
// requests (the system prompt, prefixes, user contexts, pool entries): they
// depend on the seed alone, not on the probe, so that a warmup sends the
// very prefixes and entries its measured run then finds in the server's
// cache, as AIPerf's warmup draws from the run's dataset. Only the order of
// the pool and fresh prompts are the probe's own.
const sharedStreams = "synthetic"

// indexed is the stream of one numbered thing (a pool entry, a prefix)
// under name: a function of the seed, the name and the index alone, so an
// entry is the same each time it is drawn and need not be kept.
func indexed(seed uint64, name string, i int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed^uint64(i)*0x9e3779b97f4a7c15, h.Sum64()))
}

// entryTurns is the stream of entry i's turn count, and freshTurns that of
// the new conversations of a source without a pool: apart from the rest,
// so that a run's length in requests is known without building its
// prompts (SessionRequests).
func entryTurns(seed uint64, i int) *rand.Rand { return indexed(seed, sharedStreams+"/turns", i) }

func freshTurns(seed uint64, component string) *rand.Rand {
	return seeded.New(seed, component+"/turns")
}

// poolOrder yields a pool's entries in a seeded shuffled order, shuffled
// again after each pass.
type poolOrder struct {
	shuffle *rand.Rand
	n, next int
	perm    []int
}

func newPoolOrder(seed uint64, component string, n int) *poolOrder {
	return &poolOrder{shuffle: seeded.New(seed, component+"/order"), n: n}
}

func (o *poolOrder) entry() int {
	if o.next == len(o.perm) {
		o.perm = o.shuffle.Perm(o.n)
		o.next = 0
	}
	o.next++
	return o.perm[o.next-1]
}

// Next returns the next conversation: a new one, or the pool's next entry.
func (w *workload) Next() (Item, error) {
	if w.cfg.Entries == 0 {
		return w.conversation(w.fresh), nil
	}
	i := w.order.entry()
	rng := indexed(w.seed, sharedStreams+"/entry", i)
	return w.conversation(entryStreams{lengths: rng, text: rng, turns: entryTurns(w.seed, i), delays: rng, pick: rng, index: i}), nil
}

// turnCount draws the number of user turns of a conversation of s.
func turnCount(s scenarios.Synthetic, rng *rand.Rand) int {
	if !s.MultiTurn() {
		return 1
	}
	// Truncated to the bound, which a tail draw could pass.
	return min(positiveInteger(rng, s.Conversation.Turns.Mean, s.Conversation.Turns.Stddev), int(scenarios.TurnBound.Max))
}

// positiveInteger draws as AIPerf's sample_positive_normal_integer does,
// for turn counts, think times (in ms) and the lengths of a sequence
// distribution's pairs: normal(mean, stddev) truncated
// at 0 (redrawn below it), rounded up, at least 1; with stddev 0, mean
// rounded. Rounding up puts the mean about half a unit above mean.
func positiveInteger(rng *rand.Rand, mean, stddev float64) int {
	if stddev <= 0 {
		return max(1, int(math.Round(mean)))
	}
	v := max(mean, 0) // AIPerf's fallback when no draw lands in range
	for range 10000 {
		if x := mean + rng.NormFloat64()*stddev; x >= 0 {
			v = x
			break
		}
	}
	return max(1, int(math.Ceil(v)))
}

// conversation builds one entry: its first request and later turns, each
// carrying the conversation so far.
func (w *workload) conversation(st entryStreams) Item {
	if r := w.cfg.Rankings; r != nil { // a pool of ranking requests (scenarios.Synthetic.Rankings)
		return Item{Prompt: w.words.ranking(st.lengths, st.text, *r)}
	}
	var history []Message
	if w.system != "" {
		history = append(history, Message{Role: "system", Content: w.system})
	}
	if w.cfg.UserContextLength > 0 {
		ctx := w.words.Words(indexed(w.seed, sharedStreams+"/context", st.index), w.cfg.UserContextLength)
		history = append(history, Message{Role: "user", Content: ctx})
	}
	var session string
	if w.cfg.MultiTurn() {
		w.sessions++
		session = "synthetic-" + strconv.FormatUint(w.sessions, 10)
	}
	n := turnCount(w.cfg, st.turns)
	var it Item
	for t := range n {
		in, out := drawLengths(st.lengths, w.cfg)
		text := w.words.Words(st.text, in)
		if t == 0 && w.cfg.Prefix != nil {
			// As AIPerf: the prefix starts the conversation's first user message.
			k := st.pick.IntN(w.cfg.Prefix.PoolSize)
			text = w.words.Words(indexed(w.seed, sharedStreams+"/prefix", k), w.cfg.Prefix.Length) + " " + text
		}
		var media *Media
		if w.media != nil {
			// As AIPerf, every turn carries media of its own, and later
			// turns send the earlier turns' again in the history.
			media = w.media.entry(st.index, t)
		}
		history = append(history, Message{Role: "user", Content: text, Media: media})
		p := w.prompt(history, out)
		p.Session = session
		p.Media = media
		if t == 0 {
			it.Prompt = p
		} else {
			it.Turns = append(it.Turns, Turn{Prompt: p, Delay: w.delay(st.delays)})
		}
		if t < n-1 {
			// A stand-in for the answer, of the length asked for: the server's
			// own would make the prompts depend on the server, not the seed.
			history = append(history, Message{Role: "assistant", Content: w.words.Words(st.text, out)})
		}
	}
	return it
}

// prompt is the request of the conversation so far: a lone user message is
// sent as text, as plain synthetic prompts are; otherwise the messages, and
// as text their contents one per line (for the APIs that take one text).
func (w *workload) prompt(history []Message, out int) Prompt {
	p := Prompt{Exact: w.words.Exact(), OutputTokens: out}
	if len(history) == 1 {
		p.Text = history[0].Content
	} else {
		p.Messages = append([]Message(nil), history...)
		parts := make([]string, len(history))
		for i, m := range history {
			parts[i] = m.Content
		}
		p.Text = strings.Join(parts, "\n")
	}
	p.InputTokens = w.words.Count(p.Text)
	return p
}

// delay draws a think time as AIPerf does: none when the mean is 0, else
// a positiveInteger of milliseconds.
func (w *workload) delay(rng *rand.Rand) time.Duration {
	d := w.cfg.Conversation.TurnDelay
	if d.Mean <= 0 {
		return 0
	}
	ms := func(v scenarios.Duration) float64 { return float64(v) / float64(time.Millisecond) }
	return time.Duration(positiveInteger(rng, ms(d.Mean), ms(d.Stddev))) * time.Millisecond
}

// withSystem puts the dataset's system prompt ahead of every request of a
// source that does not compose its own messages (prompts, files).
type withSystem struct {
	src    Source
	system string
	tokens int
}

func (s *withSystem) Next() (Item, error) {
	it, err := s.src.Next()
	if err != nil {
		return it, err
	}
	it.Prompt = s.add(it.Prompt)
	for i := range it.Turns {
		it.Turns[i].Prompt = s.add(it.Turns[i].Prompt)
	}
	return it, nil
}

func (s *withSystem) add(p Prompt) Prompt {
	msgs := p.Messages
	if len(msgs) == 0 {
		msgs = []Message{{Role: "user", Content: p.Text}}
	}
	p.Messages = append([]Message{{Role: "system", Content: s.system}}, msgs...)
	p.Text = s.system + "\n" + p.Text
	p.InputTokens += s.tokens
	return p
}

// SessionRequests returns how many requests the first sessions
// conversations that the probe of component sends with synthetic dataset s
// take (every turn counts): the length of a run bounded by conversations,
// as AIPerf's --conversation-num bounds it. It draws only turn counts.
func SessionRequests(s scenarios.Synthetic, seed uint64, component string, sessions int) uint64 {
	var total uint64
	if s.Entries == 0 {
		turns := freshTurns(seed, component)
		for range sessions {
			total += uint64(turnCount(s, turns))
		}
		return total
	}
	order := newPoolOrder(seed, component, s.Entries)
	for range sessions {
		total += uint64(turnCount(s, entryTurns(seed, order.entry())))
	}
	return total
}
