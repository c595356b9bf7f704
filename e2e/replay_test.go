package e2e

// Replay (binlogcdc read/stream --to, --format sql, --flashback): a random
// workload on a source MariaDB is replayed into other MariaDB servers,
// which must end up with the same tables, byte for byte.

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// rpSeed is the workload's seed: RP_SEED, or the time (logged).
func rpSeed(t *testing.T) *rpGen { return seededGen(t, "RP_SEED", time.Now().UnixNano()) }

// seededGen is a workload generator seeded by the environment variable
// env, or by seed when it is not set; the seed is logged.
func seededGen(t *testing.T, env string, seed int64) *rpGen {
	if s := os.Getenv(env); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("workload seed %d (set %s to repeat it or change it)", seed, env)
	return &rpGen{r: rand.New(rand.NewSource(seed))}
}

// rpMasterPos returns the end of the server's binlog as FILE:POS.
func rpMasterPos(t testing.TB, srv *testserver.Server) string {
	t.Helper()
	r := srv.QueryStrings(t, "SHOW MASTER STATUS")
	return *r[0][0] + ":" + *r[0][1]
}

// rpCheckpoint returns the target's checkpoint of replica "default".
func rpCheckpoint(t testing.TB, dst *testserver.Server) string {
	t.Helper()
	r := dst.QueryStrings(t, "SELECT CONCAT(file, ':', pos, ' ', ddl_file) FROM binlogcdc.checkpoint WHERE replica = 'default'")
	if len(r) != 1 {
		t.Fatalf("no checkpoint row on the target")
	}
	return strings.TrimSpace(*r[0][0])
}

// rpMysql pipes sql into the mariadb client connected to srv.
func rpMysql(t testing.TB, srv *testserver.Server, sql []byte) {
	t.Helper()
	cmd := exec.Command("mariadb", "-h127.0.0.1", "-P"+strconv.Itoa(srv.Port), "-uroot", "--batch")
	cmd.Stdin = bytes.NewReader(sql)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mariadb client: %v\n%s", err, clip(string(out)))
	}
}

// rpRun runs the binlogcdc binary and expects exit code want.
func rpRun(t testing.TB, want int, args ...string) (stdout []byte, stderr string) {
	t.Helper()
	out, errOut, code := runCLI(t, nil, args...)
	if code != want {
		t.Fatalf("binlogcdc %s: exit %d, want %d; stderr:\n%s", strings.Join(args, " "), code, want, errOut)
	}
	return out, errOut
}

