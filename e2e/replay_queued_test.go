package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// rpRefuseCheckpoints has dst refuse (SIGNAL 'checkpoint refused') every
// UPDATE of binlogcdc.checkpoint for which cond, over OLD and NEW, holds,
// in place of any such rule before.
func rpRefuseCheckpoints(t testing.TB, dst *testserver.Server, cond string) {
	t.Helper()
	dst.Exec(t, "DROP TRIGGER IF EXISTS binlogcdc.refuse",
		"CREATE TRIGGER binlogcdc.refuse BEFORE UPDATE ON binlogcdc.checkpoint FOR EACH ROW "+
			"IF "+cond+" THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'checkpoint refused'; END IF")
}

// rpOffset is the offset of a FILE:POS position (rpMasterPos).
func rpOffset(pos string) uint64 {
	n, _ := strconv.ParseUint(pos[strings.LastIndexByte(pos, ':')+1:], 10, 64)
	return n
}

// TestReplayCheckpointRefused: read --to sends each group's checkpoint
// UPDATE first, with the group's first statement (sink/mysql/queued.go),
// in autocommit=0. When the target refuses that UPDATE, the group's
// changes must not commit, whichever statement came with it (a pipeline
// of INSERTs, LOAD DATA, a pipeline of batched updates, of batched deletes): the run stops,
// the target keeps exactly the groups before, and a rerun, once the
// target accepts the UPDATE again, ends equal to the source.
func TestReplayCheckpointRefused(t *testing.T) {
	for _, mode := range []string{"--bulk-load", "--load-data"} { // a group led by encoded INSERTs, or by LOAD DATA
		t.Run(mode, func(t *testing.T) { rpCheckpointRefused(t, mode) })
	}
}

func rpCheckpointRefused(t *testing.T, mode string) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	ref := testserver.Start(t, testserver.Options{})
	rpMysql(t, src, []byte("CREATE DATABASE cq;\nCREATE TABLE cq.t (id INT PRIMARY KEY, v INT, s VARCHAR(20));\n"))
	txs := []string{
		"INSERT INTO cq.t SELECT seq, seq, CONCAT('a', seq) FROM cq.seq_1_to_300",    // INSERTs, or LOAD DATA
		"UPDATE cq.t SET v = v + 1000, s = CONCAT(s, 'u') WHERE id <= 300",           // INSERT … ON DUPLICATE KEY UPDATE
		"DELETE FROM cq.t WHERE id % 2 = 0",                                          // DELETE … IN
		"INSERT INTO cq.t SELECT seq, -seq, CONCAT('b', seq) FROM cq.seq_301_to_600", // again
		"UPDATE cq.t SET v = 7 WHERE id = 1",                                         // one statement (no batch)
	}
	var ends []string
	for _, tx := range txs {
		rpMysql(t, src, []byte("BEGIN;\n"+tx+";\nCOMMIT;\n"))
		ends = append(ends, rpMasterPos(t, src))
	}
	index := src.BinlogIndex()
	args := func(more ...string) []string {
		return append([]string{"read", index, "--to", dst.DSN() + "/", "--group-rows", "100", mode}, more...)
	}
	// The schema first, and the checkpoint table.
	rpRun(t, 0, args("--stop-position", ends[0])...)
	for k := 1; k < len(txs); k++ {
		// The target refuses any checkpoint past transaction k.
		rpRefuseCheckpoints(t, dst, "NEW.pos > "+strconv.FormatUint(rpOffset(ends[k-1]), 10))
		_, errOut := rpRun(t, 1, args()...)
		if !strings.Contains(errOut, "checkpoint refused") {
			t.Errorf("transaction %d: the refused checkpoint is not reported:\n%s", k+1, errOut)
		}
		if cp := rpCheckpoint(t, dst); !strings.HasPrefix(cp, ends[k-1]+" ") && cp != ends[k-1] {
			t.Errorf("transaction %d: checkpoint %q, want %q", k+1, cp, ends[k-1])
		}
		// What the source held after transaction k, replayed with
		// nothing refused.
		rpRun(t, 0, "read", index, "--to", ref.DSN()+"/", "--stop-position", ends[k-1])
		rpSame(t, "after a refused checkpoint", rpSnapshot(t, dst), rpSnapshot(t, ref))
	}
	dst.Exec(t, "DROP TRIGGER binlogcdc.refuse")
	rpRun(t, 0, args()...)
	rpCompare(t, src, dst, "after the refusals")
}

