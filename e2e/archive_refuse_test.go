package e2e

// binlogcdc archive refuses what it cannot archive faithfully, with a
// message naming the problem, and writes nothing then.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// arRefused runs archive args and wants exit code want and every part of
// msgs on stderr.
func arRefused(t *testing.T, want int, msgs []string, args ...string) string {
	t.Helper()
	_, stderr, code := runCLI(t, nil, append([]string{"archive"}, args...)...)
	if code != want {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, want, stderr)
	}
	for _, m := range msgs {
		if !strings.Contains(stderr, m) {
			t.Errorf("stderr lacks %q:\n%s", m, stderr)
		}
	}
	return stderr
}

func TestArchiveRefusals(t *testing.T) {
	a := testserver.Start(t, testserver.Options{})
	b := testserver.Start(t, testserver.Options{})
	arWrite(t, a, 0, 10, 0)
	arWrite(t, b, 100, 10, 0) // not A's transactions
	tmp := t.TempDir()

	t.Run("another server", func(t *testing.T) {
		dir := filepath.Join(tmp, "ab")
		arRefused(t, 0, nil, "--source", a.DSN(), "--dir", dir, "--stop-at-end")
		before := arDirState(t, dir)
		arRefused(t, 1, []string{"binlog.000001:", "another server history", "hint: archive each server history into its own directory"},
			"--source", b.DSN(), "--dir", dir, "--stop-at-end")
		if after := arDirState(t, dir); after != before {
			t.Errorf("the archive changed:\n%s\nbecame\n%s", before, after)
		}
	})

	t.Run("unrelated files", func(t *testing.T) {
		dir := filepath.Join(tmp, "other")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		os.WriteFile(filepath.Join(dir, "binlog.000001"), []byte("not yours"), 0o644)
		arRefused(t, 1, []string{"is not an archive of binlogcdc: it has no archive manifest", "binlog.000001, notes.txt", "hint: give an empty or new directory"},
			"--source", a.DSN(), "--dir", dir, "--stop-at-end")
		if b, _ := os.ReadFile(filepath.Join(dir, "binlog.000001")); string(b) != "not yours" {
			t.Errorf("binlog.000001 was changed: %q", b)
		}
		// A file appears in an archive.
		dir2 := filepath.Join(tmp, "grown")
		arRefused(t, 0, nil, "--source", a.DSN(), "--dir", dir2, "--stop-at-end")
		os.WriteFile(filepath.Join(dir2, "binlog.000009"), []byte("x"), 0o644)
		arRefused(t, 1, []string{"holds files its manifest does not list: binlog.000009"}, "--source", a.DSN(), "--dir", dir2, "--stop-at-end")
	})

	t.Run("wrong DSN", func(t *testing.T) {
		dir := filepath.Join(tmp, "dsn")
		arRefused(t, 1, []string{"127.0.0.1:1"}, "--source", "mysql://root@127.0.0.1:1", "--dir", dir)
		arRefused(t, 2, []string{"--source: not a DSN"}, "--source", "postgres://x", "--dir", dir)
		arRefused(t, 5, []string{"Access denied"}, "--source", "mysql://nobody@"+a.Addr(), "--dir", dir)
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("--dir was created by a run that could not connect: %v", err)
		}
		arRefused(t, 2, []string{"--dir is required"}, "--source", a.DSN())
		arRefused(t, 2, []string{"give one start"}, "--source", a.DSN(), "--dir", dir, "--from", "now", "--start-gtid", "0-1-1")
	})

	t.Run("one archiver per DIR", func(t *testing.T) {
		dir := filepath.Join(tmp, "lock")
		r := arStart(t, tmp, "lock", "--source", a.DSN(), "--dir", dir)
		stPoll(t, time.Minute, r, "the archiver to connect", r.ready)
		arRefused(t, 1, []string{"is in use by another binlogcdc archive", fmt.Sprintf("PID %d", r.cmd.Process.Pid)}, "--source", a.DSN(), "--dir", dir)
		r.kill9()
	})

	t.Run("damaged file", func(t *testing.T) {
		s := testserver.Start(t, testserver.Options{})
		arWrite(t, s, 0, 9, 3) // binlog.000001 … binlog.000004
		dir := filepath.Join(tmp, "damaged")
		arRefused(t, 0, nil, "--source", s.DSN(), "--dir", dir, "--stop-at-end")
		for _, name := range []string{"binlog.000001", "binlog.000003"} {
			path := filepath.Join(dir, name)
			good, _ := os.ReadFile(path)
			bad := bytes.Clone(good)
			bad[len(bad)/2] ^= 0x20 // one bit, as a disk flips it
			os.WriteFile(path, bad, 0o644)
			before := arDirState(t, dir)
			args := []string{"--source", s.DSN(), "--dir", dir, "--stop-at-end"}
			if name == "binlog.000001" {
				// Only the newest complete file is checked by default.
				arRefused(t, 0, nil, args...)
				args = append(args, "--verify-all")
				// That run may have archived an event the server logged
				// since (MariaDB's BINLOG_CHECKPOINT_EVENT comes after a
				// rotation, in the background).
				before = arDirState(t, dir)
			}
			arRefused(t, 1, []string{"the archive's " + path + " is damaged: its XXH3-64 is", "hint: restore the file from a copy"}, args...)
			if after := arDirState(t, dir); after != before {
				t.Errorf("the archive changed:\n%s\nbecame\n%s", before, after)
			}
			os.WriteFile(path, good, 0o644)
		}
		arRefused(t, 0, nil, "--source", s.DSN(), "--dir", dir, "--stop-at-end", "--verify-all")
		if d := arDiffEnd(s, dir); d != "" {
			t.Fatal(d)
		}
	})

	t.Run("purged", func(t *testing.T) {
		s := testserver.Start(t, testserver.Options{})
		arWrite(t, s, 0, 5, 0)
		dir := filepath.Join(tmp, "purged")
		arRefused(t, 0, nil, "--source", s.DSN(), "--dir", dir, "--stop-at-end")
		arWrite(t, s, 5, 12, 3) // binlog.000002 … binlog.000005
		stPurgeTo(t, s, "binlog.000004")
		arRefused(t, 1, []string{"binlog.000001 was purged on the server", "the archive holds it up to offset", "the server's oldest binlog is now binlog.000004"},
			"--source", s.DSN(), "--dir", dir, "--stop-at-end")
		// A new archive from a file the server no longer has.
		arRefused(t, 1, []string{"has no binlog binlog.000002 (it has binlog.000004 … binlog.000005)"},
			"--source", s.DSN(), "--dir", filepath.Join(tmp, "purged2"), "--start-position", "binlog.000002:4")
	})
}

// arDirState lists dir's files with their sizes and contents' hashes.
func arDirState(t testing.TB, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, e := range ents {
		if e.Name() == "binlogcdc-archive.lock" {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&sb, "%s %d %x\n", e.Name(), len(b), sha(b))
	}
	return sb.String()
}
