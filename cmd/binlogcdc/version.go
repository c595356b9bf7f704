package main

import (
	"runtime/debug"
	"strings"
)

// buildVersion says which build this binary is, from what the Go toolchain
// recorded in it: the module version when it was installed with
// 'go install …@vX.Y.Z', else the VCS revision, its commit time and
// whether the work tree had uncommitted changes (go build in a git
// checkout), else "(devel)" (built without VCS information, e.g. from a
// copy of the sources or with -buildvcs=false).
func buildVersion(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "(unknown: no build information)"
	}
	v := info.Main.Version
	if v != "" && v != "(devel)" {
		return v
	}
	var rev, at string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "(devel)"
	}
	var b strings.Builder
	b.WriteString("(devel) ")
	if len(rev) > 12 {
		rev = rev[:12]
	}
	b.WriteString(rev)
	if modified {
		b.WriteString("+modified")
	}
	if at != "" {
		b.WriteString(" ")
		b.WriteString(at)
	}
	return b.String()
}

// version returns the version of this binary.
func version() string { return buildVersion(debug.ReadBuildInfo()) }
