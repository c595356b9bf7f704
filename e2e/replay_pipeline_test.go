package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestReplayPipelineConflict: replay sends many statements per round trip
// (sink/mysql/pipeline.go). A conflict in the middle of such a batch must
// end the run exactly as one statement at a time would: the same message,
// the group rolled back, the checkpoint before it; earlier groups stay
// committed; and after the conflict is fixed, the replay resumes to the
// source's state.
func TestReplayPipelineConflict(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	var sql strings.Builder
	sql.WriteString("CREATE DATABASE pl;\nCREATE TABLE pl.t (id INT PRIMARY KEY, v INT, s VARCHAR(20));\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&sql, "INSERT INTO pl.t VALUES (%d, %d, 'row %d');\n", i, i, i)
	}
	rpMysql(t, src, []byte(sql.String()))
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
	q := "SELECT * FROM pl.t ORDER BY id"
	if got, want := rpRows(t, dst, q), rpRows(t, src, q); got != want {
		t.Fatalf("after the inserts, the target differs from the source")
	}

	// Behind binlogcdc's back: row 150 goes.
	dst.Exec(t, "DELETE FROM pl.t WHERE id = 150")
	before := rpCheckpoint(t, dst)
	sql.Reset()
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&sql, "UPDATE pl.t SET v = v + 1000 WHERE id = %d;\n", i)
		if i%7 == 0 {
			fmt.Fprintf(&sql, "INSERT INTO pl.t VALUES (%d, 0, 'new');\n", 1000+i)
		}
		if i%11 == 0 && i != 154 {
			fmt.Fprintf(&sql, "DELETE FROM pl.t WHERE id = %d;\n", i+4)
		}
	}
	rpMysql(t, src, []byte(sql.String()))

	// One group (the default --group-rows 1000): all of it rolls back.
	_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
	re := regexp.MustCompile("conflict: update of `pl`.`t` \\(`id`=150\\) at binlog\\.\\d+:\\d+ row 0 gtid 0-1-\\d+: no row on the target matches the before image")
	if !re.MatchString(errOut) {
		t.Errorf("conflict message does not name the change:\n%s", errOut)
	}
	if cp := rpCheckpoint(t, dst); cp != before {
		t.Errorf("checkpoint moved from %q to %q after a conflict", before, cp)
	}
	if n := stVal(t, dst, "SELECT COUNT(*) FROM pl.t WHERE v >= 1000"); n != "0" {
		t.Errorf("%s rows of the failed group were applied", n)
	}

	// Small groups: the groups before the conflict commit, the rest not.
	_, errOut = rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--group-rows", "10")
	if !re.MatchString(errOut) {
		t.Errorf("conflict message does not name the change:\n%s", errOut)
	}
	if n := stVal(t, dst, "SELECT COUNT(*) FROM pl.t WHERE id > 150 AND id <= 300 AND v >= 1000"); n != "0" {
		t.Errorf("%s rows after the conflict were applied", n)
	}
	if n := stVal(t, dst, "SELECT COUNT(*) FROM pl.t WHERE id < 140 AND v < 1000"); n != "0" {
		t.Errorf("%s rows of the groups before the conflict were not applied", n)
	}
	if n := stVal(t, dst, "SELECT @@global.autocommit"); n != "1" {
		t.Errorf("autocommit is %s", n)
	}

	// Fixed. But row 200 is locked by another session: a lock wait
	// timeout in the middle of a batch ends the run, nothing of the group
	// is applied (the statements after it neither: autocommit is off).
	dst.Exec(t, "INSERT INTO pl.t VALUES (150, 150, 'row 150')", "SET GLOBAL innodb_lock_wait_timeout = 1")
	before = rpCheckpoint(t, dst)
	applied := stVal(t, dst, "SELECT COUNT(*) FROM pl.t WHERE v >= 1000")
	dst.Exec(t, "BEGIN", "SELECT * FROM pl.t WHERE id = 200 FOR UPDATE")
	_, errOut = rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
	if !strings.Contains(errOut, "update of `pl`.`t` at") || !strings.Contains(errOut, "Lock wait timeout") {
		t.Errorf("the lock wait timeout is not reported:\n%s", errOut)
	}
	dst.Exec(t, "ROLLBACK", "SET GLOBAL innodb_lock_wait_timeout = 50")
	if cp := rpCheckpoint(t, dst); cp != before {
		t.Errorf("checkpoint moved from %q to %q after a lock wait timeout", before, cp)
	}
	if n := stVal(t, dst, "SELECT COUNT(*) FROM pl.t WHERE v >= 1000"); n != applied {
		t.Errorf("%s rows with v >= 1000 after a failed group, %s before", n, applied)
	}

	// The replay resumes and ends where the source is.
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
	if got, want := rpRows(t, dst, q), rpRows(t, src, q); got != want {
		t.Errorf("after the resumed replay, pl.t is\n%s\nwant\n%s", got, want)
	}
}

