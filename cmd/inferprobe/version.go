package main

import (
	"runtime/debug"

	"github.com/prometheus/common/version"
)

// fillVersion fills in what the release build sets by -ldflags (make build, GoReleaser,
// the Dockerfile) from the build info the go command embeds, so that `go install
// …@latest` and a plain `go build` also report a version: the module version of the
// install (v1.2.3, or a pseudo-version the go command derives from the checkout's
// tags and commit), and the commit time as the build date.
func fillVersion(info *debug.BuildInfo, ok bool) {
	if version.Version != "" || !ok {
		return
	}
	version.Version = info.Main.Version
	if version.Version == "" || version.Version == "(devel)" {
		// Built with -buildvcs=false or outside a module checkout: nothing better to say.
		version.Version = "devel"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.time" && version.BuildDate == "" {
			version.BuildDate = s.Value
		}
	}
}
