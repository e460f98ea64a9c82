package dataset

import (
	"strings"

	"github.com/inferprobe/inferprobe/scenarios"
)

// FormatSingleTurn is AIPerf's single_turn JSONL: one request a line.
const FormatSingleTurn = "single_turn"

func init() {
	registerFormat(scenarios.FileFormat{Name: FormatSingleTurn}, newSingleTurn)
}

// singleTurn reads AIPerf's single_turn JSONL: one request a line.
type singleTurn struct {
	*lines
	last float64 // the previous timestamp, which a delay counts from
}

func newSingleTurn(in input, name string) (reader, error) {
	return &singleTurn{lines: newLines(in, name)}, nil
}

type singleTurnLine struct {
	textField
	mediaField
	Timestamp    *float64 `json:"timestamp"`
	Delay        *float64 `json:"delay"`
	SessionID    string   `json:"session_id"`
	OutputLength *int     `json:"output_length"`
}

const singleTurnExample = `{"text": "What is a GPU?", "output_length": 64, "timestamp": 0}`

func (r *singleTurn) next() (record, error) {
	b, err := r.lines.next()
	if err != nil {
		return record{}, err
	}
	var e singleTurnLine
	if err := r.decode(b, &e, FormatSingleTurn, singleTurnExample); err != nil {
		return record{}, err
	}
	text, err := e.join()
	if err != nil {
		return record{}, r.errorf("%v", err)
	}
	media, err := e.values()
	if err != nil {
		return record{}, r.errorf("%v", err)
	}
	if strings.TrimSpace(text) == "" {
		if !media.empty() {
			return record{}, r.errorf("%s", mediaWithoutText)
		}
		return record{}, r.errorf("has no text; want e.g. %s", singleTurnExample)
	}
	rec := record{line: r.line, text: text, out: outputLength(e.OutputLength), session: e.SessionID, media: media}
	switch {
	case e.Timestamp != nil && e.Delay != nil:
		return record{}, r.errorf("sets both timestamp and delay; keep one")
	case e.Timestamp != nil:
		rec.ts, rec.hasTS = *e.Timestamp, true
	case e.Delay != nil:
		if *e.Delay < 0 {
			return record{}, r.errorf("delay %g ms is negative", *e.Delay)
		}
		// A delay counts from the line before.
		rec.ts, rec.hasTS = r.last+*e.Delay, true
	}
	r.last = rec.ts
	return rec, nil
}
