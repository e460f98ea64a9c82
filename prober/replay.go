package prober

import (
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
)

// replay sends at the dataset's own timestamps (dataset.file.timing:
// replay), a recorded trace as it was recorded.
type replay struct{}

func (replay) offset(it *dataset.Item) time.Duration { return it.At }

func (replay) loop(r *run) { r.sendAtOffsets() }
