package dataset

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/inferprobe/inferprobe/prober/seeded"
	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/tokenizer"
)

// Item is what a probe sends for one entry of its dataset: one request, or
// the first request of a session whose later turns follow it.
type Item struct {
	Prompt Prompt
	// At is when a replayed trace sends the item, from the probe's start
	// (the file's timestamp, divided by the speed-up); 0 when not replaying.
	At time.Duration
	// Turns are a session's later requests, in order.
	Turns []Turn
	// CancelAfter, when > 0, is how long after its send the trace says this
	// request was cancelled.
	CancelAfter time.Duration
}

// Turn is a later request of a session.
type Turn struct {
	Prompt Prompt
	// Delay is the think time: the turn is sent this long after the previous
	// turn of its session ended.
	Delay time.Duration
}

// Source yields a probe's items, forever: files are read again from the
// start when they end. An error means the source cannot go on (the file
// became unreadable or changed under the probe).
type Source interface {
	Next() (Item, error)
}

// Options are what every source needs besides its scenario.
type Options struct {
	Seed uint64
	// Component names the probe's random streams (see package seeded).
	Component string
	// Tokenizer, when set, makes prompt lengths exact.
	Tokenizer *tokenizer.Tokenizer
	// Endpoint is the target's endpoint type: a file entry's images and
	// audio are refused unless it is chat (or unset).
	Endpoint string
}

// Component names the seeded streams of probe (or burst run) name: its
// dataset's, arrivals' and cancellations', so that whoever needs to know
// what a probe will send (bench's run length) draws from the same streams.
func Component(name string) string { return "probe/" + name }

// New returns the source of a validated dataset. A file is checked whole
// here, so a bad line is reported before anything is sent.
func New(d scenarios.Dataset, o Options) (Source, error) {
	text, err := NewText(o.Tokenizer)
	if err != nil {
		return nil, err
	}
	if s := d.Synthetic; s != nil && (d.SystemPrompt != "" || usesWorkload(*s)) {
		w, err := newWorkload(*s, d.SystemPrompt, text, o)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	src, err := newSource(d, text, o)
	if err != nil || d.SystemPrompt == "" {
		return src, err
	}
	return &withSystem{src: src, system: d.SystemPrompt, tokens: text.Count(d.SystemPrompt)}, nil
}

func newSource(d scenarios.Dataset, text *Text, o Options) (Source, error) {
	switch {
	case d.Prompts != nil:
		return newPromptList(*d.Prompts, text, o), nil
	case d.File != nil:
		return openFile(*d.File, text, o)
	case d.Synthetic != nil:
		return synthSource{newSynthetic(*d.Synthetic, o.Seed, o.Component, text)}, nil
	}
	return nil, fmt.Errorf("dataset sets no source")
}

type synthSource struct{ s *Synthetic }

func (s synthSource) Next() (Item, error) { return Item{Prompt: s.s.Next()}, nil }

// promptList picks prompts from a fixed list.
type promptList struct {
	prompts []Prompt
	out     scenarios.Lengths
	pick    *rand.Rand
	lengths *rand.Rand
}

func newPromptList(p scenarios.Prompts, text *Text, o Options) *promptList {
	l := &promptList{
		out:     p.OutputTokens,
		pick:    seeded.New(o.Seed, o.Component+"/pick"),
		lengths: seeded.New(o.Seed, o.Component+"/lengths"),
	}
	for _, t := range p.Texts {
		l.prompts = append(l.prompts, Prompt{Text: t, InputTokens: text.Count(t), Exact: text.Exact()})
	}
	return l
}

func (l *promptList) Next() (Item, error) {
	p := l.prompts[l.pick.IntN(len(l.prompts))]
	p.OutputTokens = drawOutput(l.lengths, l.out)
	return Item{Prompt: p}, nil
}
