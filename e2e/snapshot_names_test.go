package e2e

// Issue 27, items 6 and 9, and issue 24: what a snapshot leaves out is
// named on stderr with why; a snapshot --tables pattern that selects no
// table to copy is an error, before anything is written; a stream does
// not warn about a pattern that matches a table on the server just
// because it read no change of it.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// snSource holds a base table with a row, a view, a sequence, a
// system-versioned table and a second base table.
func snSource(t *testing.T) *testserver.Server {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE shop",
		"CREATE TABLE shop.t (id INT PRIMARY KEY, v INT)", "INSERT INTO shop.t VALUES (1, 10)",
		"CREATE TABLE shop.x (id INT PRIMARY KEY)", "INSERT INTO shop.x VALUES (7)",
		"CREATE VIEW shop.v AS SELECT id FROM shop.t",
		"CREATE SEQUENCE shop.s",
		"CREATE TABLE shop.h (id INT PRIMARY KEY) WITH SYSTEM VERSIONING", "INSERT INTO shop.h VALUES (3)")
	return src
}

func TestSnapshotNamesSkipped(t *testing.T) {
	src := snSource(t)
	dst := testserver.Start(t, testserver.Options{})

	// Every object a snapshot leaves out is named, with why.
	out, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--tables", "shop.*", "--exclude-tables", "shop.nosuch")
	if code != 0 {
		t.Fatalf("snapshot --tables shop.*: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"snapshot: skipped `shop`.`v`: a view holds no rows of its own",
		"snapshot: skipped `shop`.`s`: a sequence is not copied",
		"snapshot: skipped `shop`.`h`: a system-versioned table is not copied yet",
		"snapshot of 2 tables",
		// An --exclude-tables pattern that matches nothing: a warning.
		"warning: --exclude-tables shop.nosuch matched no table on the server",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("snapshot --tables shop.*: no %q on stderr:\n%s", want, errOut)
		}
	}
	if n := strings.Count(string(out), `"op":"snapshot"`); n != 2 {
		t.Errorf("snapshot --tables shop.* wrote %d rows, want 2 (shop.t and shop.x):\n%s", n, out)
	}

	// A pattern that selects no table to copy stops the snapshot with
	// exit code 1, naming the pattern and what it matched, before
	// anything is written: not to -o, the checkpoint or the target.
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tables", "shop.nosuch"}, "--tables shop.nosuch matches no table on the server"},
		{[]string{"--tables", "shop.t", "--tables", "shop.nosuch"}, "--tables shop.nosuch matches no table on the server"},
		{[]string{"--tables", "nodb.*"}, "--tables nodb.* matches no table on the server"},
		{[]string{"--tables", "shop.T*", "--tables", "shop.v"}, "--tables shop.v selects no table to copy, only `shop`.`v` (view)"},
		{[]string{"--tables", "shop.[sv]"}, "--tables shop.[sv] selects no table to copy, only `shop`.`s` (sequence), `shop`.`v` (view)"},
		{[]string{"--tables", "shop.x", "--exclude-tables", "shop.x"}, "--tables shop.x selects no table to copy, only `shop`.`x` (excluded by --exclude-tables)"},
		{[]string{"--tables", "mysql.user"}, "--tables mysql.user selects no table to copy, only `mysql`.`user` (a system database's)"},
	} {
		for _, sink := range [][]string{
			{"-o", filepath.Join(dir, "out.jsonl"), "--checkpoint", filepath.Join(dir, "cp.json")},
			{"--to", dst.DSN() + "/"},
		} {
			args := append(append([]string{"snapshot", "--source", src.DSN()}, c.args...), sink...)
			out, errOut, code := runCLI(t, nil, args...)
			if code != 1 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "nothing was copied\nhint: ") || len(out) != 0 {
				t.Errorf("%v: exit %d, want 1 and %q:\n%s", args[3:], code, c.want, errOut)
			}
			if strings.Contains(errOut, "snapshot position") {
				t.Errorf("%v: a refused snapshot reports a position:\n%s", args[3:], errOut)
			}
		}
	}
	for _, f := range []string{"out.jsonl", "cp.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("a refused snapshot left %s: %v", f, err)
		}
	}
	if got := dst.QueryStrings(t, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop'"); *got[0][0] != "0" {
		t.Errorf("a refused snapshot created %s tables on the target", *got[0][0])
	}
	if got := dst.QueryStrings(t, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'binlogcdc' AND TABLE_NAME = 'checkpoint'"); *got[0][0] != "0" {
		// Opening the target adds its replica's row, with no position.
		if cp := dst.QueryStrings(t, "SELECT COUNT(*) FROM binlogcdc.checkpoint WHERE file <> ''"); *cp[0][0] != "0" {
			t.Errorf("a refused snapshot saved a checkpoint on the target")
		}
	}
	// The same snapshot with the pattern fixed fills the target.
	if _, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--tables", "shop.t", "--to", dst.DSN()+"/"); code != 0 {
		t.Fatalf("snapshot --tables shop.t --to: exit %d: %s", code, errOut)
	}
	if got := rpRows(t, dst, "SELECT * FROM shop.t"); got != `"1","10"` {
		t.Errorf("shop.t on the target: %s", got)
	}
}