// TestReplayCheckpointRowDeleted: a group whose checkpoint UPDATE matches
// no row (the row was deleted on the target behind binlogcdc's back)
// must not commit: its changes would be applied again by the next run,
// which no longer knows where the last one stopped. Both ways the
// checkpoint is saved: first in the group's first write (--on-conflict
// error, queued.go) and at its end (skip). A trigger on the data table
// deletes the row while a group is applied; the next group must fail.
func TestReplayCheckpointRowDeleted(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	rpMysql(t, src, []byte("CREATE DATABASE cq;\nCREATE TABLE cq.t (id INT PRIMARY KEY, v INT);\n"))
	for i := 0; i < 5; i++ {
		rpMysql(t, src, []byte(fmt.Sprintf("INSERT INTO cq.t SELECT seq, seq FROM cq.seq_%d_to_%d;\n", i*100+1, i*100+100)))
	}
	for _, c := range []struct{ policy, want string }{
		// The checkpoint UPDATE goes first: the group that deleted the
		// row had matched it, and committed; the next fails.
		{"error", "300 300"},
		// It comes last: the group that deleted the row fails itself.
		{"skip", "200 200"},
	} {
		policy := c.policy
		dst.Exec(t, "DROP DATABASE IF EXISTS cq", "DROP DATABASE IF EXISTS binlogcdc", "CREATE DATABASE cq",
			"CREATE TABLE cq.t (id INT PRIMARY KEY, v INT)",
			"CREATE TRIGGER cq.gone AFTER INSERT ON cq.t FOR EACH ROW IF NEW.id = 250 THEN DELETE FROM binlogcdc.checkpoint WHERE replica = 'default'; END IF")
		_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--ddl=skip", "--fire-triggers",
			"--group-rows", "100", "--on-conflict", policy)
		if !strings.Contains(errOut, "matched 0 rows instead of 1") {
			t.Errorf("--on-conflict %s: the missing checkpoint row is not reported:\n%s", policy, errOut)
		}
		if got := stVal(t, dst, "SELECT CONCAT(COUNT(*), ' ', MAX(id)) FROM cq.t"); got != c.want {
			t.Errorf("--on-conflict %s: the target holds %s (rows, largest id), want %s", policy, got, c.want)
		}
	}
}

// TestReplayParallelCheckpointRefused: with --parallel 3 (and 1), the
// target refuses every checkpoint past a point, whichever worker saves
// it; each run must fail, and a last run with nothing refused must end
// equal to the source (a group committed without its checkpoint would be
// applied twice: a conflict).
func TestReplayParallelCheckpointRefused(t *testing.T) {
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	rpParallelWorkload(t, src, g)
	end := rpMasterPos(t, src)
	endOff := rpOffset(end)
	index := src.BinlogIndex()
	for _, par := range []string{"3", "1"} {
		t.Run("p"+par, func(t *testing.T) {
			dst := testserver.Start(t, testserver.Options{})
			args := []string{"read", index, "--to", dst.DSN() + "/", "--parallel", par, "--group-rows", "7", "--group-time", "5ms"}
			// Nothing applied: binlogcdc.checkpoint and its rows made.
			rpRun(t, 0, append(args, "--stop-position", end[:strings.LastIndexByte(end, ':')]+":4")...)
			for _, frac := range []float64{0.2, 0.45, 0.7, 0.9} {
				off := int(float64(endOff) * frac)
				rpRefuseCheckpoints(t, dst, fmt.Sprintf("NEW.pos > %d", off))
				_, errOut := rpRun(t, 1, args...)
				if !strings.Contains(errOut, "checkpoint refused") {
					t.Errorf("frac %v: not refused:\n%s", frac, errOut)
				}
			}
			dst.Exec(t, "DROP TRIGGER binlogcdc.refuse")
			rpRun(t, 0, args...)
			rpCompare(t, src, dst, "parallel after refusals")
		})
	}
}

