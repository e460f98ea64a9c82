package dataset

import "github.com/inferprobe/inferprobe/scenarios"

// FormatRandomPool is single_turn JSONL whose entries are drawn at random
// (seeded), with replacement, instead of in order: AIPerf's random pool
// from one file. The file's source holds them (fileSource.pool).
const FormatRandomPool = "random_pool"

func init() {
	registerFormat(scenarios.FileFormat{Name: FormatRandomPool, Timestamps: scenarios.TimestampsNever}, newSingleTurn)
}