// TestReplayPipelineStreamed: a pipeline's statements are sent as they
// are encoded (sink/mysql/pipeline.go, pipeStreamBytes), so once some
// are on their way no other command may be sent before their results
// are read. One source transaction mixes what needs one: 3072 inserts of
// long rows (three statements of 150 KB, streamed), then 256 updates (two
// statements, streamed) and 40 deletes of a table whose catalog binlogcdc
// asks before it batches them, and statement shapes not prepared yet. With a duplicate key behind
// binlogcdc's back in the third INSERT, and then with a row missing for
// an update after the streamed inserts, the run stops with the change
// named, nothing of the transaction applied and the checkpoint before
// it; fixed, it resumes to the source's rows.
func TestReplayPipelineStreamed(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	var sql strings.Builder
	sql.WriteString("CREATE DATABASE ps;\nCREATE TABLE ps.a (id INT PRIMARY KEY, s VARCHAR(200));\nCREATE TABLE ps.b (id INT PRIMARY KEY, v INT, s VARCHAR(300));\nINSERT INTO ps.b VALUES ")
	for i := 1; i <= 300; i++ {
		if i > 1 {
			sql.WriteString(",")
		}
		fmt.Fprintf(&sql, "(%d, %d, 'b %d %s')", i, i, i, strings.Repeat("x", 250))
	}
	sql.WriteString(";\n")
	rpMysql(t, src, []byte(sql.String()))
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
	before := rpCheckpoint(t, dst)

	sql.Reset()
	sql.WriteString("BEGIN;\nINSERT INTO ps.a VALUES ")
	for i := 1; i <= 3072; i++ {
		if i > 1 {
			sql.WriteString(",")
		}
		fmt.Fprintf(&sql, "(%d, '%s')", i, strings.Repeat(fmt.Sprintf("%04d", i), 37))
	}
	sql.WriteString(";\nUPDATE ps.b SET v = v + 1000, s = CONCAT(s, ' updated') WHERE id <= 256;\n")
	sql.WriteString("DELETE FROM ps.b WHERE id > 260;\nCOMMIT;\n")
	rpMysql(t, src, []byte(sql.String()))

	untouched := func(what string) {
		t.Helper()
		if cp := rpCheckpoint(t, dst); cp != before {
			t.Errorf("%s: checkpoint moved from %q to %q", what, before, cp)
		}
		if n := stVal(t, dst, "SELECT COUNT(*) FROM ps.a WHERE s <> 'theirs'"); n != "0" {
			t.Errorf("%s: %s inserts of the transaction were applied", what, n)
		}
		if n := stVal(t, dst, "SELECT COUNT(*) FROM ps.b WHERE v >= 1000 OR id > 260"); n != "40" {
			t.Errorf("%s: %s changes of ps.b were applied", what, n)
		}
	}

	// A duplicate key in the third INSERT of ps.a.
	dst.Exec(t, "INSERT INTO ps.a VALUES (2500, 'theirs')")
	// --group-rows 1000: the transaction is handed to the background
	// goroutine at its commit (the way of every group but the last).
	_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--group-rows", "1000")
	re := regexp.MustCompile("conflict: insert of `ps`.`a` \\(`id`=2500\\) at binlog\\.\\d+:\\d+ row \\d+ gtid 0-1-\\d+: duplicate key on the target")
	if !re.MatchString(errOut) {
		t.Errorf("conflict message does not name the change:\n%s", errOut)
	}
	untouched("after the duplicate key")

	// Fixed; but row 120 of ps.b, updated after the inserts, is missing.
	dst.Exec(t, "DELETE FROM ps.a WHERE id = 2500")
	dst.Exec(t, "DELETE FROM ps.b WHERE id = 120")
	_, errOut = rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--group-rows", "1000")
	re = regexp.MustCompile("conflict: update of `ps`.`b` \\(`id`=120\\) at binlog\\.\\d+:\\d+ row \\d+ gtid 0-1-\\d+: no row on the target matches the before image")
	if !re.MatchString(errOut) {
		t.Errorf("conflict message does not name the change:\n%s", errOut)
	}
	untouched("after the missing row")

	dst.Exec(t, "INSERT INTO ps.b VALUES (120, 120, CONCAT('b 120 ', REPEAT('x', 250)))")
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--group-rows", "1000")
	for _, q := range []string{"SELECT id, HEX(s) FROM ps.a ORDER BY id", "SELECT id, v, HEX(s) FROM ps.b ORDER BY id"} {
		if got, want := rpRows(t, dst, q), rpRows(t, src, q); got != want {
			t.Fatalf("%s: the target differs from the source", q)
		}
	}
	if got, want := rpRows(t, dst, "CHECKSUM TABLE ps.a, ps.b"), rpRows(t, src, "CHECKSUM TABLE ps.a, ps.b"); got != want {
		t.Errorf("CHECKSUM TABLE: %s, source %s", got, want)
	}
}