// TestStreamIdleHoldsNoLocks: a replay that has caught up and waits for
// the source holds no transaction and no metadata lock on the target (no
// session left in autocommit=0 with a transaction open, queued.go): a DDL
// from another session on every table, and on binlogcdc.checkpoint, goes
// through, where a lock would make it fail after lock_wait_timeout.
func TestStreamIdleHoldsNoLocks(t *testing.T) {
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, rpSchema...)
	rpWorkload(t, src, g, 100, false)
	dir := t.TempDir()
	args := []string{"--source", src.DSN(), "--from", "earliest", "--to", dst.DSN() + "/", "--group-rows", "1", "--group-time", "1h"}
	caughtUp := func() bool {
		f, end := stTxEnd(t, src, stLastGTID(t, src))
		want := fmt.Sprintf("%s:%d", f, end)
		if len(dst.QueryStrings(t, "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'binlogcdc' AND TABLE_NAME = 'checkpoint'")) != 1 {
			return false
		}
		r := dst.QueryStrings(t, "SELECT CONCAT(file, ':', pos) FROM binlogcdc.checkpoint WHERE replica = 'default'")
		return len(r) == 1 && *r[0][0] == want
	}
	r := stStart(t, dir, "1", nil, args...)
	stPoll(t, time.Minute, r, "the stream to catch up", caughtUp)
	trx := dst.QueryStrings(t, "SELECT COUNT(*) FROM information_schema.INNODB_TRX")
	if *trx[0][0] != "0" {
		t.Errorf("idle stream holds %s open transactions", *trx[0][0])
	}
	var tables []string
	for _, row := range dst.QueryStrings(t, "SELECT CONCAT('`', REPLACE(TABLE_SCHEMA, '`', '``'), '`.`', REPLACE(TABLE_NAME, '`', '``'), '`') FROM information_schema.TABLES WHERE TABLE_SCHEMA NOT IN ('mysql','information_schema','performance_schema','sys','binlogcdc') AND TABLE_TYPE = 'BASE TABLE'") {
		tables = append(tables, *row[0])
	}
	for _, tb := range append(tables, "`binlogcdc`.`checkpoint`") {
		dst.Exec(t, "SET SESSION lock_wait_timeout = 3", "ALTER TABLE "+tb+" COMMENT = 'x'")
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
}

// TestStreamToFailsWhenQuiet: stream --to applies a full group in the
// background; when that group fails and the source then goes quiet, no
// call to the sink returns the failure, yet the stream must end at once
// with it (exit 1), not sit waiting for events with the target behind.
func TestStreamToFailsWhenQuiet(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE sq", "CREATE TABLE sq.t (id INT PRIMARY KEY, v INT)")
	dir := t.TempDir()
	r := stStart(t, dir, "s", nil, "--source", src.DSN(), "--from", "earliest", "--to", dst.DSN()+"/",
		"--group-rows", "100", "--group-time", "1h")
	stPoll(t, time.Minute, r, "the stream to create the table", func() bool {
		return r.ready() && len(dst.QueryStrings(t, "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sq' AND TABLE_NAME = 't'")) == 1
	})
	rpRefuseCheckpoints(t, dst, "TRUE")
	src.Exec(t, "INSERT INTO sq.t SELECT seq, seq FROM sq.seq_1_to_300") // one group, applied in the background
	if code := r.wait(time.Minute); code != 1 {
		t.Fatalf("stream exit %d, want 1; stderr:\n%s", code, r.errText())
	}
	if !strings.Contains(r.errText(), "checkpoint refused") {
		t.Errorf("the failure is not reported:\n%s", r.errText())
	}
	if got := stVal(t, dst, "SELECT COUNT(*) FROM sq.t"); got != "0" {
		t.Errorf("the failed group left %s rows on the target", got)
	}
}
