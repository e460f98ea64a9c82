package dataset

import (
	"strings"

	"github.com/inferprobe/inferprobe/scenarios"
)

// FormatMooncake is Mooncake's trace JSONL (AIPerf's mooncake_trace).
const FormatMooncake = "mooncake"

func init() {
	registerFormat(scenarios.FileFormat{Name: FormatMooncake, AIPerfName: "mooncake_trace", Timestamps: scenarios.TimestampsAlways}, newMooncake)
}

// mooncake reads Mooncake (and AIPerf mooncake_trace) JSONL.
type mooncake struct{ *lines }

func newMooncake(in input, name string) (reader, error) {
	return mooncake{newLines(in, name)}, nil
}

const mooncakeExample = `{"timestamp": 0, "input_length": 1024, "output_length": 64, "hash_ids": [0, 1]}`

func (r mooncake) next() (record, error) {
	b, err := r.lines.next()
	if err != nil {
		return record{}, err
	}
	var e struct {
		Timestamp    *float64 `json:"timestamp"`
		InputLength  *int     `json:"input_length"`
		OutputLength *int     `json:"output_length"`
		HashIDs      []int64  `json:"hash_ids"`
		TextInput    *string  `json:"text_input"`
		SessionID    string   `json:"session_id"`
	}
	if err := r.decode(b, &e, FormatMooncake, mooncakeExample); err != nil {
		return record{}, err
	}
	rec := record{line: r.line, out: outputLength(e.OutputLength), session: e.SessionID}
	if e.Timestamp != nil {
		rec.ts, rec.hasTS = *e.Timestamp, true
	}
	switch {
	case e.TextInput != nil && e.InputLength != nil:
		return record{}, r.errorf("sets both text_input and input_length; keep one")
	case e.TextInput != nil:
		if strings.TrimSpace(*e.TextInput) == "" {
			return record{}, r.errorf("text_input is empty")
		}
		rec.text = *e.TextInput
	case e.InputLength != nil:
		rec.in = *e.InputLength
	default:
		return record{}, r.errorf("has neither input_length nor text_input; want e.g. %s", mooncakeExample)
	}
	for _, id := range e.HashIDs {
		rec.hashIDs = append(rec.hashIDs, uint64(id))
	}
	return rec, nil
}
