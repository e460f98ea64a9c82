package scenarios

import (
	"slices"
	"strings"
)

// FileFormat describes one value of a dataset file's format. Each is
// declared in its own file of prober/dataset, which registers it with its
// reader; a program that loads scenarios links the prober, or knows no
// file format.
type FileFormat struct {
	Name       string
	Timestamps Timestamps
	// WallClock is whether the timestamps are times of day, not offsets
	// from a start: absolute_timestamps does not apply.
	WallClock bool
	// AIPerfName is AIPerf's --custom-dataset-type for the format when it
	// differs from Name (mooncake_trace for mooncake).
	AIPerfName string
}

// Timestamps says whether a format's entries carry timestamps, which sets
// the timings a file of it may have.
type Timestamps int

const (
	// TimestampsOptional: an entry may carry one; arrival by default.
	TimestampsOptional Timestamps = iota
	// TimestampsAlways: a trace; replay by default.
	TimestampsAlways
	// TimestampsNever: nothing to replay; arrival only.
	TimestampsNever
)

// fileFormats holds the registered formats sorted by name, so that lists
// and messages do not depend on the order of registration.
var fileFormats []FileFormat

// RegisterFormat adds a file format. It is called from init functions; an
// empty or taken name is a programming error and panics.
func RegisterFormat(f FileFormat) {
	if f.Name == "" {
		panic("scenarios: RegisterFormat with an empty name")
	}
	i, found := slices.BinarySearchFunc(fileFormats, f.Name, formatByName)
	if found {
		panic("scenarios: file format " + f.Name + " registered twice")
	}
	fileFormats = slices.Insert(fileFormats, i, f)
}

func formatByName(f FileFormat, name string) int { return strings.Compare(f.Name, name) }

// LookupFormat returns the file format called name.
func LookupFormat(name string) (FileFormat, bool) {
	i, found := slices.BinarySearchFunc(fileFormats, name, formatByName)
	if !found {
		return FileFormat{}, false
	}
	return fileFormats[i], true
}

// AIPerfDatasetType is AIPerf's --custom-dataset-type for the file format
// called name, as AIPerf's input_config spells it.
func AIPerfDatasetType(name string) string {
	if f, ok := LookupFormat(name); ok && f.AIPerfName != "" {
		return f.AIPerfName
	}
	return name
}

// FormatNames lists the names of the file formats, sorted.
func FormatNames() []string {
	names := make([]string, len(fileFormats))
	for i, f := range fileFormats {
		names[i] = f.Name
	}
	return names
}
