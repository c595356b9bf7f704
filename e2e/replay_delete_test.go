package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestReplayBatchedDeleteConflict: runs of deletes by a one-column
// primary key go as DELETE … WHERE pk IN (…) (sink/mysql/delete.go), on
// tables without triggers, foreign keys or other unique keys only. A
// delete of a row the target lacks stops the run with the very message one
// DELETE at a time gives (--bulk-load=false), at the same position, with
// nothing of its transaction applied; --on-conflict skip skips it as
// before; after the fix the targets equal the source.
func TestReplayBatchedDeleteConflict(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	batched := testserver.Start(t, testserver.Options{})
	plain := testserver.Start(t, testserver.Options{})
	skip := testserver.Start(t, testserver.Options{})
	targets := []*testserver.Server{batched, plain, skip}
	flags := func(dst *testserver.Server) []string {
		switch dst {
		case plain:
			return []string{"--bulk-load=false"}
		case skip:
			return []string{"--on-conflict", "skip"}
		}
		return nil
	}
	replay := func(want int, dst *testserver.Server) string {
		t.Helper()
		_, errOut := rpRun(t, want, append([]string{"read", src.BinlogIndex(), "--to", dst.DSN() + "/"}, flags(dst)...)...)
		return errOut
	}
	var sql strings.Builder
	sql.WriteString(`CREATE DATABASE bk;
CREATE TABLE bk.d (id INT PRIMARY KEY, v INT);
CREATE TABLE bk.s (k VARCHAR(20) CHARACTER SET utf8mb4 PRIMARY KEY, v INT);
CREATE TABLE bk.p (id INT PRIMARY KEY);
CREATE TABLE bk.c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES bk.p (id));
BEGIN;
`)
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&sql, "INSERT INTO bk.d VALUES (%d, %d);\nINSERT INTO bk.s VALUES ('k%d', %d);\n", i, i, i, i)
	}
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&sql, "INSERT INTO bk.p VALUES (%d);\n", i)
	}
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&sql, "INSERT INTO bk.c VALUES (%d, %d);\n", i, 1+i%10)
	}
	sql.WriteString("COMMIT;\n")
	rpMysql(t, src, []byte(sql.String()))
	for _, dst := range targets {
		replay(0, dst)
	}

	// A table with a foreign key keeps one DELETE per row; a text key
	// goes in batches.
	rpMysql(t, src, []byte("DELETE FROM bk.c WHERE id <= 40;\n"))
	deletes := stCount(t, batched, "Com_delete")
	replay(0, batched)
	if n := stCount(t, batched, "Com_delete") - deletes; n != 40 {
		t.Errorf("40 deletes from a table with a foreign key took %d DELETEs, want 40 (one each)", n)
	}
	rpMysql(t, src, []byte("DELETE FROM bk.s WHERE v % 3 <> 0;\n"))
	deletes = stCount(t, batched, "Com_delete")
	replay(0, batched)
	if n := stCount(t, batched, "Com_delete") - deletes; n >= 50 {
		t.Errorf("200 deletes by a text key took %d DELETEs: not batched", n)
	}
	rpCompare(t, src, batched, "batched deletes")
	for _, dst := range []*testserver.Server{plain, skip} {
		replay(0, dst)
	}

	// Behind binlogcdc's back: row 150 goes.
	for _, dst := range targets {
		dst.Exec(t, "DELETE FROM bk.d WHERE id = 150")
	}
	rpMysql(t, src, []byte("DELETE FROM bk.d WHERE id BETWEEN 1 AND 300;\n"))
	rollbacks := stCount(t, batched, "Com_rollback_to_savepoint")
	re := regexp.MustCompile("(?m)^.*conflict: delete of `bk`.`d` \\(`id`=150\\) at binlog\\.\\d+:\\d+ row \\d+ gtid 0-1-\\d+: no row on the target matches the before image.*$")
	var msgs []string
	for _, dst := range []*testserver.Server{batched, plain} {
		before := rpCheckpoint(t, dst)
		m := re.FindString(replay(1, dst))
		if m == "" {
			t.Fatalf("no conflict message naming the row")
		}
		msgs = append(msgs, m)
		if cp := rpCheckpoint(t, dst); cp != before {
			t.Errorf("checkpoint moved from %q to %q after a conflict", before, cp)
		}
		if n := stVal(t, dst, "SELECT COUNT(*) FROM bk.d"); n != "299" {
			t.Errorf("%s rows left after the conflict, want 299: part of the transaction was applied", n)
		}
	}
	if msgs[0] != msgs[1] {
		t.Errorf("the conflict reads differently from a batch of deletes:\n%s\nthan from DELETEs:\n%s", msgs[0], msgs[1])
	}
	if stCount(t, batched, "Com_rollback_to_savepoint") == rollbacks {
		t.Errorf("the deletes did not go as a batch, undone")
	}
	if errOut := replay(0, skip); !strings.Contains(errOut, "conflict skipped: delete of `bk`.`d` (`id`=150)") {
		t.Errorf("--on-conflict skip: no skipped conflict logged:\n%s", errOut)
	}
	rpCompare(t, src, skip, "--on-conflict skip")

	for _, dst := range []*testserver.Server{batched, plain} {
		dst.Exec(t, "INSERT INTO bk.d VALUES (150, 150)")
		replay(0, dst)
		rpCompare(t, src, dst, "after the fix")
		if n := stVal(t, dst, "SELECT COUNT(*) FROM bk.d"); n != "0" {
			t.Errorf("%s rows left in bk.d, want 0", n)
		}
	}
}

