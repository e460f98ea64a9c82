package export

import (
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Artifact file names: AIPerf 0.13's, then inferprobe's own.
const (
	artifactJSON    = "profile_export_aiperf.json"
	artifactCSV     = "profile_export_aiperf.csv"
	artifactJSONL   = "profile_export.jsonl"
	artifactInputs  = "inputs.json"
	artifactConsole = "profile_export_console.txt"
	artifactLogs    = "logs"
	artifactLog     = "inferprobe.log"
	artifactHTML    = "report.html"
	artifactCommand = "command.txt"
	// legacyJSON is what inferprobe wrote before it wrote AIPerf's schema;
	// --compare still reads it.
	legacyJSON = "profile_export_inferprobe.json"
)

// WriteArtifacts writes every artifact of run into dir: its RunFiles, the
// console report, logs/ and the command that repeats the run.
func WriteArtifacts(dir string, run Run) error {
	if err := os.MkdirAll(filepath.Join(dir, artifactLogs), 0o755); err != nil {
		return err
	}
	files := RunFiles(run)
	files[artifactCommand] = bytesOf([]byte(run.Config.Command + "\n"))
	files[artifactConsole] = bytesOf(run.ConsoleText)
	files[filepath.Join(artifactLogs, artifactLog)] = bytesOf(run.Log)
	for name, write := range files {
		if err := writeFile(filepath.Join(dir, name), write); err != nil {
			return err
		}
	}
	return nil
}

// RunFiles are the artifacts that describe run itself, each a function that
// writes it, by file name: AIPerf's JSON, CSV and JSONL, the inputs, the
// timeslices of --slice-duration,
// gpu_telemetry_export.jsonl when DCGM exporter endpoints were scraped,
// server_metrics_export.* when the server's metrics were read, and the HTML
// report. Bench writes them with the rest; the daemon keeps a burst run's.
func RunFiles(run Run) map[string]func(io.Writer) error {
	files := map[string]func(io.Writer) error{
		artifactJSON:   rendered(JSON, run),
		artifactCSV:    rendered(CSV, run),
		artifactHTML:   rendered(HTML, run),
		artifactJSONL:  func(w io.Writer) error { return WriteJSONL(w, run) },
		artifactInputs: func(w io.Writer) error { return WriteInputs(w, run) },
	}
	if run.Config.SliceDuration > 0 {
		// Both files are of the same windows: summarised once.
		windows := sync.OnceValue(run.timeslices)
		files[artifactTimeslicesJSON] = rendered(func(r Run) ([]byte, error) { return timeslicesJSON(r, windows()) }, run)
		files[artifactTimeslicesCSV] = rendered(func(Run) ([]byte, error) { return timeslicesCSV(windows()) }, run)
	}
	if run.GPUEndpoints != nil {
		files[artifactGPUJSONL] = func(w io.Writer) error { return WriteGPUTelemetryJSONL(w, run) }
	}
	for _, f := range run.serverFormats() {
		switch f {
		case "json":
			files[artifactServerJSON] = rendered(ServerMetricsJSON, run)
		case "csv":
			files[artifactServerCSV] = rendered(ServerMetricsCSV, run)
		}
	}
	return files
}

// rendered writes what render makes of run.
func rendered(render func(Run) ([]byte, error), run Run) func(io.Writer) error {
	return func(w io.Writer) error {
		b, err := render(run)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
}

func bytesOf(b []byte) func(io.Writer) error {
	return func(w io.Writer) error { _, err := w.Write(b); return err }
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ScrubErrors replaces every secret in the requests' error messages, which
// quote the server's reply, with REDACTED: a server that echoes the key it
// refused must not put it in the artifacts.
func ScrubErrors(reqs []report.RequestRecord, secrets []string) []report.RequestRecord {
	if len(secrets) == 0 {
		return reqs
	}
	r := scenarios.Redactor(secrets)
	for i := range reqs {
		if reqs[i].Err != "" {
			reqs[i].Err = r.Replace(reqs[i].Err)
		}
	}
	return reqs
}
