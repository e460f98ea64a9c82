package backtest

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CSVHeader is the first line of a records file.
var CSVHeader = []string{"unix_seconds", "target", "model", "ttft_seconds", "itl_seconds", "latency_seconds", "outcome", "good"}

// ReadCSV yields the probes of a records file: CSVHeader, then one request
// a line, in order of unix_seconds (when the request ended). ttft_seconds
// and itl_seconds are empty when absent; outcome is ok or error; good is 1
// when the request counts as good for goodput. An error names the line.
func ReadCSV(r io.Reader) iter.Seq2[Probe, error] {
	return func(yield func(Probe, error) bool) {
		cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
		cr.ReuseRecord = true
		cr.FieldsPerRecord = len(CSVHeader)
		header, err := cr.Read()
		switch {
		case errors.Is(err, io.EOF):
			yield(Probe{}, errors.New("line 1: empty file, no header"))
			return
		case err != nil:
			yield(Probe{}, err)
			return
		case !slices.Equal(header, CSVHeader):
			yield(Probe{}, fmt.Errorf("line 1: header %q, want %q", strings.Join(header, ","), strings.Join(CSVHeader, ",")))
			return
		}
		var last time.Time
		for {
			row, err := cr.Read()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(Probe{}, err) // csv's errors name the line
				return
			}
			line, _ := cr.FieldPos(0)
			p, err := parseRow(row)
			if err == nil && p.Time.Before(last) {
				err = fmt.Errorf("unix_seconds %s is before the line above's: rows must be sorted by time", row[0])
			}
			if err == nil {
				err = p.check()
			}
			if err != nil {
				yield(Probe{}, fmt.Errorf("line %d: %w", line, err))
				return
			}
			last = p.Time
			if !yield(p, nil) {
				return
			}
		}
	}
}

func parseRow(row []string) (Probe, error) {
	ns, ok := parseSeconds(row[0])
	if !ok {
		return Probe{}, fmt.Errorf("unix_seconds %q is not a number of seconds", row[0])
	}
	p := Probe{Time: time.Unix(0, ns), Target: row[1], Model: row[2]}
	var err error
	if p.TTFT, err = seconds("ttft_seconds", row[3], true); err != nil {
		return Probe{}, err
	}
	if p.ITL, err = seconds("itl_seconds", row[4], true); err != nil {
		return Probe{}, err
	}
	if p.Latency, err = seconds("latency_seconds", row[5], false); err != nil {
		return Probe{}, err
	}
	switch row[6] {
	case "ok":
		p.OK = true
	case "error":
	default:
		return Probe{}, fmt.Errorf("outcome %q, want ok or error", row[6])
	}
	switch row[7] {
	case "1":
		p.Good = true
	case "0":
	default:
		return Probe{}, fmt.Errorf("good %q, want 0 or 1", row[7])
	}
	return p, nil
}

// seconds parses a duration in seconds; an empty one is 0 if optional.
func seconds(column, s string, optional bool) (time.Duration, error) {
	if s == "" && optional {
		return 0, nil
	}
	ns, ok := parseSeconds(s)
	if !ok || ns <= 0 {
		return 0, fmt.Errorf("%s %q is not a positive number of seconds", column, s)
	}
	return time.Duration(ns), nil
}

// WriteCSV writes probes as a records file that ReadCSV reads.
func WriteCSV(w io.Writer, probes iter.Seq[Probe]) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	row := make([]string, len(CSVHeader))
	for p := range probes {
		row[0] = formatSeconds(p.Time.UnixNano())
		row[1], row[2] = p.Target, p.Model
		row[3], row[4] = "", ""
		if p.TTFT > 0 {
			row[3] = formatSeconds(int64(p.TTFT))
		}
		if p.ITL > 0 {
			row[4] = formatSeconds(int64(p.ITL))
		}
		row[5] = formatSeconds(int64(p.Latency))
		row[6], row[7] = "error", "0"
		if p.OK {
			row[6] = "ok"
		}
		if p.Good {
			row[7] = "1"
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// formatSeconds writes ns nanoseconds as seconds, exactly and without
// trailing zeros.
func formatSeconds(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	s := sign + strconv.FormatInt(ns/1e9, 10)
	if frac := ns % 1e9; frac != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%09d", frac), "0")
	}
	return s
}

// parseSeconds reads a number of seconds to the nanosecond: a decimal one
// exactly, which a float64 cannot do for a Unix time, any other through
// strconv.ParseFloat.
func parseSeconds(s string) (int64, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole != "" && len(frac) <= 9 && strings.Trim(whole+frac, "0123456789") == "" && len(whole) <= 10 {
		w, _ := strconv.ParseInt(whole, 10, 64)
		f, _ := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		return w*1e9 + f, true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.Abs(v) >= math.MaxInt64/1e9 {
		return 0, false
	}
	return int64(math.Round(v * 1e9)), true
}
