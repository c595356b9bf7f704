package e2e

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// 'binlogcdc version' prints what the toolchain stamped into the binary
// (go version -m shows the same), not a constant.
func TestVersionFromBuild(t *testing.T) {
	bin := cliBinary(t)
	out, errText, code := runCLI(t, nil, "version")
	if code != 0 {
		t.Fatalf("version: exit %d: %s", code, errText)
	}
	got := strings.TrimSpace(string(out))
	m, err := exec.Command(goTool(), "version", "-m", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v: %s", err, m)
	}
	mod := regexp.MustCompile(`(?m)^\s+mod\s+\S+\s+(\S+)`).FindSubmatch(m)
	rev := regexp.MustCompile(`(?m)^\s+build\s+vcs\.revision=(\S+)`).FindSubmatch(m)
	var want string
	switch {
	case mod != nil && string(mod[1]) != "(devel)":
		want = string(mod[1])
	case rev != nil:
		want = string(rev[1][:12])
	default:
		want = "(devel)"
	}
	if !strings.HasPrefix(got, "binlogcdc ") || !strings.Contains(got, want) {
		t.Fatalf("version printed %q, want it to name the build %q\n%s", got, want, m)
	}
}
