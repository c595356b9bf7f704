package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestHelpNamesOwnFlags: every flag a command's --help names, in its
// text as in its flag list, is one of that command's flags (verify and
// recover take neither --progress nor --ddl).
func TestHelpNamesOwnFlags(t *testing.T) {
	flagName := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	for _, cmd := range []string{"read", "stream", "snapshot", "recover", "verify"} {
		stdout, stderr, code := cli(cmd, "--help")
		if code != exitOK {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		help := stdout + stderr
		i := strings.Index(help, "\nFlags:\n")
		if i < 0 {
			t.Fatalf("%s --help has no Flags: section:\n%s", cmd, help)
		}
		// The flags it takes: the lines of the list that start with one.
		own := map[string]bool{"help": true}
		for _, l := range strings.Split(help[i:], "\n") {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "-") {
				if m := flagName.FindStringSubmatch(l); m != nil {
					own[m[1]] = true
				}
			}
		}
		// The text after the list speaks of no other flag.
		end := help[i:]
		if j := strings.Index(end, "\n\n"); j >= 0 {
			end = end[j:]
		}
		for _, m := range flagName.FindAllStringSubmatch(end, -1) {
			if !own[m[1]] {
				t.Errorf("%s --help, after its flags, speaks of --%s, which %s does not take:\n%s", cmd, m[1], cmd, end)
			}
		}
	}
}
