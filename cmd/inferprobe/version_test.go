package main

import (
	"runtime/debug"
	"testing"

	"github.com/prometheus/common/version"
)

func TestFillVersion(t *testing.T) {
	saved, savedDate := version.Version, version.BuildDate
	t.Cleanup(func() { version.Version, version.BuildDate = saved, savedDate })
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "bc3beb8"}, {Key: "vcs.time", Value: "2026-12-01T23:00:00Z"}}
	for _, c := range []struct {
		name, ldflags, module string
		ok                    bool
		want, wantDate        string
	}{
		{name: "go install @version", module: "v0.4.0", ok: true, want: "v0.4.0", wantDate: "2026-12-01T23:00:00Z"},
		{name: "go build in a checkout", module: "v0.0.0-20261201230000-bc3beb8abcde+dirty", ok: true, want: "v0.0.0-20261201230000-bc3beb8abcde+dirty", wantDate: "2026-12-01T23:00:00Z"},
		{name: "no VCS stamp", module: "(devel)", ok: true, want: "devel", wantDate: "2026-12-01T23:00:00Z"},
		{name: "ldflags win", ldflags: "v1.0.0", module: "v0.4.0", ok: true, want: "v1.0.0"},
		{name: "no build info", ok: false, want: ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			version.Version, version.BuildDate = c.ldflags, ""
			fillVersion(&debug.BuildInfo{Main: debug.Module{Path: "github.com/inferprobe/inferprobe", Version: c.module}, Settings: vcs}, c.ok)
			if version.Version != c.want || version.BuildDate != c.wantDate {
				t.Errorf("version %q, build date %q; want %q, %q", version.Version, version.BuildDate, c.want, c.wantDate)
			}
		})
	}
}
