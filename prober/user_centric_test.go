package prober

import (
	"context"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// TestUserCentricStart: the sessions of a user_centric probe start as
// AIPerf's UserCentricStrategy starts its users, the table of its docstring
// (15 users, 20 turns, 1 request/s): the users alive at the start at spread
// stages of their conversations, 1/rate apart, a new whole one first; then
// each finished user's replacement at its start plus its turns times the
// turn gap (users/rate = 15 s).
func TestUserCentricStart(t *testing.T) {
	p := datasetProbe(t, "http://127.0.0.1:9/v1", "{pattern: user_centric, rate: 1, users: 15}",
		"{synthetic: {input_tokens: {mean: 4}, conversation: {turns: {mean: 20}}}}")
	// AIPerf's table: turns sent by the user starting at each second.
	want := []int{20, 6, 11, 16, 2, 7, 12, 17, 3, 8, 13, 18, 4, 9, 14}
	// Then the replacements: the user of 4 s (2 turns) at 4+2·15 s, of
	// 8 s (3 turns) at 53 s, of 12 s at 72 s; whole conversations.
	type start struct {
		at    time.Duration
		turns int
	}
	var wantStarts []start
	for i, n := range want {
		wantStarts = append(wantStarts, start{time.Duration(i) * time.Second, n})
	}
	wantStarts = append(wantStarts, start{34 * time.Second, 20}, start{53 * time.Second, 20}, start{72 * time.Second, 20})
	var seq uint64
	for i, w := range wantStarts {
		pl := p.plan()
		if got := (start{pl.offset, 1 + len(pl.turns)}); got != w || pl.seq != seq {
			t.Fatalf("session %d: seq %d at %v with %d turns; want seq %d at %v with %d", i+1, pl.seq, got.at, got.turns, seq, w.at, w.turns)
		}
		if pl.turnGap != 15*time.Second {
			t.Fatalf("session %d: turn gap %v, want 15s", i+1, pl.turnGap)
		}
		seq += uint64(w.turns)
	}
}

// TestUserCentricSpacing: a user's later turns go the turn gap after the
// one before was due, or as soon as it ended when it took longer, never
// by think time from its end.
func TestUserCentricSpacing(t *testing.T) {
	const gap = 100 * time.Millisecond // 2 users at 20 requests/s
	for _, hold := range []time.Duration{10 * time.Millisecond, 160 * time.Millisecond} {
		t.Run(hold.String(), func(t *testing.T) {
			p := datasetProbe(t, "http://127.0.0.1:9/v1", "{pattern: user_centric, rate: 20, users: 2}",
				"{synthetic: {input_tokens: {mean: 4}, conversation: {turns: {mean: 3}, turn_delay: {mean: 1s}}}}")
			p.SetLimit(Limit{Requests: 6})
			exec := &sessionExec{hold: hold}
			rec := &recorder{}
			p.Run(context.Background(), context.Background(), exec, rec)
			bySession := map[string][]sessionReq{}
			for _, r := range exec.reqs {
				bySession[r.session] = append(bySession[r.session], r)
			}
			later := 0
			for name, turns := range bySession {
				for i := 1; i < len(turns); i++ {
					later++
					due := turns[i-1].scheduled.Add(gap)
					if turns[i-1].ended.After(due) {
						due = turns[i-1].ended
					}
					if d := turns[i].scheduled.Sub(due); d < -time.Millisecond || d > 20*time.Millisecond {
						t.Errorf("session %s turn %d scheduled %v from when it was due (the turn gap after the turn before was due, or its end)", name, i+1, d)
					}
				}
			}
			if later == 0 {
				t.Fatalf("no session sent a later turn: %d requests in %d sessions", len(exec.reqs), len(bySession))
			}
			for _, r := range rec.records {
				if r.Outcome != record.OutcomeOK {
					t.Errorf("request %d: %v", r.Seq, r.Outcome)
				}
			}
		})
	}
}
