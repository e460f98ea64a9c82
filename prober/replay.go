package prober

import "time"

// replay sends at the dataset's own timestamps (dataset.file.timing:
// replay), a recorded trace as it was recorded.
type replay struct{}

func (replay) offset(at time.Duration) time.Duration { return at }

func (replay) loop(r *run) { r.sendAtOffsets() }
