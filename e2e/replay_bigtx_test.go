package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestReplayLargeTransactions: a source transaction larger than the sink
// holds (8 MiB of changes) is executed in parts, each while the next is
// decoded (sink/mysql/background.go, flushBackground), with up to two
// jobs in flight. Replayed serially and with --parallel 2, the target
// ends equal to the source (rows as HEX, CHECKSUM TABLE) and the counts
// reported are exact, also when one-row transactions on the rows of the
// large ones follow, on both workers. A conflict in the middle of such a transaction,
// after parts of it were executed, ends the run as one statement at a
// time would: named, nothing of the group committed, the checkpoint
// before it; a rerun once it is fixed ends equal to the source.
func TestReplayLargeTransactions(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	var sql strings.Builder
	sql.WriteString("CREATE DATABASE bt;\nCREATE TABLE bt.t (id INT PRIMARY KEY, v INT, s VARCHAR(600));\n")
	sql.WriteString("BEGIN;\nINSERT INTO bt.t SELECT seq, seq, CONCAT('small ', seq) FROM bt.seq_1_to_10;\nCOMMIT;\n")
	// About 1 KiB held per row: 40,000 rows are several parts.
	sql.WriteString("BEGIN;\nINSERT INTO bt.t SELECT seq, seq, REPEAT(CHAR(97 + seq % 26), 500) FROM bt.seq_11_to_40000;\nCOMMIT;\n")
	sql.WriteString("BEGIN;\nINSERT INTO bt.t VALUES (40001, 1, 'between');\nCOMMIT;\n")
	sql.WriteString("BEGIN;\nUPDATE bt.t SET v = v + 1, s = CONCAT('!', s) WHERE id <= 30000;\nCOMMIT;\n")
	sql.WriteString("BEGIN;\nDELETE FROM bt.t WHERE id % 3 = 0;\nCOMMIT;\n")
	// One-row transactions on rows the large ones changed, which
	// --parallel 2 spreads over both workers: the other worker's must
	// wait until worker 0 has committed the large transactions (else
	// they wait for its row locks, which it holds until its commit).
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&sql, "UPDATE bt.t SET v = v * 2 WHERE id = %d;\nINSERT INTO bt.t VALUES (%d, 3, 'again');\n", 3*i+1, 3*i)
	}
	sql.WriteString("BEGIN;\nINSERT INTO bt.t VALUES (50000, 2, 'last');\nCOMMIT;\n")
	rpMysql(t, src, []byte(sql.String()))
	deleted := stVal(t, src, "SELECT 40001 + 40 + 1 - COUNT(*) FROM bt.t")

	for _, mode := range [][]string{nil, {"--parallel", "2"}} {
		t.Run("replay"+strings.Join(mode, ""), func(t *testing.T) {
			dst := testserver.Start(t, testserver.Options{})
			args := append([]string{"read", src.BinlogIndex(), "--to", dst.DSN() + "/"}, mode...)
			_, errOut := rpRun(t, 0, args...)
			rpCompare(t, src, dst, "after the replay")
			want := fmt.Sprintf("`bt`.`t`: 40042 inserted, 30040 updated, %s deleted, conflicts: 0 skipped, 0 overwritten", deleted)
			if !strings.Contains(errOut, want) {
				t.Errorf("the counts are not %q:\n%s", want, errOut)
			}
		})
	}

	t.Run("conflict", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		// A row the big insert writes near its end, after several of its
		// parts were executed.
		dst.Exec(t, "CREATE DATABASE bt", "CREATE TABLE bt.t (id INT PRIMARY KEY, v INT, s VARCHAR(600))",
			"INSERT INTO bt.t VALUES (39990, -1, 'in the way')")
		_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--group-rows", "5", "--ddl=skip")
		re := regexp.MustCompile("insert of `bt`.`t` \\(`id`=39990\\) at binlog\\.\\d+:\\d+ row \\d+ gtid 0-1-\\d+: duplicate key")
		if !re.MatchString(errOut) {
			t.Errorf("the conflict is not named:\n%s", errOut)
		}
		// The small transaction before is its own group (--group-rows 5):
		// committed; nothing of the big one is.
		if n := stVal(t, dst, "SELECT COUNT(*) FROM bt.t"); n != "11" {
			t.Errorf("%s rows on the target after the conflict, want the 10 of the first transaction and the one in the way", n)
		}
		if n := stVal(t, dst, "SELECT @@global.autocommit"); n != "1" {
			t.Errorf("autocommit is %s", n)
		}
		dst.Exec(t, "DELETE FROM bt.t WHERE id = 39990")
		rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--ddl=skip")
		rpCompare(t, src, dst, "after the rerun")
	})

	t.Run("update conflict", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--stop-before", "UPDATE bt.t")
		before := rpCheckpoint(t, dst)
		dst.Exec(t, "DELETE FROM bt.t WHERE id = 29000")
		_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
		if !strings.Contains(errOut, "update of `bt`.`t` (`id`=29000)") || !strings.Contains(errOut, "no row on the target matches") {
			t.Errorf("the conflict is not named:\n%s", errOut)
		}
		if cp := rpCheckpoint(t, dst); cp != before {
			t.Errorf("checkpoint moved from %q to %q after a conflict", before, cp)
		}
		if n := stVal(t, dst, "SELECT COUNT(*) FROM bt.t WHERE s LIKE '!%'"); n != "0" {
			t.Errorf("%s rows of the failed transaction were applied", n)
		}
		dst.Exec(t, "INSERT INTO bt.t SELECT id, v, s FROM (SELECT 29000 AS id, 29000 AS v, REPEAT(CHAR(97 + 29000 % 26), 500) AS s) x")
		rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
		rpCompare(t, src, dst, "after the rerun")
	})
}

// TestReplayParallelAfterLargeTransaction: with --parallel, a transaction
// too large to queue is applied by worker 0 as it is read, and committed
// on the target with worker 0's group, not at once. One of 2,000 rows
// (fewer than a group's) leaves that group open; the one-row transactions
// after it, on its rows, go to both workers, twice each. Worker 1 must
// not start on them before worker 0 has committed the large one: it
// would wait for its row locks while the coordinator waits for worker 1
// (the same rows again, on worker 0), until the lock wait timeout (2 s
// here) ends the replay. The replay ends equal to the source.
func TestReplayParallelAfterLargeTransaction(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	var sql strings.Builder
	sql.WriteString("CREATE DATABASE bu;\nCREATE TABLE bu.t (id INT PRIMARY KEY, v INT);\n")
	sql.WriteString("BEGIN;\nINSERT INTO bu.t SELECT seq, 0 FROM bu.seq_1_to_2000;\nCOMMIT;\n")
	// Integer keys are partitioned in blocks of 256.
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&sql, "UPDATE bu.t SET v = v + %d WHERE id = %d;\n", i, 50*i)
	}
	// Two rows each: keys on both workers, so some go to worker 0 (by
	// their position), which then waits for worker 1's earlier ones.
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&sql, "UPDATE bu.t SET v = v + 1 WHERE id IN (%d, %d);\n", 50*i, 50*(41-i))
	}
	rpMysql(t, src, []byte(sql.String()))
	dst := testserver.Start(t, testserver.Options{})
	dst.Exec(t, "SET GLOBAL innodb_lock_wait_timeout = 2")
	_, errOut := rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--parallel", "2")
	rpCompare(t, src, dst, "after the replay")
	if want := "`bu`.`t`: 2000 inserted, 120 updated"; !strings.Contains(errOut, want) {
		t.Errorf("the counts are not %q:\n%s", want, errOut)
	}
}
