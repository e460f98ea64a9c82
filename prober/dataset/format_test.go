package dataset

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/scenarios"
)

// TestFormatsDocumented: every registered file format has a row in the
// file formats table of docs/configuration.md, and every row a format.
func TestFormatsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n### File formats\n")
	if !ok {
		t.Fatal(`docs/configuration.md has no "### File formats" section`)
	}
	table, _, _ = strings.Cut(table, "\n###")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_0-9]+)` \\|").FindAllStringSubmatch(table, -1) {
		documented = append(documented, m[1])
	}
	for _, name := range scenarios.FormatNames() {
		if !slices.Contains(documented, name) {
			t.Errorf("format %s has no row in docs/configuration.md's file formats table", name)
		}
	}
	for _, name := range documented {
		if _, ok := scenarios.LookupFormat(name); !ok {
			t.Errorf("docs/configuration.md's file formats table has a row for %s, which is not registered", name)
		}
	}
}