// TestReplay replays a random workload over every column type (extremes,
// zero dates, latin1 and utf8mb4 text, binary with NUL bytes, ENUM/SET,
// JSON, GEOMETRY), tables without a primary key, with a composite and a
// prefix one, hostile names and values, ALTERs, drops and a big
// transaction: with --to, with --format sql piped into the mariadb client,
// and with --to killed (SIGKILL) at random points and restarted. Then it
// undoes the last part of the workload with --flashback.
func TestReplay(t *testing.T) {
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, rpSchema...)
	rpWorkload(t, src, g, 500, true)
	src.Exec(t,
		"ALTER TABLE rp.types ADD COLUMN added INT NOT NULL DEFAULT 5 AFTER id",
		"ALTER TABLE rp.comp CHANGE v v2 BIGINT",
		"ALTER TABLE rp.nopk DROP COLUMN c, ADD COLUMN e VARCHAR(5) CHARACTER SET utf8mb4 DEFAULT 'é'")
	src.FlushLogs(t)
	rpWorkload(t, src, g, 300, true)
	src.Exec(t, "DROP TABLE rp.gone", "CREATE TABLE rp.temp (id INT PRIMARY KEY)", "INSERT INTO rp.temp VALUES (1)",
		"TRUNCATE rp.temp", "DROP TABLE rp.temp", "CREATE TABLE rp.big (id INT PRIMARY KEY, payload VARBINARY(200), n BIGINT UNSIGNED)")
	// A big transaction: 6000 inserts, updates and deletes in one.
	big := []string{"BEGIN"}
	for i := 0; i < 6000; i += 500 {
		var vals []string
		for j := i; j < i+500; j++ {
			vals = append(vals, fmt.Sprintf("(%d, %s, %d)", j, g.bytes(100), g.r.Uint64()))
		}
		big = append(big, "INSERT INTO rp.big VALUES "+strings.Join(vals, ","))
	}
	big = append(big, "UPDATE rp.big SET n = n DIV 2 WHERE id % 3 = 0", "DELETE FROM rp.big WHERE id % 7 = 0", "COMMIT")
	src.Exec(t, big...)
	// Long insert runs over every column type, which replay sends as LOAD
	// DATA LOCAL (sink/mysql/bulk.go): full images, and MINIMAL ones that
	// leave columns out (their defaults, not NULL).
	bulk := []string{"BEGIN"}
	for i := 0; i < 2; i++ {
		var vals []string
		for j := 0; j < 200; j++ {
			vals = append(vals, fmt.Sprintf("(%d, %s)", 5000+i*200+j, strings.Join(g.typesRow(), ", ")))
		}
		bulk = append(bulk, fmt.Sprintf("INSERT INTO rp.types (id, %s) VALUES %s", rpTypesCols, strings.Join(vals, ",")))
	}
	// And runs of updates of whole rows, which replay batches as INSERT …
	// ON DUPLICATE KEY UPDATE (sink/mysql/upsert.go).
	names := strings.Split(rpTypesCols, ", ")
	for j := 0; j < 200; j++ {
		var sets []string
		for k, v := range g.typesRow() {
			sets = append(sets, names[k]+" = "+v)
		}
		bulk = append(bulk, fmt.Sprintf("UPDATE rp.types SET %s WHERE id = %d", strings.Join(sets, ", "), 5000+2*j))
	}
	bulk = append(bulk, "COMMIT", "SET SESSION binlog_row_image = MINIMAL", "BEGIN")
	var vals []string
	for j := 0; j < 200; j++ {
		row := g.typesRow()
		vals = append(vals, fmt.Sprintf("(%d, %s, %s, %s)", 6000+j, row[21], row[27], row[30]))
	}
	bulk = append(bulk, "INSERT INTO rp.types (id, vu, bl, js) VALUES "+strings.Join(vals, ","), "COMMIT", "SET SESSION binlog_row_image = FULL")
	src.Exec(t, bulk...)
	// From here, only row changes: --flashback undoes them.
	mark := rpMasterPos(t, src)
	atMark := rpSnapshot(t, src)
	rpWorkload(t, src, g, 300, false)
	end := rpMasterPos(t, src)
	index := src.BinlogIndex()

	t.Run("to", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		_, errOut := rpRun(t, 0, "read", index, "--to", dst.DSN()+"/")
		t.Log(strings.TrimSpace(errOut))
		if !strings.Contains(errOut, "rows/s") || !strings.Contains(errOut, "`rp`.`types`:") {
			t.Errorf("no summary on stderr:\n%s", errOut)
		}
		rpCompare(t, src, dst, "read --to")
		if cp := rpCheckpoint(t, dst); cp != end {
			t.Errorf("checkpoint %q, want %q (the end of the binlog)", cp, end)
		}
		if n := stStatus(t, dst, "Com_load"); n != "0" {
			t.Errorf("%s LOAD DATA statements on the target without --load-data", n)
		}
		if n := stStatus(t, dst, "Com_rollback_to_savepoint"); n != "0" {
			t.Errorf("%s batches were undone and run again one by one: a value was not bound exactly", n)
		}
		// Again: everything was applied, nothing is applied twice.
		_, errOut = rpRun(t, 0, "read", index, "--to", dst.DSN()+"/")
		if !strings.Contains(errOut, "applied 0 rows") {
			t.Errorf("second run applied something:\n%s", errOut)
		}
		rpCompare(t, src, dst, "read --to, again")

		// Flashback of what came after the mark restores the state at it.
		sql, errOut := rpRun(t, 0, "read", index, "--flashback", "--start-position", mark)
		if !strings.Contains(errOut, "flashback SQL undoing") {
			t.Errorf("no flashback summary:\n%s", errOut)
		}
		if d := os.Getenv("RP_DEBUG"); d != "" { // keep the SQL for a look

			os.WriteFile(d+"/flashback.sql", sql, 0o644)
			b, _, _ := runCLI(t, nil, "read", index, "--start-position", mark)
			os.WriteFile(d+"/after-mark.jsonl", b, 0o644)
		}
		rpMysql(t, dst, sql)
		rpSame(t, "after --flashback", rpSnapshot(t, dst), atMark)
	})

	// The long insert runs as LOAD DATA LOCAL: every value loads exactly.
	t.Run("load-data", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		rpRun(t, 0, "read", index, "--to", dst.DSN()+"/", "--load-data")
		rpCompare(t, src, dst, "read --to --load-data")
		if n, _ := strconv.Atoi(stStatus(t, dst, "Com_load")); n < 3 { // rp.big: 1 (its three 2000-row transactions in one group), rp.types: 2 (full and MINIMAL images)
			t.Errorf("%d LOAD DATA statements on the target: the long insert runs did not go as LOAD DATA LOCAL", n)
		}
		if n := stStatus(t, dst, "Com_rollback_to_savepoint"); n != "0" {
			t.Errorf("%s batches were undone and run again one by one: a value did not load exactly", n)
		}
	})

	t.Run("format-sql", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		sql, _ := rpRun(t, 0, "read", index, "--format", "sql")
		rpMysql(t, dst, sql)
		rpCompare(t, src, dst, "read --format sql | mariadb")
	})

	t.Run("kill9", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		args := []string{"read", index, "--to", dst.DSN() + "/", "--group-rows", "25", "--group-time", "5ms"}
		// Waits short enough for a whole run on an idle machine (~60 ms).
		runs, kills := rpKillLoop(t, g, args, 12, 5, 50)
		t.Logf("%d runs, %d killed with SIGKILL", runs, kills)
		if kills < 10 {
			t.Errorf("only %d kills landed while replaying (want ≥ 10): make the workload bigger", kills)
		}
		rpCompare(t, src, dst, "read --to with kill -9")
		if cp := rpCheckpoint(t, dst); cp != end {
			t.Errorf("checkpoint %q, want %q", cp, end)
		}
	})

	t.Run("parallel-kill9", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		args := []string{"read", index, "--to", dst.DSN() + "/", "--parallel", "3", "--group-rows", "25", "--group-time", "5ms"}
		runs, kills := rpKillLoop(t, g, args, 12, 15, 80)
		t.Logf("%d runs, %d killed with SIGKILL", runs, kills)
		if kills < 10 {
			t.Errorf("only %d kills landed while replaying (want ≥ 10): make the workload bigger", kills)
		}
		rpCompare(t, src, dst, "read --to --parallel 3 with kill -9")
		if cp := rpCheckpoint(t, dst); cp != end {
			t.Errorf("checkpoint %q, want %q", cp, end)
		}
	})
}

