package simulator

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The schedule is absolute: chunk k is due at the first token's time plus
// the ITLs of the tokens up to its last one, plus the stall once it has
// happened.
func TestGenerationSchedule(t *testing.T) {
	base := time.Unix(1000, 0)
	const itl, stall = time.Millisecond, time.Second
	at := func(d time.Duration) time.Time { return base.Add(d) }
	for _, tc := range []struct {
		name              string
		tokens, perChunk  int
		stallAt           int
		wantDue           []time.Time
		wantFinish        time.Time
		wantWordsPerChunk []int
	}{
		{"one per chunk", 4, 1, 0, []time.Time{at(0), at(itl), at(2 * itl), at(3 * itl)}, at(3 * itl), []int{1, 1, 1, 1}},
		{"stall before token 2", 4, 1, 2, []time.Time{at(0), at(itl), at(stall + 2*itl), at(stall + 3*itl)}, at(stall + 3*itl), []int{1, 1, 1, 1}},
		{"stall before the final chunk", 3, 1, 3, []time.Time{at(0), at(itl), at(2 * itl)}, at(stall + 2*itl), []int{1, 1, 1}},
		{"chunks due with their last token", 7, 3, 0, []time.Time{at(2 * itl), at(5 * itl), at(6 * itl)}, at(6 * itl), []int{3, 3, 1}},
		{"stall inside a chunk", 6, 3, 4, []time.Time{at(2 * itl), at(stall + 5*itl)}, at(stall + 5*itl), []int{3, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := generation{
				rng: rand.New(rand.NewPCG(1, 1)), itl: newSampler(Constant, itl, 0),
				tokens: tc.tokens, perChunk: tc.perChunk, stallAt: tc.stallAt, stall: stall, due: base,
			}
			var dues []time.Time
			var counts []int
			for g.more() {
				text, due := g.appendChunk(nil)
				dues, counts = append(dues, due), append(counts, countWords(string(text)))
			}
			if !slices.Equal(dues, tc.wantDue) || !slices.Equal(counts, tc.wantWordsPerChunk) {
				t.Errorf("chunks due %v with %v words, want %v with %v", dues, counts, tc.wantDue, tc.wantWordsPerChunk)
			}
			if got := g.finishDue(); !got.Equal(tc.wantFinish) {
				t.Errorf("finish due %v, want %v", got, tc.wantFinish)
			}
		})
	}
}
