package dataset

import (
	"time"

	"github.com/inferprobe/inferprobe/scenarios"
)

// FormatAzure is the Azure LLM inference trace's CSV.
const FormatAzure = "azure"

func init() {
	registerFormat(scenarios.FileFormat{Name: FormatAzure, Timestamps: scenarios.TimestampsAlways, WallClock: true}, newAzure)
}

// azure reads the Azure LLM inference trace: TIMESTAMP,ContextTokens,GeneratedTokens.
type azure struct{ *table }

func newAzure(in input, name string) (reader, error) {
	t, err := newTable(in, name, FormatAzure, "TIMESTAMP", "ContextTokens", "GeneratedTokens")
	if err != nil {
		return nil, err
	}
	return azure{t}, nil
}

// azureLayouts are the timestamp forms of the 2023 and 2024 traces
// (fractional seconds are accepted after the seconds by time.Parse).
var azureLayouts = []string{"2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05", time.RFC3339Nano}

func (r azure) next() (record, error) {
	f, err := r.table.next()
	if err != nil {
		return record{}, err
	}
	rec := record{line: r.line, hasTS: true}
	var ts time.Time
	for _, layout := range azureLayouts {
		if ts, err = time.Parse(layout, f[0]); err == nil {
			break
		}
	}
	if err != nil {
		return record{}, r.errorf("TIMESTAMP %q is not a time like 2023-11-16 18:17:03.9799600", f[0])
	}
	rec.ts = float64(ts.UnixNano()) / 1e6
	if rec.in, err = r.tokens("ContextTokens", f[1]); err != nil {
		return record{}, err
	}
	if rec.out, err = r.tokens("GeneratedTokens", f[2]); err != nil {
		return record{}, err
	}
	return rec, nil
}
