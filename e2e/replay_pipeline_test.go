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