// rpKillLoop runs binlogcdc with args, killing it with SIGKILL after a
// random wait of minMs to minMs+spanMs, until maxKills kills landed, then
// lets it finish; a run that reports "applied 0 rows" also ends it. It
// fails the test on any other exit.
func rpKillLoop(t *testing.T, g *rpGen, args []string, maxKills, minMs, spanMs int) (runs, kills int) {
	t.Helper()
	for {
		runs++
		cmd := exec.Command(cliBinary(t), args...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		if kills < maxKills {
			select {
			case err = <-done:
			case <-time.After(time.Duration(minMs+g.pick(spanMs)) * time.Millisecond):
				cmd.Process.Signal(syscall.SIGKILL)
				err = <-done
				if ee, ok := err.(*exec.ExitError); ok && ee.ProcessState.Sys().(syscall.WaitStatus).Signaled() {
					kills++
					continue
				}
			}
		} else {
			err = <-done
		}
		if err != nil {
			t.Fatalf("run %d: %v\n%s", runs, err, errb.String())
		}
		if strings.Contains(errb.String(), "applied 0 rows") || kills >= maxKills {
			return runs, kills
		}
	}
}

// TestReplayConflicts changes target rows behind binlogcdc's back: the
// default stops with a message naming the change, table, key and
// position and leaves the target at its checkpoint; skip and overwrite go
// on as documented.
func TestReplayConflicts(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	a := testserver.Start(t, testserver.Options{})
	b := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE cf", "CREATE TABLE cf.c (id INT PRIMARY KEY, v INT)", "CREATE TABLE cf.n (x INT, y VARCHAR(10))",
		"INSERT INTO cf.c VALUES (1,1),(2,2),(3,3),(4,4),(5,5)", "INSERT INTO cf.n VALUES (1,'a'),(2,'b')")
	for _, dst := range []*testserver.Server{a, b} {
		rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
		// Behind binlogcdc's back:
		dst.Exec(t, "DELETE FROM cf.c WHERE id IN (2, 3)", "INSERT INTO cf.c VALUES (10, 999)", "UPDATE cf.n SET y = 'B' WHERE x = 2")
	}
	before := rpCheckpoint(t, a)
	pos := rpMasterPos(t, src)
	src.Exec(t, "BEGIN", "INSERT INTO cf.c VALUES (6, 6)", "UPDATE cf.c SET v = 20 WHERE id = 2", "COMMIT",
		"INSERT INTO cf.c VALUES (10, 10)", "DELETE FROM cf.c WHERE id = 3", "DELETE FROM cf.n WHERE x = 2", "INSERT INTO cf.c VALUES (7, 7)")

	// error (the default): stops at the first conflict, names it.
	_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", a.DSN()+"/")
	file := strings.Split(pos, ":")[0]
	re := regexp.MustCompile("conflict: update of `cf`.`c` \\(`id`=2\\) at " + regexp.QuoteMeta(file) + `:\d+ row 0 gtid 0-1-\d+: no row on the target matches the before image`)
	if !re.MatchString(errOut) {
		t.Errorf("conflict message does not name the change, table, key and position:\n%s", errOut)
	}
	if cp := rpCheckpoint(t, a); cp != before {
		t.Errorf("checkpoint moved from %q to %q after a conflict", before, cp)
	}
	if n := stVal(t, a, "SELECT COUNT(*) FROM cf.c WHERE id = 6"); n != "0" {
		t.Errorf("the conflicting transaction was partly applied (row 6 is there)")
	}

	// skip: every conflict is logged and counted; the target keeps its rows.
	_, errOut = rpRun(t, 0, "read", src.BinlogIndex(), "--to", a.DSN()+"/", "--on-conflict", "skip")
	if n := strings.Count(errOut, "conflict skipped:"); n != 4 {
		t.Errorf("%d conflicts logged, want 4:\n%s", n, errOut)
	}
	if !strings.Contains(errOut, "`cf`.`c`: 2 inserted, 0 updated, 0 deleted, conflicts: 3 skipped, 0 overwritten") ||
		!strings.Contains(errOut, "`cf`.`n`: 0 inserted, 0 updated, 0 deleted, conflicts: 1 skipped") {
		t.Errorf("summary does not count the skipped conflicts:\n%s", errOut)
	}
	if got := rpRows(t, a, "SELECT * FROM cf.c ORDER BY id"); got != `"1","1"`+"\n"+`"4","4"`+"\n"+`"5","5"`+"\n"+`"6","6"`+"\n"+`"7","7"`+"\n"+`"10","999"` {
		t.Errorf("after skip, cf.c is:\n%s", got)
	}

	// overwrite: rows found by key end up as on the source; the keyless
	// row changed on the target cannot be found, so it stays.
	_, errOut = rpRun(t, 0, "read", src.BinlogIndex(), "--to", b.DSN()+"/", "--on-conflict", "overwrite")
	if n := strings.Count(errOut, "conflict overwritten:"); n != 4 {
		t.Errorf("%d conflicts logged, want 4:\n%s", n, errOut)
	}
	q := "SELECT * FROM cf.c ORDER BY id"
	if got, want := rpRows(t, b, q), rpRows(t, src, q); got != want {
		t.Errorf("after overwrite, cf.c is\n%s\nwant\n%s", got, want)
	}
	if got := rpRows(t, b, "SELECT * FROM cf.n ORDER BY x"); got != `"1","a"`+"\n"+`"2","B"` {
		t.Errorf("after overwrite, cf.n is:\n%s", got)
	}
}

