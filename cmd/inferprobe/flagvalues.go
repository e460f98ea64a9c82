package main

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"

	"github.com/inferprobe/inferprobe/scenarios"
)

// wholeValue is an int flag that takes a whole number ≥ 0 within bound (nil:
// any int), and refuses anything else: kingpin's own int flags truncate 1.5
// to 1 and wrap an overflow to a negative number.
type wholeValue struct {
	flag  string
	v     *int
	bound *scenarios.Bound
}

func whole(flag string, v *int, bound *scenarios.Bound) *wholeValue {
	return &wholeValue{flag: "--" + flag, v: v, bound: bound}
}

func (w *wholeValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, strconv.IntSize)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return fmt.Errorf("%s %s is out of range: must be %s", w.flag, s, w.rangeText())
	case err != nil:
		if f, ferr := strconv.ParseFloat(s, 64); ferr == nil && f != math.Trunc(f) {
			return fmt.Errorf("%s %s: must be a whole number", w.flag, s)
		}
		return fmt.Errorf("%s %q: must be a whole number, e.g. %s 10", w.flag, s, w.flag)
	case n < 0:
		return fmt.Errorf("%s %s: must be ≥ 0", w.flag, s)
	case w.bound != nil && float64(n) > w.bound.Max:
		return fmt.Errorf("%s %s is out of range: must be %s", w.flag, s, w.rangeText())
	}
	*w.v = int(n)
	return nil
}

func (w *wholeValue) rangeText() string {
	if w.bound != nil {
		return w.bound.Range()
	}
	return "0 to " + strconv.Itoa(math.MaxInt)
}

func (w *wholeValue) String() string { return strconv.Itoa(*w.v) }

// missingArgument is kingpin's parse error for a flag whose value it took
// for another flag, as it takes a negative number.
var missingArgument = regexp.MustCompile(`^expected argument for flag '(-[-\w.]+)'$`)

// negativeNumber matches what kingpin reads as a short flag but is a number.
var negativeNumber = regexp.MustCompile(`^-[0-9.]`)

// rewordParseError says "must be ≥ 0" where kingpin, reading a negative
// value as a flag, says "expected argument for flag".
func rewordParseError(err error, args []string) error {
	m := missingArgument.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	if i := slices.Index(args, m[1]); i >= 0 && i+1 < len(args) && negativeNumber.MatchString(args[i+1]) {
		return fmt.Errorf("%s %s: must be ≥ 0", m[1], args[i+1])
	}
	return err
}
