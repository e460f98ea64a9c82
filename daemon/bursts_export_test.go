package daemon

import "time"

// WithClock drives burst schedules and run timestamps from c, a fake clock
// in tests.
func WithClock(c interface {
	Now() time.Time
	At(time.Time) <-chan time.Time
}) Option {
	return func(d *Daemon) { d.bursts.clock = c }
}
