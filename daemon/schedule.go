package daemon

import (
	"context"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/inferprobe/inferprobe/scenarios"
)

// clock is the time source of burst schedules and run timestamps; tests
// replace it with a fake they advance by hand.
type clock interface {
	Now() time.Time
	// At returns a channel that receives the time once t has come. An
	// instant rather than a delay, so that a fake clock advanced while the
	// caller computes its wait cannot push the wake-up later.
	At(t time.Time) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                  { return time.Now() }
func (realClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

// schedule is when a burst starts by itself: at cron times, or at an
// interval from when it was loaded.
type schedule struct {
	cron  cron.Schedule
	every time.Duration
}

// newSchedule returns b's schedule, or nil for a burst only started on demand.
func newSchedule(b *scenarios.Burst) *schedule {
	switch {
	case b.Schedule != "":
		s, err := scenarios.ParseSchedule(b.Schedule)
		if err != nil {
			panic("daemon: a loaded burst has a bad schedule: " + err.Error()) // Load validated it
		}
		return &schedule{cron: s}
	case b.Every > 0:
		return &schedule{every: time.Duration(b.Every)}
	}
	return nil
}

// next is the first start after t.
func (s *schedule) next(t time.Time) time.Time {
	if s.cron != nil {
		return s.cron.Next(t)
	}
	return t.Add(s.every)
}

// after is the start that follows one due at due, once the scheduler has
// woken at now: starts missed in between (a suspended machine, a stalled
// process) are dropped, not run in a row.
func (s *schedule) after(due, now time.Time) time.Time {
	next := s.next(due)
	switch {
	case next.After(now):
		return next
	case s.cron != nil:
		return s.cron.Next(now)
	}
	return next.Add(s.every * (now.Sub(next)/s.every + 1))
}

// describe is the schedule as the API shows it.
func describe(b *scenarios.Burst) string {
	if b.Schedule != "" {
		return b.Schedule
	}
	if b.Every > 0 {
		return "every " + b.Every.String()
	}
	return ""
}

// runSchedules starts scheduled bursts when they are due until ctx ends. It
// sleeps until the earliest next start, and wakes early when a reload changes
// the schedules.
func (m *burstManager) runSchedules(ctx context.Context) {
	for {
		now := m.clock.Now()
		next := m.startDue(now)
		var wait <-chan time.Time
		if !next.IsZero() {
			wait = m.clock.At(next)
		}
		select {
		case <-ctx.Done():
			return
		case <-wait:
		case <-m.wake:
		}
	}
}
