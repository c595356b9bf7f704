package e2e

// Issue 27, items 6 and 9, and issue 24: what a snapshot leaves out is
// named on stderr with why; a snapshot --tables pattern that selects no
// table to copy is an error, before anything is written.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
