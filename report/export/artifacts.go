package export

import (
	"os"
	"path/filepath"

	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Artifact file names; the first two keep AIPerf's layout under our name.
const (
	artifactJSON    = "profile_export_inferprobe.json"
	artifactCSV     = "profile_export_inferprobe.csv"
	artifactJSONL   = "profile_export.jsonl"
	artifactHTML    = "report.html"
	artifactCommand = "command.txt"
)

// WriteArtifacts writes every artifact of run into dir: the JSON and CSV,
// the JSONL, the HTML report, and the command that repeats the run.
func WriteArtifacts(dir string, run Run) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
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
	for name, b := range map[string][]byte{artifactJSON: js, artifactCSV: csv, artifactHTML: page, artifactCommand: []byte(run.Config.Command + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, artifactJSONL))
	if err != nil {
		return err
	}
	if err := WriteJSONL(f, run); err != nil {
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
