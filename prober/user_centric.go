package prober

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
)

// userCentric is AIPerf's user-centric rate (pattern user_centric): users
// each send one multi-turn session, a turn every gap = users/rate seconds
// after the one before was sent (at once if it ended later), and a new
// user takes the place of each that finished, so that the sessions add up
// to rate requests per second. The run starts in a steady state, as
// AIPerf's: the users alive at the start are at spread stages of their
// sessions (their first sessions are cut to the turns they have left), and
// their first turns go stagger = 1/rate apart. Later users start on a
// fixed schedule, a finished user's start plus its turns times gap,
// whatever the server's speed, so it is an open loop.
//
// Sessions are handed to users in the order the users send their first
// turn, so that the planned offsets never decrease.
type userCentric struct {
	stagger, gap float64 // seconds
	// initial are the users alive at the start, by the time of their first
	// turn; turns is how many turns each sends, 0 for a whole session.
	initial []userStart
	// spawns are the start times of the later users, a min-heap.
	spawns spawnHeap
	// started counts the users that have been handed a session.
	started int
}

type userStart struct {
	at    float64
	turns int
}

// newUserCentric builds the schedule of users sharing rate, whose sessions
// have sessionTurns turns on average.
func newUserCentric(rate float64, users, sessionTurns int) *userCentric {
	u := &userCentric{stagger: 1 / rate, gap: float64(users) / rate}
	// The virtual history of AIPerf's UserCentricStrategy.setup_phase: user
	// i is (users-i)/users through a session lifetime of turns-1 gaps.
	lifetime := max(1, sessionTurns-1)
	step := 0 // when users and lifetime share a factor, the slots repeat: step through them instead
	if gcd(users, lifetime) > 1 {
		step = 1
		for s := 2; s < users; s++ {
			if gcd(users, s) == 1 {
				step = s
				break
			}
		}
	}
	for i := range users {
		age := (users - i) * lifetime
		left := lifetime - age/users
		if left <= 0 {
			continue // this user finished before the start: the new one below replaces it
		}
		slot := age % users
		if step > 0 {
			slot = i * step % users
		}
		u.initial = append(u.initial, userStart{at: float64(users-slot) * u.stagger, turns: left})
	}
	u.initial = append(u.initial, userStart{at: 0}) // a new user, first at the start
	slices.SortStableFunc(u.initial, func(a, b userStart) int { return cmp.Compare(a.at, b.at) })
	return u
}

// offset hands the next session to the next user to start and cuts it to
// the turns that user sends; it returns the first turn's offset.
func (u *userCentric) offset(it *dataset.Item) time.Duration {
	var at float64
	turns := 1 + len(it.Turns)
	if u.started < len(u.initial) {
		s := u.initial[u.started]
		at = s.at
		if s.turns > 0 {
			turns = s.turns
			it.Turns = it.Turns[:min(len(it.Turns), turns-1)]
		}
	} else {
		at = heap.Pop(&u.spawns).(float64)
	}
	u.started++
	// The user who replaces this one starts once this one's turns are due.
	heap.Push(&u.spawns, at+float64(turns)*u.gap)
	return seconds(at)
}

// turnGap is the time from one turn's send time to the next's.
func (u *userCentric) turnGap() time.Duration { return seconds(u.gap) }

func (u *userCentric) loop(r *run) { r.sendAtOffsets() }

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// seconds converts to a Duration, rounded to the nanosecond.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

type spawnHeap []float64

func (h spawnHeap) Len() int           { return len(h) }
func (h spawnHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h spawnHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *spawnHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *spawnHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
