package export

import (
	"io"
	"os"
	"path/filepath"

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

// WriteArtifacts writes every artifact of run into dir: AIPerf's JSON, CSV,
// JSONL, inputs, console report and logs/, server_metrics_export.* when the
// server's metrics were read, the HTML report, and the command that repeats
// the run.
func WriteArtifacts(dir string, run Run) error {
	if err := os.MkdirAll(filepath.Join(dir, artifactLogs), 0o755); err != nil {
		return err
	}
	js, err := JSON(run)
	if err != nil {
		return err
	}
	csv, err := CSV(run)
	if err != nil {
		return err
	}
	page, err := HTML(run)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		artifactJSON: js, artifactCSV: csv, artifactHTML: page, artifactCommand: []byte(run.Config.Command + "\n"),
		artifactConsole: run.ConsoleText, filepath.Join(artifactLogs, artifactLog): run.Log,
	}
	for _, f := range run.serverFormats() {
		switch f {
		case "json":
			b, err := ServerMetricsJSON(run)
			if err != nil {
				return err
			}
			files[artifactServerJSON] = b
		case "csv":
			b, err := ServerMetricsCSV(run)
			if err != nil {
				return err
			}
			files[artifactServerCSV] = b
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	for name, write := range map[string]func(io.Writer, Run) error{artifactJSONL: WriteJSONL, artifactInputs: WriteInputs} {
		if err := writeFile(filepath.Join(dir, name), func(w io.Writer) error { return write(w, run) }); err != nil {
			return err
		}
	}
	return nil
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
