package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestReplaySetEmptyMember: a SET with a member ” holds values whose
// text (the server's, and the binlog decoder's) leaves that member out:
// ” for it alone, 'x' for it and 'x'. Replay writes those as their
// bitmask, so every path stores the very members: a LOAD DATA run, a
// batch of updates, one statement at a time, SQL text, and a keyless
// table's WHERE, which must tell the row holding ” apart from the
// empty set.
func TestReplaySetEmptyMember(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE se",
		"CREATE TABLE se.k (id INT PRIMARY KEY, st SET('', 'x', 'y z'), m SET('a', '', 'b'), v INT)",
		"CREATE TABLE se.nk (a INT, st SET('', 'x'))")
	var rows []string
	for i := 0; i < 200; i++ {
		rows = append(rows, fmt.Sprintf("(%d, %d, %d, %d)", i, i%8, (i/8)%8, i))
	}
	src.Exec(t, "INSERT INTO se.k VALUES "+strings.Join(rows, ", "),
		"UPDATE se.k SET v = v + 1 WHERE id < 60",                             // batched: the SETs unchanged
		"UPDATE se.k SET st = (st + 1) % 8, m = 1 WHERE id BETWEEN 60 AND 99", // and changed
		"INSERT INTO se.nk VALUES (1, 0), (1, 1), (2, 3), (2, 2)",
		"DELETE FROM se.nk WHERE a = 1 AND st + 0 = 1 LIMIT 1",
		"UPDATE se.nk SET a = 3 WHERE st + 0 = 3")
	q := map[string]string{"k": "SELECT id, st + 0, m + 0, v FROM se.k ORDER BY id", "nk": "SELECT a, st + 0 FROM se.nk ORDER BY a, st + 0"}
	for _, args := range [][]string{{"--to"}, {"--to", "--load-data"}, {"--to", "--bulk-load=false"}, {"--format", "sql"}} {
		dst := testserver.Start(t, testserver.Options{})
		if args[0] == "--to" {
			rpRun(t, 0, append([]string{"read", src.BinlogIndex(), "--to", dst.DSN() + "/"}, args[1:]...)...)
		} else {
			sql, _ := rpRun(t, 0, "read", src.BinlogIndex(), "--format", "sql")
			rpMysql(t, dst, sql)
		}
		for name, query := range q {
			if got, want := rpRows(t, dst, query), rpRows(t, src, query); got != want {
				t.Errorf("%v: se.%s differs: %s", args, name, firstDiff(got, want))
			}
		}
	}
}
