package scenarios

import (
	"fmt"
	"strings"
)

// Error is one problem in a scenario file.
type Error struct {
	File   string
	Line   int // 1-based; 0 when the problem is with the whole file
	Column int // 1-based; 0 when unknown
	// Field is the dotted path of the field, e.g. probes.steady.arrival.rate;
	// empty for the file itself.
	Field string
	Msg   string
}

// Error formats e as FILE:LINE:COL: FIELD: MSG, leaving out the parts that are
// unknown, the way compilers do, so editors can jump to the spot.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in a scenario file, in file order.
type Errors []*Error

// Error puts one problem on each line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}
