package verify_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/verify"
)

// TestVerifyHugeValues: values far longer than the sessions'
// max_allowed_packet (4M here, 20M values) are compared by length and
// MD5 on the server, never fetched: equal when equal, the row named when
// one byte in the middle differs, in a table with a key and without.
func TestVerifyHugeValues(t *testing.T) {
	opts := testserver.Options{ExtraArgs: []string{"--max-allowed-packet=64M"}}
	src := testserver.Start(t, opts)
	dst := testserver.Start(t, opts)
	for _, s := range []*testserver.Server{src, dst} {
		s.Exec(t, "CREATE DATABASE h", "USE h",
			"CREATE TABLE k (id INT PRIMARY KEY, b LONGBLOB, t LONGTEXT)",
			"INSERT INTO k VALUES (1, REPEAT('ab', 10000000), REPEAT('é', 10000000)), (2, 'short', 'short'), (3, REPEAT('x', 65537), NULL)",
			"CREATE TABLE nk (b LONGBLOB)", "INSERT INTO nk SELECT b FROM k",
			"SET GLOBAL max_allowed_packet = 4194304")
	}
	rep, out := run(t, src, dst, verify.Options{})
	t.Logf("\n%s", out)
	if len(rep.Differing()) != 0 {
		t.Fatalf("equal huge values differ")
	}
	dst.Exec(t, "USE h", // the shared session still has 64M
		"UPDATE k SET b = INSERT(b, 10000000, 1, 'x') WHERE id = 1",
		"UPDATE nk SET b = INSERT(b, 10000000, 1, 'x') WHERE LENGTH(b) > 1000000")
	rep, out = run(t, src, dst, verify.Options{})
	t.Logf("\n%s", out)
	if len(rep.Differing()) != 2 || !strings.Contains(out, "  changed `id`=1\n") ||
		!strings.Contains(out, "  missing (0x6162616261626162616261626162616261626162616261626162616261626162…)") {
		t.Errorf("a changed byte of a 20M value was not named")
	}
}

// TestVerifyCannotRead: a target user that may not read a table makes
// it "not proven", naming the GRANT; a table it cannot see at all is
// "missing on the target", saying it may be a privilege.
func TestVerifyCannotRead(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	for _, s := range []*testserver.Server{src, dst} {
		s.Exec(t, "CREATE DATABASE p", "USE p", "CREATE TABLE ok (id INT PRIMARY KEY)", "CREATE TABLE noread (id INT PRIMARY KEY)",
			"CREATE TABLE unseen (id INT PRIMARY KEY)", "INSERT INTO ok VALUES (1)", "INSERT INTO noread VALUES (1)")
	}
	dst.Exec(t, "CREATE USER lim@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON p.ok TO lim@'%'", "GRANT INSERT ON p.noread TO lim@'%'")
	lim, err := client.Connect(dst.Addr(), "lim", "pw", "")
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	rep, err := verify.Run(context.Background(), src.Conn(t), lim, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.Write(&b)
	out := b.String()
	t.Logf("\n%s", out)
	for _, want := range []string{
		"ok      `p`.`ok`: 1 rows equal",
		"DIFFERS `p`.`noread`: cannot read the rows: target: ",
		"SELECT command denied to user 'lim'",
		"(verify needs SELECT on `p`.`noread` on both sides: GRANT SELECT ON `p`.* TO the user)",
		"DIFFERS `p`.`unseen`: missing on the target (or the --to user has no privilege on it)",
		"2 of 3 tables differ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q", want)
		}
	}
}

// changeOnce is a Progress writer that runs statements on a server
// after the first table's line: the source changes while verify runs.
type changeOnce struct {
	t    *testing.T
	s    *testserver.Server
	sql  []string
	done bool
}

func (c *changeOnce) Write(p []byte) (int, error) {
	if !c.done {
		c.done = true
		c.s.Exec(c.t, c.sql...)
	}
	return len(p), nil
}

// TestVerifySourceChanges: rows written to the source after verify took
// its snapshot are not seen (the tables compared afterwards are equal as
// of the snapshot), and the report says the source changed, at which
// position it was compared.
func TestVerifySourceChanges(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	for _, s := range []*testserver.Server{src, dst} {
		s.Exec(t, "CREATE DATABASE s", "USE s", "CREATE TABLE a (id INT PRIMARY KEY)", "CREATE TABLE b (id INT PRIMARY KEY)",
			"INSERT INTO a VALUES (1)", "INSERT INTO b VALUES (1)")
	}
	pos := src.QueryStrings(t, "SHOW MASTER STATUS")[0]
	ch := &changeOnce{t: t, s: src, sql: []string{"INSERT INTO s.b VALUES (2)", "UPDATE s.b SET id = 7 WHERE id = 1"}}
	rep, err := verify.Run(context.Background(), src.Conn(t), dst.Conn(t), verify.Options{Progress: ch})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.Write(&b)
	out := b.String()
	t.Logf("\n%s", out)
	snap := *pos[0] + ":" + *pos[1]
	if len(rep.Differing()) != 0 || !ch.done ||
		!strings.Contains(out, "warning: the source changed while verify ran (its binlog moved from "+snap+" to ") ||
		!strings.Contains(out, "the source's at "+snap+", so a table found equal was equal at that position") {
		t.Errorf("want equal tables as of %s and the warning", snap)
	}
	// Compared again, the change is seen.
	rep, out = run(t, src, dst, verify.Options{})
	if len(rep.Differing()) != 1 || !strings.Contains(out, "  missing `id`=2\n") || !strings.Contains(out, "  missing `id`=7\n") {
		t.Errorf("\n%s", out)
	}
}
