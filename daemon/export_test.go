package daemon

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// WithClock drives burst schedules and run timestamps from c, a fake clock
// in tests.
func WithClock(c interface {
	Now() time.Time
	At(time.Time) <-chan time.Time
}) Option {
	return func(d *Daemon) { d.bursts.clock = c }
}

// Registry is the registry d was given, for tests that read its metrics.
func (d *Daemon) Registry() *prometheus.Registry { return d.registry }

// Status is what /api/v1/status serves.
func (d *Daemon) Status() Status { return d.status() }
