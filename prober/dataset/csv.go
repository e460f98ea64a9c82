package dataset

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
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

// azure reads the Azure LLM inference trace: TIMESTAMP,ContextTokens,GeneratedTokens.
type azure struct{ *table }

func newAzure(in input, name string) (reader, error) {
	t, err := newTable(in, name, "azure", "TIMESTAMP", "ContextTokens", "GeneratedTokens")
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

// burstGPT reads BurstGPT: Timestamp (s),Model,Request tokens,Response tokens,….
// Rows with 0 response tokens (failed in the original log) are sent asking
// for one.
type burstGPT struct{ *table }

func newBurstGPT(in input, name string) (reader, error) {
	t, err := newTable(in, name, "burstgpt", "Timestamp", "Request tokens", "Response tokens")
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
