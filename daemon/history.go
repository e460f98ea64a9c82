package daemon

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// defaultHistorySize is how many finished runs are kept without
// WithHistory, as --storage.history-size defaults to.
const defaultHistorySize = 100

// history keeps the last finished burst runs. With a directory it also
// keeps each one in a JSON file named after the run, so that reports and
// last-run gauges survive a restart. A file that cannot be written costs
// the run its persistence, never the run itself.
type history struct {
	logger      *slog.Logger
	dir         string // "" keeps runs in memory only
	size        int
	writeErrors prometheus.Counter

	mu   sync.Mutex
	runs []RunInfo // oldest first
	// memory holds each run's artifacts by file name, without a directory;
	// memoryBytes is their size (burst_artifacts.go).
	memory      map[string]map[string][]byte
	memoryBytes int
}

func newHistory(logger *slog.Logger, dir string, size int, writeErrors prometheus.Counter) *history {
	return &history{logger: logger, dir: dir, size: max(size, 1), writeErrors: writeErrors}
}

// load reads the runs kept in the directory, oldest first, and removes the
// files beyond the bound. A file that does not parse is skipped with a
// warning; a directory that cannot be read leaves the history empty.
func (h *history) load() {
	if h.dir == "" {
		return
	}
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		h.logger.Error("cannot create --storage.path; burst runs will not survive a restart", "err", err)
		return
	}
	entries, err := os.ReadDir(h.dir)
	if err != nil {
		h.logger.Error("cannot read --storage.path; burst runs will not survive a restart", "err", err)
		return
	}
	var runs []RunInfo
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, ".run-"): // a write cut short by a crash
			_ = os.RemoveAll(filepath.Join(h.dir, name))
			continue
		case e.IsDir() || !strings.HasSuffix(name, ".json"):
			continue
		}
		data, err := os.ReadFile(filepath.Join(h.dir, name))
		var r RunInfo
		if err == nil {
			err = json.Unmarshal(data, &r)
		}
		if err == nil && r.ID+".json" != name {
			err = fmt.Errorf("holds run %q", r.ID)
		}
		if err != nil {
			h.logger.Warn("skipping a burst run file that cannot be read; delete it or fix it", "file", filepath.Join(h.dir, name), "err", err)
			continue
		}
		runs = append(runs, r)
	}
	slices.SortFunc(runs, func(a, b RunInfo) int { return cmp.Or(a.Ended.Compare(b.Ended), cmp.Compare(a.ID, b.ID)) })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs = runs
	h.trim()
}

// add keeps a finished run, writing its file first when there is a directory.
func (h *history) add(r RunInfo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dir != "" {
		if err := h.write(r); err != nil {
			h.writeErrors.Inc()
			h.logger.Error("cannot save burst run; it is kept in memory only", "run", r.ID, "err", err)
		}
	}
	h.runs = append(h.runs, r)
	h.trim()
}

// write saves r atomically: a crash leaves either the whole file or none.
func (h *history) write(r RunInfo) (err error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(h.dir, ".run-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(h.dir, r.ID+".json"))
}

// trim drops the oldest runs beyond the bound, and their files.
func (h *history) trim() {
	n := len(h.runs) - h.size
	if n <= 0 {
		return
	}
	for _, r := range h.runs[:n] {
		h.dropArtifacts(r.ID)
		if h.dir == "" {
			continue
		}
		if err := os.Remove(filepath.Join(h.dir, r.ID+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
			h.logger.Warn("cannot remove an old burst run file", "run", r.ID, "err", err)
		}
	}
	h.runs = slices.Delete(h.runs, 0, n)
}

// replace puts r in place of the kept run of its id (a share of a cluster
// run, replaced by the gathered report), or keeps it when there is none.
func (h *history) replace(r RunInfo) {
	h.mu.Lock()
	i := slices.IndexFunc(h.runs, func(k RunInfo) bool { return k.ID == r.ID })
	if i < 0 {
		h.mu.Unlock()
		h.add(r)
		return
	}
	defer h.mu.Unlock()
	if h.dir != "" {
		if err := h.write(r); err != nil {
			h.writeErrors.Inc()
			h.logger.Error("cannot save burst run; it is kept in memory only", "run", r.ID, "err", err)
		}
	}
	h.runs[i] = r
}

func (h *history) get(id string) (RunInfo, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.runs {
		if r.ID == id {
			return r, true
		}
	}
	return RunInfo{}, false
}

// newestFirst lists the kept runs, newest first.
func (h *history) newestFirst() []RunInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.runs)
	slices.Reverse(out)
	return out
}

// lastSucceeded is burst's newest run that ran to its end, of those that
// keep accepts.
func (h *history) lastSucceeded(burst string, keep func(RunInfo) bool) (RunInfo, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range slices.Backward(h.runs) {
		if r.Burst == burst && r.State == RunSucceeded && r.Report != nil && keep(r) {
			return r, true
		}
	}
	return RunInfo{}, false
}
