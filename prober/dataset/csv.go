package dataset

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// table reads a CSV file with a header row, finding its columns by name
// (case-insensitively), so extra or reordered columns do not matter.
type table struct {
	r    *csv.Reader
	name string
	cols []int // index of each wanted column
	line int
}

func newTable(in io.Reader, name, format string, want ...string) (*table, error) {
	r := csv.NewReader(bufio.NewReaderSize(in, 64<<10))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	t := &table{r: r, name: name}
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, &LineError{File: name, Line: 1, Reason: fmt.Sprintf("is empty; a %s file starts with the header %s", format, strings.Join(want, ","))}
	}
	if err != nil {
		return nil, t.csvError(err)
	}
	for _, w := range want {
		i := -1
		for j, h := range header {
			if strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")), w) {
				i = j
				break
			}
		}
		if i < 0 {
			return nil, &LineError{File: name, Line: 1, Reason: fmt.Sprintf("the header has no column %q; a %s file starts with %s", w, format, strings.Join(want, ","))}
		}
		t.cols = append(t.cols, i)
	}
	return t, nil
}

func (t *table) csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &LineError{File: t.name, Line: pe.Line, Reason: "malformed CSV: " + pe.Err.Error()}
	}
	return fmt.Errorf("reading %s: %w", t.name, err)
}

// next returns the wanted fields of the next row, or io.EOF.
func (t *table) next() ([]string, error) {
	row, err := t.r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, t.csvError(err)
	}
	t.line, _ = t.r.FieldPos(0)
	out := make([]string, len(t.cols))
	for k, i := range t.cols {
		if i >= len(row) {
			return nil, t.errorf("has %d fields; the header has more", len(row))
		}
		out[k] = strings.TrimSpace(row[i])
	}
	return out, nil
}

func (t *table) errorf(format string, args ...any) error {
	return &LineError{File: t.name, Line: t.line, Reason: fmt.Sprintf(format, args...)}
}

// tokens parses a token count column.
func (t *table) tokens(column, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, t.errorf("%s %q is not a whole number", column, v)
	}
	return n, nil
}