// TestReplayBatchedDeleteKeyType: a target whose key column is text where
// the source's is an integer compares the keys as numbers (1 matches '1'
// and '01'). A DELETE … IN there could delete a row too many where
// another is missing and still count one row per key: such a table keeps
// one DELETE per row, and the missing row stops the run as a conflict,
// nothing of its transaction applied.
func TestReplayBatchedDeleteKeyType(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	rpMysql(t, src, []byte("CREATE DATABASE bt;\nCREATE TABLE bt.t (id INT PRIMARY KEY, v INT);\nINSERT INTO bt.t SELECT seq, seq FROM bt.seq_1_to_20;\n"))
	dst.Exec(t, "CREATE DATABASE bt", "CREATE TABLE bt.t (id VARCHAR(10) PRIMARY KEY, v INT)")
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--ddl=skip")
	// Behind binlogcdc's back: '2' goes, '01' comes.
	dst.Exec(t, "DELETE FROM bt.t WHERE id = '2'", "INSERT INTO bt.t VALUES ('01', 1)")
	before := rpCheckpoint(t, dst)
	rpMysql(t, src, []byte("BEGIN;\nDELETE FROM bt.t WHERE id <= 8;\nUPDATE bt.t SET v = 0 WHERE id = 20;\nDELETE FROM bt.t WHERE id = 19;\nCOMMIT;\n"))
	_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--ddl=skip")
	// One DELETE per row stops at id 1 (it matches '1' and '01') or, in
	// a batch that found the extra row, at id 2 (missing).
	if !strings.Contains(errOut, "conflict: delete of `bt`.`t` (`id`=2)") && !strings.Contains(errOut, "matched 2 rows") {
		t.Errorf("neither the missing row nor the extra one is reported:\n%s", errOut)
	}
	if cp := rpCheckpoint(t, dst); cp != before {
		t.Errorf("checkpoint moved from %q to %q after a conflict", before, cp)
	}
	if n := stVal(t, dst, "SELECT COUNT(*) FROM bt.t"); n != "20" {
		t.Errorf("%s rows on the target after the conflict, want 20: part of the transaction was applied", n)
	}
}

// TestReplayManyMatched: an UPDATE or DELETE by key that matches more
// than one row on the target (its key column is text where the source's
// is an integer: 1 matches '1' and '01') stops the run, whatever
// --on-conflict says, with nothing of the transaction applied; one by
// one and pipelined alike.
func TestReplayManyMatched(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	rpMysql(t, src, []byte("CREATE DATABASE bt;\nCREATE TABLE bt.t (id INT PRIMARY KEY, v INT);\nINSERT INTO bt.t SELECT seq, seq FROM bt.seq_1_to_20;\n"))
	dst.Exec(t, "CREATE DATABASE bt", "CREATE TABLE bt.t (id VARCHAR(10) PRIMARY KEY, v INT)")
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--ddl=skip")
	dst.Exec(t, "INSERT INTO bt.t VALUES ('01', 100), ('03', 300)")
	before := rpCheckpoint(t, dst)
	rpMysql(t, src, []byte("BEGIN;\nUPDATE bt.t SET v = 0 WHERE id = 20;\nDELETE FROM bt.t WHERE id = 1;\nCOMMIT;\nUPDATE bt.t SET v = -3 WHERE id = 3;\n"))
	for _, policy := range []string{"error", "skip", "overwrite"} {
		_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--ddl=skip", "--on-conflict", policy)
		if !strings.Contains(errOut, "matched 2 rows, where the source changed one") {
			t.Errorf("--on-conflict %s: the extra row is not reported:\n%s", policy, errOut)
		}
		if cp := rpCheckpoint(t, dst); cp != before {
			t.Errorf("--on-conflict %s: checkpoint moved from %q to %q", policy, before, cp)
		}
		if got := stVal(t, dst, "SELECT CONCAT(COUNT(*), ' ', SUM(v)) FROM bt.t"); got != "22 610" {
			t.Errorf("--on-conflict %s: target holds %s (rows, sum of v), want 22 610: part of the transaction was applied", policy, got)
		}
	}
	// The later single UPDATE, on a target whose key is not unique (two
	// rows with id '3'), stops it too.
	dst.Exec(t, "DELETE FROM bt.t WHERE id IN ('01', '03')", "ALTER TABLE bt.t DROP PRIMARY KEY, ADD KEY (id)", "INSERT INTO bt.t VALUES ('3', 33)")
	_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--ddl=skip")
	if !strings.Contains(errOut, "matched 2 rows") || !strings.Contains(errOut, "update of `bt`.`t`") {
		t.Errorf("the update matching two rows is not reported:\n%s", errOut)
	}
	if got := stVal(t, dst, "SELECT GROUP_CONCAT(v ORDER BY v) FROM bt.t WHERE id = '3'"); got != "3,33" {
		t.Errorf("the rows with id '3' were changed: v = %s", got)
	}
}
