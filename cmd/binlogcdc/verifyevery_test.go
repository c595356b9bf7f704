package main

import (
	"strings"
	"testing"
)

// TestVerifyEveryFlags: --verify-every and --verify-on-diff are in
// stream's --help, and refused without --to mysql://, with a bad value
// or with an incremental snapshot, before connecting (exit 2).
func TestVerifyEveryFlags(t *testing.T) {
	stdout, stderr, _ := cli("stream", "--help")
	for _, f := range []string{"--verify-every DURATION", "--verify-on-diff stop"} {
		if !strings.Contains(stdout+stderr, f) {
			t.Errorf("stream --help lacks %q", f)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--verify-every", "1m"}, "--verify-every compares the copy kept by --to mysql://"},
		{[]string{"--verify-every", "1m", "--to", "kafka://127.0.0.1:1"}, "--verify-every compares the copy kept by --to mysql://"},
		{[]string{"--verify-every", "0s", "--to", "mysql://u@127.0.0.1:1/"}, "--verify-every must be positive"},
		{[]string{"--verify-every", "-1m", "--to", "mysql://u@127.0.0.1:1/"}, "--verify-every must be positive"},
		{[]string{"--verify-on-diff", "warn", "--to", "mysql://u@127.0.0.1:1/"}, "--verify-on-diff needs --verify-every"},
		{[]string{"--verify-chunk-rows", "50", "--to", "mysql://u@127.0.0.1:1/"}, "--verify-chunk-rows needs --verify-every"},
		{[]string{"--verify-every", "1m", "--verify-chunk-rows", "0", "--to", "mysql://u@127.0.0.1:1/"}, "--verify-chunk-rows must be positive"},
		{[]string{"--verify-every", "1m", "--verify-on-diff", "ignore", "--to", "mysql://u@127.0.0.1:1/"}, "--verify-on-diff: want stop or warn"},
		{[]string{"--verify-every", "1m", "--to", "mysql://u@127.0.0.1:1/", "--signal-table", "a.b"}, "cannot be combined with --signal-table"},
		{[]string{"--verify-every", "1m", "--to", "mysql://u@127.0.0.1:1/", "--snapshot-new-tables"}, "cannot be combined with --snapshot-new-tables"},
	} {
		_, stderr, code := cli(append([]string{"stream", "--source", "mysql://u@127.0.0.1:1"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
}
