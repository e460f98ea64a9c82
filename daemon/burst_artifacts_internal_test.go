package daemon

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestArtifactsMemoryBound: without a directory, the artifacts kept in memory stay within
// memoryArtifactBytes: the oldest runs' go first, a run whose own are larger keeps none, and
// a run the history drops takes its artifacts with it.
func TestArtifactsMemoryBound(t *testing.T) {
	h := newHistory(slog.New(slog.DiscardHandler), "", 3, prometheus.NewCounter(prometheus.CounterOpts{Name: "x"}))
	file := func(n int) map[string]func(io.Writer) error {
		return map[string]func(io.Writer) error{"report.html": func(w io.Writer) error {
			_, err := w.Write(bytes.Repeat([]byte{'x'}, n))
			return err
		}}
	}
	third := memoryArtifactBytes / 3
	for _, id := range []string{"a", "b", "c", "d"} {
		if err := h.keepArtifacts(id, file(third)); err != nil {
			t.Fatalf("run %s: %v", id, err)
		}
		h.add(RunInfo{ID: id})
	}
	kept := func() (ids []string) {
		for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
			if h.hasArtifacts(id) {
				ids = append(ids, id)
			}
		}
		return ids
	}
	// a's went for d's; then the history dropped a itself.
	if got := kept(); !slices.Equal(got, []string{"b", "c", "d"}) || h.memoryBytes != 3*third {
		t.Errorf("artifacts kept for %v (%d bytes), want b, c, d (%d)", got, h.memoryBytes, 3*third)
	}
	err := h.keepArtifacts("e", file(memoryArtifactBytes+1))
	if err == nil || !strings.Contains(err.Error(), "--storage.path") {
		t.Errorf("artifacts over the bound: %v; want an error that points at --storage.path", err)
	}
	h.add(RunInfo{ID: "e"}) // drops b, and its artifacts
	if got := kept(); !slices.Equal(got, []string{"c", "d"}) || h.memoryBytes != 2*third {
		t.Errorf("after the history dropped b: artifacts kept for %v (%d bytes), want c, d (%d)", got, h.memoryBytes, 2*third)
	}
	if _, err := h.artifact("c", "../d/report.html"); !errors.Is(err, ErrNoArtifact) {
		t.Errorf("a path for a name: %v, want ErrNoArtifact", err)
	}
}
