package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/report/export"
)

// benchMergeCommand is the command `bench merge` is parsed as.
const benchMergeCommand = "bench-merge"

// benchMergeArgs spells `bench merge` as the command it is parsed as.
func benchMergeArgs(args []string) []string {
	if i := slices.Index(args, "bench"); i >= 0 && i+1 < len(args) && args[i+1] == "merge" {
		return slices.Concat(args[:i], []string{benchMergeCommand}, args[i+2:])
	}
	return args
}

// mergeFlags are `bench merge`'s.
type mergeFlags struct {
	dirs        []string
	artifactDir string
	wait        time.Duration
}

func addMergeFlags(cmd *kingpin.CmdClause) *mergeFlags {
	f := &mergeFlags{}
	cmd.Arg("dir", "The --artifact-dir of each `bench --shard i/n` run of one run; each holds "+shardFileName+".").Required().StringsVar(&f.dirs)
	cmd.Flag("artifact-dir", "Where to write the merged run's artifacts (the same files as a one-machine bench); also --output-artifact-dir.").Default("artifacts/merged").StringVar(&f.artifactDir)
	cmd.Flag("output-artifact-dir", "Alias of --artifact-dir.").Hidden().StringVar(&f.artifactDir)
	cmd.Flag("wait", "Wait up to this long (e.g. 2h) for every DIR's shard to end before merging, so that the merge can start with the shards (a Job beside the shards' Indexed Job); then merge what there is, a shard not ended by then named as missing or unfinished.").DurationVar(&f.wait)
	return f
}

// runBenchMerge combines the shards' record files into the report and
// artifacts of the whole run, as one bench on one machine would have
// written them.
func runBenchMerge(stdout, stderr io.Writer, f *mergeFlags, args []string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "inferprobe bench merge: "+format+"\n", a...)
		return code
	}
	files, err := openShards(stderr, f.dirs, time.Now().Add(f.wait))
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	var meta shardMeta
	if err := json.Unmarshal(files[0].Header.Meta, &meta); err != nil {
		return fail(exitUsage, "%s: the header's settings: %v", files[0].Path, err)
	}
	shards := make([]report.ShardRecords, len(files))
	for i, sf := range files {
		shards[i] = sf.ShardRecords()
	}
	m, err := report.Merge(files[0].Shard.Count, shards, report.WithSLO(meta.SLO))
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	console := new(bytes.Buffer)
	out := io.MultiWriter(stdout, console)
	if m.Partial() {
		fmt.Fprintf(out, "\n!!! PARTIAL RUN: %s. The report covers the requests of the shards given, and its digest is not the run's.\n", partialWhy(m, files[0].Shard.Count))
	}
	meta.Config.ArtifactDir, meta.Config.Command = f.artifactDir, repeatCommand(args)
	summary := m.Report.Summary()
	result := export.Run{Summary: summary, Requests: m.Report.Requests(), Config: meta.Config, SLO: meta.SLO,
		Digest: m.Digest.String(), Interrupted: m.Partial(), ClientBound: clientBound(files)}
	export.Console(out, result, m.Digest, meta.Seed)
	result.ConsoleText = console.Bytes()
	if err := export.WriteArtifacts(f.artifactDir, result); err != nil {
		return fail(exitCannotRun, "writing artifacts: %v; choose a writable --artifact-dir", err)
	}
	fmt.Fprintf(stdout, "\nArtifacts: %s\n", f.artifactDir)
	if m.Partial() {
		return fail(exitPartial, "partial: %s", partialWhy(m, files[0].Shard.Count))
	}
	if code, why := runStatus(summary, nil); code != exitOK {
		return fail(code, "%s; %s", why, statusHint[code])
	}
	return exitOK
}

// mergePoll is how often --wait looks for the shards' ends.
const mergePoll = 2 * time.Second

// openShards opens the record file of each of dirs, once all have ended or
// at deadline. A directory without one is left out, with a warning, as a
// missing shard: a shard that died before writing anything. Shards of
// different runs are an error.
func openShards(stderr io.Writer, dirs []string, deadline time.Time) ([]*report.ShardFile, error) {
	for {
		var files []*report.ShardFile
		var absent []string
		ended := true
		for _, dir := range dirs {
			sf, err := report.OpenShardFile(filepath.Join(dir, shardFileName))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				absent, ended = append(absent, dir), false
				continue
			case err != nil:
				return nil, err
			}
			if len(files) > 0 && sf.Header.Run != files[0].Header.Run {
				return nil, fmt.Errorf("%s (shard %s) and %s (shard %s) are shards of different runs (their commands or scenarios differ): merge the shards of one run",
					files[0].Path, files[0].Shard, dir, sf.Shard)
			}
			ended = ended && sf.End != nil
			files = append(files, sf)
		}
		if ended || !time.Now().Before(deadline) {
			for _, dir := range absent {
				fmt.Fprintf(stderr, "inferprobe bench merge: warning: %s holds no %s: left out, as a missing shard\n", dir, shardFileName)
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("no DIR holds a %s: give the --artifact-dir of each `inferprobe bench --shard i/n` run", shardFileName)
			}
			return files, nil
		}
		time.Sleep(mergePoll)
	}
}

// clientBound names the shards whose client may have been the bottleneck,
// and why: the merged figures then describe those machines in part.
func clientBound(files []*report.ShardFile) string {
	var why []string
	for _, sf := range files {
		if sf.End != nil && sf.End.ClientBound != "" {
			why = append(why, "shard "+sf.Shard.String()+": "+sf.End.ClientBound)
		}
	}
	return strings.Join(why, "; ")
}

// partialWhy names the shards a partial merge lacks.
func partialWhy(m report.Merged, count int) string {
	name := func(idx []int) string {
		s := make([]string, len(idx))
		for i, x := range idx {
			s[i] = record.Shard{Index: x, Count: count}.String()
		}
		return strings.Join(s, ", ")
	}
	var why []string
	if len(m.Missing) > 0 {
		why = append(why, "shard "+name(m.Missing)+" missing (no directory given holds it)")
	}
	if len(m.Incomplete) > 0 {
		why = append(why, "shard "+name(m.Incomplete)+" did not finish (stopped, or died: its record file has no end)")
	}
	return strings.Join(why, "; ")
}
