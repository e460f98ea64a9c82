package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// lines reads a JSONL file a line at a time, skipping blank lines.
type lines struct {
	sc   *bufio.Scanner
	name string
	line int
}

func newLines(in io.Reader, name string) *lines {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &lines{sc: sc, name: name}
}

// next returns the next non-blank line, or io.EOF.
func (l *lines) next() ([]byte, error) {
	for l.sc.Scan() {
		l.line++
		if b := bytes.TrimSpace(l.sc.Bytes()); len(b) > 0 {
			return b, nil
		}
	}
	switch err := l.sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		l.line++ // the scanner gave up inside the line after the last one counted
		return nil, l.errorf("line longer than %d MiB", maxLine>>20)
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", l.name, err)
	}
	return nil, io.EOF
}

func (l *lines) errorf(format string, args ...any) error {
	return &LineError{File: l.name, Line: l.line, Reason: fmt.Sprintf(format, args...)}
}

// decode parses line b as JSON into v, naming the format in the error.
func (l *lines) decode(b []byte, v any, format, example string) error {
	if err := json.Unmarshal(b, v); err != nil {
		return l.errorf("not a %s entry (%s); want e.g. %s", format, strings.TrimPrefix(err.Error(), "json: "), example)
	}
	return nil
}

// outputLength is an entry's output length, defaultOutput when absent.
func outputLength(v *int) int {
	if v == nil {
		return defaultOutput
	}
	return *v
}

// textField is the "text" or "texts" of an AIPerf entry: texts are strings,
// or objects whose "contents" are strings, joined by newlines.
type textField struct {
	Text  *string           `json:"text"`
	Texts []json.RawMessage `json:"texts"`
}

func (t textField) join() (string, error) {
	if t.Text != nil {
		if len(t.Texts) > 0 {
			return "", errors.New("sets both text and texts; keep one")
		}
		return *t.Text, nil
	}
	var parts []string
	for _, raw := range t.Texts {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			parts = append(parts, s)
			continue
		}
		var obj struct {
			Contents []string `json:"contents"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return "", fmt.Errorf("texts holds %s; want strings or {\"contents\": [strings]}", raw)
		}
		parts = append(parts, obj.Contents...)
	}
	return strings.Join(parts, "\n"), nil
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
	if err := r.decode(b, &e, "single_turn", singleTurnExample); err != nil {
		return record{}, err
	}
	text, err := e.join()
	if err != nil {
		return record{}, r.errorf("%v", err)
	}
	if strings.TrimSpace(text) == "" {
		return record{}, r.errorf("has no text; want e.g. %s", singleTurnExample)
	}
	rec := record{line: r.line, text: text, out: outputLength(e.OutputLength), session: e.SessionID}
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

// multiTurn reads AIPerf's multi_turn JSONL: one session a line.
type multiTurn struct{ *lines }

func newMultiTurn(in input, name string) (reader, error) {
	return multiTurn{newLines(in, name)}, nil
}

const multiTurnExample = `{"session_id": "s1", "turns": [{"text": "Hi", "output_length": 16}, {"text": "More?", "delay": 2000}]}`

func (r multiTurn) next() (record, error) {
	b, err := r.lines.next()
	if err != nil {
		return record{}, err
	}
	var e struct {
		SessionID string `json:"session_id"`
		Turns     []struct {
			singleTurnLine
			Role string `json:"role"`
		} `json:"turns"`
	}
	if err := r.decode(b, &e, "multi_turn", multiTurnExample); err != nil {
		return record{}, err
	}
	rec := record{line: r.line, session: e.SessionID}
	if rec.session == "" {
		rec.session = fmt.Sprintf("line-%d", r.line)
	}
	users := 0
	for i, t := range e.Turns {
		text, err := t.join()
		if err != nil {
			return record{}, r.errorf("turn %d %v", i+1, err)
		}
		if strings.TrimSpace(text) == "" {
			return record{}, r.errorf("turn %d has no text", i+1)
		}
		tu := turn{text: text}
		switch t.Role {
		case "", "user":
			users++
			if t.OutputLength != nil {
				tu.out = *t.OutputLength
			}
			if t.Delay != nil {
				tu.delay = *t.Delay
			}
		case "assistant":
			tu.assistant = true
		default:
			return record{}, r.errorf("turn %d has role %q; want user or assistant", i+1, t.Role)
		}
		rec.turns = append(rec.turns, tu)
		if i == 0 && t.Timestamp != nil {
			rec.ts, rec.hasTS = *t.Timestamp, true
		}
	}
	if users == 0 {
		return record{}, r.errorf("has no user turn; want e.g. %s", multiTurnExample)
	}
	return rec, nil
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
	if err := r.decode(b, &e, "mooncake", mooncakeExample); err != nil {
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
