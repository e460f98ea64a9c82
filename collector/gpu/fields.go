package gpu

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
	"github.com/prometheus/client_golang/prometheus"
)

// defaultCounters is the field list used when no fields file is given.
//
//go:embed default-counters.csv
var defaultCounters string

const defaultCountersName = "default-counters.csv (built in)"

// Field is one line of a field list: a DCGM field exported as the metric of
// the same name, as dcgm-exporter does.
type Field struct {
	Name string
	ID   dcgm.Short
	Type prometheus.ValueType // gauge or counter
	Help string
}

// isProfiling reports whether the field is a DCP (profiling) field. DCGM
// watches these through a separate module that is missing on many GPUs.
func (f Field) isProfiling() bool { return f.ID >= 1001 && f.ID < 1100 }

// LoadFields reads a field list in dcgm-exporter's counters format from path,
// or the built-in default when path is empty.
func LoadFields(path string) ([]Field, error) {
	if path == "" {
		return ParseFields(strings.NewReader(defaultCounters), defaultCountersName)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("GPU fields file: %w", err)
	}
	defer f.Close()
	return ParseFields(f, path)
}

// ParseFields parses a field list in dcgm-exporter's counters format: one
// `DCGM_FI_NAME, gauge|counter, help text` a line, blank lines and lines
// starting with '#' ignored. Every problem is reported, each with name:line.
func ParseFields(r io.Reader, name string) ([]Field, error) {
	var (
		fields []Field
		errs   []error
		seen   = map[dcgm.Short]int{} // field ID -> line, so aliases count as duplicates
		lineNo int
	)
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: "+format, append([]any{name, lineNo}, args...)...))
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// The help text may contain commas, so only the first two separate.
		parts := strings.SplitN(line, ",", 3)
		if len(parts) != 3 {
			fail("expected `DCGM_FI_NAME, gauge|counter, help text`, got %q", line)
			continue
		}
		fieldName, typ, help := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1]), unquote(strings.TrimSpace(parts[2]))
		id, ok := dcgm.GetFieldID(fieldName)
		if !ok {
			if s := suggest(fieldName); s != "" {
				fail("unknown DCGM field %q; did you mean %q?", fieldName, s)
			} else {
				fail("unknown DCGM field %q; expected a DCGM_FI_* name from DCGM's dcgm_fields.h", fieldName)
			}
			continue
		}
		var vt prometheus.ValueType
		switch typ {
		case "gauge":
			vt = prometheus.GaugeValue
		case "counter":
			vt = prometheus.CounterValue
		case "label":
			fail("type %q of %s: dcgm-exporter's label fields are not supported; expected gauge or counter, or comment the line out", typ, fieldName)
			continue
		default:
			fail("type %q of %s: expected gauge or counter", typ, fieldName)
			continue
		}
		if help == "" {
			fail("%s has no help text; expected `%s, %s, help text`", fieldName, fieldName, typ)
			continue
		}
		if prev, dup := seen[id]; dup {
			fail("%s is the same DCGM field (ID %d) as line %d", fieldName, id, prev)
			continue
		}
		seen[id] = lineNo
		fields = append(fields, Field{Name: fieldName, ID: id, Type: vt, Help: help})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("%s: no fields; expected lines such as `DCGM_FI_DEV_POWER_USAGE, gauge, Power draw (in W).`", name)
	}
	return fields, nil
}

// unquote accepts help text quoted as encoding/csv would write it, which is
// how dcgm-exporter reads its files.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return s
}

// suggest returns a known field name close to an unknown one, or "". go-dcgm
// does not export its list of names, so the candidates are the fields this
// package knows (the default list, which holds all the NVML fallback
// serves), plus the name itself upper-cased and with the DCGM_FI_ prefix.
func suggest(name string) string {
	up := strings.ToUpper(name)
	for _, c := range []string{up, "DCGM_FI_" + up} {
		if _, ok := dcgm.GetFieldID(c); ok && c != name {
			return c
		}
	}
	best, bestDist := "", len(up)/4+1
	for _, c := range knownFieldNames() {
		if d := editDistance(up, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

func knownFieldNames() []string {
	var names []string
	for line := range strings.Lines(defaultCounters) {
		if name, _, ok := strings.Cut(line, ","); ok && !strings.HasPrefix(name, "#") {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
