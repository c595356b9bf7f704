package main

import (
	"runtime/debug"
	"testing"
)

// The version comes from the build, never a constant "dev".
func TestBuildVersion(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, c := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, true, "v1.2.3"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201153000-e38ae0d12345+dirty"}}, true, "v0.0.0-20261201153000-e38ae0d12345+dirty"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "e38ae0d1234567890abc", "vcs.time", "2026-12-01T15:30:00Z", "vcs.modified", "true")}, true,
			"(devel) e38ae0d12345+modified 2026-12-01T15:30:00Z"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "e38ae0d1234567890abc", "vcs.modified", "false")}, true, "(devel) e38ae0d12345"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "(devel)"},
		{nil, false, "(unknown: no build information)"},
	} {
		if got := buildVersion(c.info, c.ok); got != c.want {
			t.Errorf("buildVersion(%+v) = %q, want %q", c.info, got, c.want)
		}
	}
}
