package export

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// firstMessageWidth clips the first message of each error reason: enough for
// a server's one-line error (an OpenAI error body, a dial error), not a page.
const firstMessageWidth = 160

// consoleErrors prints, per error reason, how many requests failed for it and
// the first one's message: the server's own text says what to fix (a wrong
// model, a missing key) where a count cannot.
func consoleErrors(w io.Writer, counts map[record.Reason]int, reqs []report.RequestRecord) {
	if len(counts) == 0 {
		return
	}
	first := make(map[record.Reason]string, len(counts))
	for _, q := range reqs { // in sequence order
		if q.Outcome == record.OutcomeError && q.Err != "" {
			if _, ok := first[q.Reason]; !ok {
				first[q.Reason] = q.Err
			}
		}
	}
	fmt.Fprintf(w, "%-52s %10s  %s\n", "Errors by reason", "count", "first message")
	for _, reason := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(w, "  %-50s %10d  %s\n", reason, counts[reason], clipLine(first[reason], firstMessageWidth))
	}
}

// clipLine puts s on one line of at most n runes, marking a cut with "…".
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