// TestReplayStream follows a live source with stream --to, through a
// SIGKILL and a restart, and stops it with SIGTERM.
func TestReplayStream(t *testing.T) {
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, rpSchema...)
	rpWorkload(t, src, g, 100, true)
	dir := t.TempDir()
	args := []string{"--source", src.DSN(), "--from", "earliest", "--to", dst.DSN() + "/", "--group-time", "20ms"}
	// Caught up: the checkpoint is at the end of the source's last
	// transaction. (Not necessarily at the end of the binlog: MariaDB
	// writes the BINLOG_CHECKPOINT event of a FLUSH LOGS when the older
	// file's transactions are durable, which under load comes after later
	// transactions; the checkpoint moves only at transaction ends.)
	caughtUp := func() bool {
		f, end := stTxEnd(t, src, stLastGTID(t, src))
		want := fmt.Sprintf("%s:%d", f, end)
		r := dst.QueryStrings(t, "SELECT CONCAT(file, ':', pos) FROM binlogcdc.checkpoint WHERE replica = 'default'")
		return len(r) == 1 && *r[0][0] == want
	}
	waitDB := func() bool {
		return len(dst.QueryStrings(t, "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'binlogcdc' AND TABLE_NAME = 'checkpoint'")) == 1
	}

	r := stStart(t, dir, "1", nil, args...)
	stPoll(t, time.Minute, r, "the target's checkpoint table", waitDB)
	stPoll(t, time.Minute, r, "the stream to catch up", caughtUp)
	src.FlushLogs(t) // a ROTATE while following
	// More changes while it runs, then kill -9 in the middle of them.
	go func() { time.Sleep(30 * time.Millisecond); r.kill9() }()
	rpWorkload(t, src, g, 150, false)
	<-r.done
	r = stStart(t, dir, "2", nil, args...)
	rpWorkload(t, src, g, 50, false)
	stPoll(t, time.Minute, r, "the restarted stream to catch up", caughtUp)
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
	if !strings.Contains(r.errText(), "resuming at") || !strings.Contains(r.errText(), "rows/s") {
		t.Errorf("the restart did not resume from the target, or no summary:\n%s", r.errText())
	}
	rpCompare(t, src, dst, "stream --to with kill -9")
}

