package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

// memoryArtifactBytes bounds the artifacts kept in memory without --storage.path: a run's
// JSONL and inputs grow with its requests, so the oldest runs' artifacts go first, and a
// run whose own artifacts are larger keeps none.
const memoryArtifactBytes = 64 << 20

// ErrNoArtifact: the run has no such artifact (404): none of that name, or the run kept none
// (a search, a failed run, a cluster share, or artifacts dropped from memory).
var ErrNoArtifact = errors.New("no such artifact")

// Artifact is one file of a run's artifacts.
type Artifact struct {
	Name     string
	Content  io.ReadSeeker
	Modified time.Time
	close    func() error
}

// Close releases the artifact's file, if it has one.
func (a *Artifact) Close() error {
	if a.close == nil {
		return nil
	}
	return a.close()
}

// BurstArtifact returns the artifact name (report.html, profile_export.jsonl, …) of the
// run id; the caller closes it.
func (d *Daemon) BurstArtifact(id, name string) (*Artifact, error) {
	if _, ok := d.BurstRun(id); !ok {
		return nil, ErrUnknownRun
	}
	return d.bursts.history.artifact(id, name)
}

// BurstArtifacts lists the artifacts of the run id, by name; none when it kept none.
func (d *Daemon) BurstArtifacts(id string) ([]string, error) {
	if _, ok := d.BurstRun(id); !ok {
		return nil, ErrUnknownRun
	}
	return d.bursts.history.artifactNames(id), nil
}

// artifactFiles renders a run's AIPerf artifacts and HTML report, as bench writes them, for
// end to keep with the history once the run's own record is saved.
func (m *burstManager) artifactFiles(r *burstRun, cancelled bool, rep *BurstReport, res finite.Result) map[string]func(io.Writer) error {
	plan := r.run.Plan()
	run := export.Run{
		Summary: rep.Summary, Requests: export.ScrubErrors(rep.requests, r.target.Spec.Secrets()),
		Config: burstExportConfig(&r.spec, plan), SLO: plan.SLO, Digest: rep.Digest,
		ClientBound: rep.ClientBound, Interrupted: cancelled,
		GraceExpired: rep.GraceExpired, GraceCut: rep.GraceCut, GPUTelemetry: m.gpu != nil,
		ServerMetrics: res.ServerMetrics,
	}
	if res.ServerMetrics != nil { // AIPerf's default: both formats
		run.Config.ServerMetrics = export.ServerMetricsConfig{Enabled: true, Formats: []string{"json", "csv"}}
	}
	return export.RunFiles(run)
}

// burstExportConfig is a burst run's configuration as AIPerf's input_config describes it:
// the probe and limits it was planned with, overrides applied.
func burstExportConfig(spec *burstSpec, plan *finite.Plan) export.Config {
	p, t := plan.Probe, &spec.target
	c := export.Config{
		Model: t.Model, EndpointType: t.Endpoint, Streaming: t.Streaming(), URLs: []string{t.URL}, Seed: spec.seed,
		ExtraInputs: p.Params, Tokenizer: t.Tokenizer, WarmupRequests: int(plan.WarmupLimit.Requests),
		RequestCount: int(plan.Limit.Requests), Duration: plan.Limit.Duration.Seconds(),
		FixedSchedule: p.Dataset.Replays(),
	}
	c.SetDataset(p.Dataset)
	if p.Arrival.Pattern == scenarios.ArrivalConcurrency {
		c.Concurrency = p.Arrival.Concurrency
	} else {
		c.RequestRate, c.ArrivalPattern, c.Concurrency = p.Arrival.Rate, p.Arrival.Pattern, p.Arrival.MaxConcurrency
	}
	if p.Arrival.Pattern == scenarios.ArrivalUserCentric {
		c.Users = p.Arrival.Users
	}
	c.PrefillConcurrency = p.Arrival.MaxPrefillConcurrency
	return c
}

// keepArtifacts keeps the files of run id: under the history's directory, in id/ (written
// to a temporary directory and renamed, as the runs' files are), else in memory.
func (h *history) keepArtifacts(id string, files map[string]func(io.Writer) error) error {
	if h.dir == "" {
		return h.keepInMemory(id, files)
	}
	tmp, err := os.MkdirTemp(h.dir, ".run-")
	if err == nil {
		err = writeFiles(tmp, files)
		if err == nil {
			err = os.Rename(tmp, filepath.Join(h.dir, id))
		}
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}
	return err // logged; inferprobe_storage_write_errors_total counts the runs' own files
}

func writeFiles(dir string, files map[string]func(io.Writer) error) error {
	for name, write := range files {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = write(f)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (h *history) keepInMemory(id string, files map[string]func(io.Writer) error) error {
	kept := map[string][]byte{}
	size := 0
	for name, write := range files {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return err
		}
		kept[name] = b.Bytes()
		size += b.Len()
	}
	if size > memoryArtifactBytes {
		return fmt.Errorf("its artifacts take %d MiB, over the %d MiB kept in memory; set --storage.path to keep them on disk", size>>20, memoryArtifactBytes>>20)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.memory == nil {
		h.memory = map[string]map[string][]byte{}
	}
	h.memory[id] = kept
	h.memoryBytes += size
	// The oldest runs' go first; the runs kept are oldest first.
	for _, r := range h.runs {
		if h.memoryBytes <= memoryArtifactBytes {
			break
		}
		h.dropArtifacts(r.ID)
	}
	return nil
}

// dropArtifacts forgets the artifacts of run id; h.mu is held.
func (h *history) dropArtifacts(id string) {
	if h.dir != "" {
		if err := os.RemoveAll(filepath.Join(h.dir, id)); err != nil {
			h.logger.Warn("cannot remove an old burst run's artifacts", "run", id, "err", err)
		}
		return
	}
	for _, b := range h.memory[id] {
		h.memoryBytes -= len(b)
	}
	delete(h.memory, id)
}

// artifact opens the file name of run id's artifacts.
func (h *history) artifact(id, name string) (*Artifact, error) {
	// One file name, not a path: nothing but the run's own files can be read.
	if name == "" || name != filepath.Base(name) || name[0] == '.' {
		return nil, ErrNoArtifact
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dir == "" {
		b, ok := h.memory[id][name]
		if !ok {
			return nil, ErrNoArtifact
		}
		return &Artifact{Name: name, Content: bytes.NewReader(b)}, nil
	}
	f, err := os.Open(filepath.Join(h.dir, id, name))
	if err != nil {
		return nil, ErrNoArtifact
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, ErrNoArtifact
	}
	return &Artifact{Name: name, Content: f, Modified: fi.ModTime(), close: f.Close}, nil
}

// artifactNames lists the files of run id's artifacts, sorted.
func (h *history) artifactNames(id string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dir == "" {
		return slices.Sorted(maps.Keys(h.memory[id]))
	}
	entries, err := os.ReadDir(filepath.Join(h.dir, id))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names
}

// hasArtifacts says run id kept its report.
func (h *history) hasArtifacts(id string) bool {
	a, err := h.artifact(id, "report.html")
	if err != nil {
		return false
	}
	_ = a.Close()
	return true
}