// TestStreamSnapshotUnmatchedRerun: stream --snapshot warns at the
// snapshot about a pattern that selects no table to copy, and streams;
// at its end it warns only about patterns that match no table on the
// server or in the binlog read, in the first run and in a rerun on an
// idle source that reads no row event. An account statement the
// filters leave out of JSON is noted as left out, not as "never
// replayed".
func TestStreamSnapshotUnmatchedRerun(t *testing.T) {
	src := snSource(t)
	dir := t.TempDir()
	cp, out := filepath.Join(dir, "cp.json"), filepath.Join(dir, "out.jsonl")
	args := []string{"--snapshot", "--source", src.DSN(), "--checkpoint", cp, "-o", out, "--ddl",
		"--tables", "shop.t", "--tables", "shop.v", "--tables", "shop.nosuch", "--exclude-tables", "shop.gone"}
	unmatched := func(run string, text string) {
		t.Helper()
		for _, p := range []string{"--tables shop.t ", "--tables shop.v "} {
			if strings.Contains(text, p+"matched no table") {
				t.Errorf("%s: a warning about %s, which matches a table on the server:\n%s", run, p, text)
			}
		}
		for _, p := range []string{"--tables shop.nosuch", "--exclude-tables shop.gone"} {
			if !strings.Contains(text, "warning: "+p+" matched no table on the server or in the binlog read") {
				t.Errorf("%s: no warning about %s at the end:\n%s", run, p, text)
			}
		}
	}

	r := stStart(t, dir, "first", nil, args...)
	stPoll(t, time.Minute, r, "the snapshot", func() bool { return strings.Contains(r.errText(), "snapshot: 1 rows of 1 tables") })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream --snapshot: exit %d: %s", code, r.errText())
	}
	first := r.errText()
	for _, want := range []string{
		"warning: snapshot: --tables shop.v selects no table to copy, only `shop`.`v` (view): nothing of it is copied",
		"warning: snapshot: --tables shop.nosuch matches no table on the server: nothing of it is copied",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first run: no %q:\n%s", want, first)
		}
	}
	unmatched("first run", first)

	// Rerun: the snapshot is done, the source writes no row; the stream
	// reads an account statement only.
	src.Exec(t, "CREATE USER 'snuser'@'%' IDENTIFIED BY 'Pw1234'")
	r = stStart(t, dir, "rerun", nil, args...)
	stPoll(t, time.Minute, r, "the CREATE USER", func() bool { return strings.Contains(r.errText(), "CREATE USER left out") })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream --snapshot rerun: exit %d: %s", code, r.errText())
	}
	rerun := r.errText()
	unmatched("rerun", rerun)
	if !strings.Contains(rerun, "CREATE USER left out: account management (users, roles, grants, passwords) concerns no table, so --tables/--exclude-tables select none of it") || strings.Contains(rerun, "replayed") {
		t.Errorf("rerun: the note about CREATE USER:\n%s", rerun)
	}
	if strings.Contains(rerun, "snapshot of") {
		t.Errorf("rerun took a snapshot again:\n%s", rerun)
	}
}