// TestReplayMinimalImage replays binlog_row_image=MINIMAL changes: only
// the changed columns are set, absent ones never become NULL; --flashback
// refuses partial images.
func TestReplayMinimalImage(t *testing.T) {
	src := testserver.Start(t, testserver.Options{RowImage: "MINIMAL"})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE m",
		"CREATE TABLE m.pk (id INT PRIMARY KEY, a INT, b VARCHAR(10) DEFAULT 'dflt', c BLOB)",
		"CREATE TABLE m.nopk (a INT, b VARCHAR(10))",
		"CREATE TABLE m.uk (u INT NOT NULL UNIQUE, v INT)",
		"INSERT INTO m.pk (id, a) VALUES (1, 1), (2, 2), (3, 3)",
		"INSERT INTO m.pk VALUES (4, 4, 'x', 'blob')",
		"UPDATE m.pk SET a = 10 WHERE id = 1",
		"UPDATE m.pk SET b = NULL WHERE id = 4",
		"UPDATE m.pk SET id = 20 WHERE id = 2",
		"DELETE FROM m.pk WHERE id = 3",
		"INSERT INTO m.nopk VALUES (1, 'a'), (1, 'a'), (2, NULL)",
		"UPDATE m.nopk SET b = 'z' WHERE a = 2",
		"DELETE FROM m.nopk WHERE a = 1 LIMIT 1",
		"INSERT INTO m.uk VALUES (1, 1), (2, 2)",
		"UPDATE m.uk SET v = 5 WHERE u = 1",
		"DELETE FROM m.uk WHERE u = 2")
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
	rpCompare(t, src, dst, "MINIMAL images")
	_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--flashback")
	if !strings.Contains(errOut, "--flashback needs full row images") {
		t.Errorf("--flashback of MINIMAL images: %s", errOut)
	}
}
