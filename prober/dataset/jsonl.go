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

// outputLength is an entry's output length, outputAbsent when it gives none.
func outputLength(v *int) int {
	if v == nil {
		return outputAbsent
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
