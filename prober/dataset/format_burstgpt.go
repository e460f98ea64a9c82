package dataset

import (
	"strconv"

	"github.com/inferprobe/inferprobe/scenarios"
)

// FormatBurstGPT is BurstGPT's CSV.
const FormatBurstGPT = "burstgpt"

func init() {
	registerFormat(scenarios.FileFormat{Name: FormatBurstGPT, AIPerfName: "burst_gpt_trace", Timestamps: scenarios.TimestampsAlways}, newBurstGPT)
}

// burstGPT reads BurstGPT: Timestamp (s),Model,Request tokens,Response tokens,….
// Rows with 0 response tokens (failed in the original log) are sent asking
// for one.
type burstGPT struct{ *table }

func newBurstGPT(in input, name string) (reader, error) {
	t, err := newTable(in, name, FormatBurstGPT, "Timestamp", "Request tokens", "Response tokens")
	if err != nil {
		return nil, err
	}
	return burstGPT{t}, nil
}

func (r burstGPT) next() (record, error) {
	f, err := r.table.next()
	if err != nil {
		return record{}, err
	}
	rec := record{line: r.line, hasTS: true}
	s, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return record{}, r.errorf("Timestamp %q is not a number of seconds", f[0])
	}
	rec.ts = s * 1000
	if rec.in, err = r.tokens("Request tokens", f[1]); err != nil {
		return record{}, err
	}
	if rec.out, err = r.tokens("Response tokens", f[2]); err != nil {
		return record{}, err
	}
	return rec, nil
}
