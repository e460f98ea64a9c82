package gpu

import "time"

// backoff spaces reconnection attempts: min, then doubling up to max, so a
// hostengine that is down for long is asked about once a max.
type backoff struct {
	min, max, next time.Duration
}

// delay returns the wait before the next attempt and lengthens the one after.
func (b *backoff) delay() time.Duration {
	d := max(b.next, b.min)
	b.next = min(2*d, b.max)
	return d
}

// reset makes the next delay min again, after a successful attempt.
func (b *backoff) reset() { b.next = 0 }
