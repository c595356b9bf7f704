package e2e

// Replay on real-world schemas (issue 10): triggers, foreign key
// cascades (and a session with foreign_key_checks=0), STORED and VIRTUAL
// generated columns and system-versioned tables must reach the target as
// a native replica keeps them, or stop before anything wrong is written.

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// scSnapshot describes every table of the user databases but those in
// skip: its columns (invisible period columns included), CHECKSUM TABLE,
// and every row, history rows included (FOR SYSTEM_TIME ALL), as HEX of
// every column, ordered.
func scSnapshot(t testing.TB, srv *testserver.Server, skip ...string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	tables := srv.QueryStrings(t, "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') AND TABLE_SCHEMA NOT IN ('mysql','information_schema','performance_schema','sys','binlogcdc')")
next:
	for _, r := range tables {
		db, tb, typ := *r[0], *r[1], *r[2]
		for _, s := range skip {
			if s == db+"."+tb {
				continue next
			}
		}
		full := rpQ(db) + "." + rpQ(tb)
		where := fmt.Sprintf("TABLE_SCHEMA = '%s' AND TABLE_NAME = '%s'", db, tb)
		var cols, hexed []string
		explicitPeriod := false
		for _, c := range srv.QueryStrings(t, "SELECT COLUMN_NAME, COALESCE(GENERATION_EXPRESSION, '') FROM information_schema.COLUMNS WHERE "+where+" ORDER BY ORDINAL_POSITION") {
			cols = append(cols, *c[0])
			explicitPeriod = explicitPeriod || *c[1] == "ROW START"
		}
		// CHECKSUM TABLE is no oracle for a table with VIRTUAL columns:
		// MariaDB 10.11 gives two tables with the same rows (a copy made
		// with INSERT … SELECT) different checksums. Their rows, virtual
		// columns computed, are compared all the same.
		checksum := "CHECKSUM TABLE " + full
		if stVal(t, srv, "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE "+where+" AND EXTRA LIKE '%VIRTUAL%'") != "0" {
			checksum = "SELECT 'not comparable: VIRTUAL columns'"
		}
		from := full
		if typ == "SYSTEM VERSIONED" {
			if !explicitPeriod {
				cols = append(cols, "row_start", "row_end")
			}
			from += " FOR SYSTEM_TIME ALL"
		}
		for _, c := range cols {
			hexed = append(hexed, "HEX("+rpQ(c)+")")
		}
		snap[full] = "columns: " + strings.Join(cols, ",") +
			"\ndefinition: " + rpRows(t, srv, "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, EXTRA, COALESCE(GENERATION_EXPRESSION, '') FROM information_schema.COLUMNS WHERE "+where+" ORDER BY ORDINAL_POSITION") +
			"\nrows:\n" + rpRows(t, srv, "SELECT "+strings.Join(hexed, ", ")+" FROM "+from+" ORDER BY "+strings.Join(hexed, ", ")) +
			"\nchecksum: " + rpRows(t, srv, checksum)
	}
	return snap
}

// scOnly keeps the tables of snap that match one of the comma-separated
// patterns (db.table, or db.prefix*).
func scOnly(snap map[string]string, patterns string) map[string]string {
	out := map[string]string{}
	for name, v := range snap {
		plain := strings.NewReplacer("`", "").Replace(name)
		for _, p := range strings.Split(patterns, ",") {
			if plain == p || strings.HasSuffix(p, "*") && strings.HasPrefix(plain, strings.TrimSuffix(p, "*")) {
				out[name] = v
			}
		}
	}
	return out
}

// scWorkload is the fixed workload of testdata/schemas.sql, then n more
// transactions over the same tables.
func scWorkload(t *testing.T, src *testserver.Server, n int) {
	sql, err := os.ReadFile("testdata/schemas.sql")
	if err != nil {
		t.Fatal(err)
	}
	rpMysql(t, src, sql)
	g := rpSeed(t)
	var b strings.Builder
	b.WriteString("USE sc;\n")
	for i := 0; i < n; i++ {
		id := 5000 + i
		switch g.pick(6) {
		case 0:
			fmt.Fprintf(&b, "INSERT INTO tr VALUES (%d, %d, 'w%d');\n", id, g.pick(100), i)
			fmt.Fprintf(&b, "UPDATE tr SET v = v + 1 WHERE id = %d;\n", id-g.pick(5))
		case 1:
			fmt.Fprintf(&b, "BEGIN; INSERT INTO fk_a VALUES (%d, 'p'); INSERT INTO fk_b VALUES (%d, %d, 1); INSERT INTO fk_c VALUES (%d, %d); INSERT INTO fk_d VALUES (%d, %d); COMMIT;\n", id, id, id, id, id, id, id)
		case 2:
			fmt.Fprintf(&b, "DELETE FROM fk_a WHERE id = %d;\n", id-1-g.pick(6))
			fmt.Fprintf(&b, "UPDATE fk_a SET id = id + 100000 WHERE id = %d;\n", id-1-g.pick(6))
		case 3:
			fmt.Fprintf(&b, "INSERT INTO gen (id, a, b) VALUES (%d, %d, 'g%d');\n", id, g.pick(1000), i)
			fmt.Fprintf(&b, "UPDATE gen SET a = a + 1, b = CONCAT(b, 'x') WHERE id = %d;\n", id-g.pick(6))
			fmt.Fprintf(&b, "INSERT INTO gen_nopk (a) VALUES (%d);\n", g.pick(10))
		case 4:
			fmt.Fprintf(&b, "INSERT INTO ver VALUES (%d, %d, 's');\n", id, g.pick(100))
			fmt.Fprintf(&b, "UPDATE ver SET x = x + 1 WHERE id = %d;\n", id-g.pick(6))
		case 5:
			fmt.Fprintf(&b, "DELETE FROM ver WHERE id = %d;\n", id-1-g.pick(6))
			fmt.Fprintf(&b, "DELETE FROM tr WHERE id = %d;\n", id-1-g.pick(6))
		}
	}
	rpMysql(t, src, []byte(b.String()))
}

func TestReplaySchemas(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	scWorkload(t, src, 1500)
	index := src.BinlogIndex()
	// The source did what its triggers, cascades and versioning say.
	for q, want := range map[string]string{
		"SELECT COUNT(*) FROM sc.fk_b WHERE a_id IN (1, 2)":                          "0",
		"SELECT COUNT(*) FROM sc.fk_b WHERE a_id = 22":                               "0",
		"SELECT COUNT(*) FROM sc.fk_b WHERE a_id = 3":                                "1",
		"SELECT b_id IS NULL FROM sc.fk_c WHERE id = 200":                            "1",
		"SELECT COUNT(*) FROM sc.ver FOR SYSTEM_TIME ALL WHERE id = 3":               "2",
		"SELECT COUNT(*) FROM sc.tr WHERE note LIKE 'bi:%'":                          stVal(t, src, "SELECT COUNT(*) FROM sc.tr"),
		"SELECT COUNT(*) > 0 FROM sc.ver FOR SYSTEM_TIME ALL WHERE row_end < NOW(6)": "1",
	} {
		if got := stVal(t, src, q); got != want {
			t.Fatalf("source: %s = %s, want %s: the workload does not test what it should", q, got, want)
		}
	}
	// Each case alone (--tables), so that each shows its own failure.
	cases := []struct{ name, tables string }{
		{"triggers", "sc.tr,sc.audit,sc.counts"},
		{"foreign-keys", "sc.fk_*"},
		{"generated", "sc.gen*"},
		{"versioned", "sc.ver*"},
	}
	for _, c := range cases {
		t.Run("to-"+c.name, func(t *testing.T) {
			dst := testserver.Start(t, testserver.Options{})
			args := []string{"read", index, "--to", dst.DSN() + "/"}
			for _, tb := range strings.Split(c.tables, ",") {
				args = append(args, "--tables", tb)
			}
			rpRun(t, 0, args...)
			rpSame(t, "read --to "+c.name, scOnly(scSnapshot(t, dst), c.tables), scOnly(scSnapshot(t, src), c.tables))
		})
	}

	t.Run("to", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		_, errOut := rpRun(t, 0, "read", index, "--to", dst.DSN()+"/")
		if !strings.Contains(errOut, "trigger DDL skipped") {
			t.Errorf("no note of the trigger DDL left out:\n%s", errOut)
		}
		rpSame(t, "read --to", scSnapshot(t, dst), scSnapshot(t, src))
		if n := stVal(t, dst, "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = 'sc'"); n != "0" {
			t.Errorf("%s triggers on the target", n)
		}

		// A trigger on the target: replay refuses the table before writing.
		dst.Exec(t, "CREATE TRIGGER sc.extra AFTER UPDATE ON sc.tr FOR EACH ROW UPDATE sc.counts SET n = n + 1000")
		src.Exec(t, "INSERT INTO sc.gen (id, a, b) VALUES (99999, 1, 'late')", "UPDATE sc.tr SET v = 0")
		before := scSnapshot(t, dst)
		_, errOut = rpRun(t, 1, "read", index, "--to", dst.DSN()+"/")
		if !strings.Contains(errOut, "has triggers on the target (extra)") || !strings.Contains(errOut, "--fire-triggers") {
			t.Errorf("the trigger on the target is not reported:\n%s", errOut)
		}
		after := scSnapshot(t, dst)
		for _, tb := range []string{"`sc`.`tr`", "`sc`.`counts`"} {
			if after[tb] != before[tb] {
				t.Errorf("%s changed although replay refused", tb)
			}
		}
		dst.Exec(t, "DROP TRIGGER sc.extra")
		rpRun(t, 0, "read", index, "--to", dst.DSN()+"/")
		rpSame(t, "read --to, resumed after the trigger was dropped", scSnapshot(t, dst), scSnapshot(t, src))
	})

	t.Run("format-sql-triggers-foreign-keys", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		tables := "sc.tr,sc.audit,sc.counts,sc.fk_a,sc.fk_b,sc.fk_c,sc.fk_d"
		args := []string{"read", index, "--format", "sql"}
		for _, tb := range strings.Split(tables, ",") {
			args = append(args, "--tables", tb)
		}
		sql, _ := rpRun(t, 0, args...)
		rpMysql(t, dst, sql)
		rpSame(t, "read --format sql | mariadb", scOnly(scSnapshot(t, dst), tables), scOnly(scSnapshot(t, src), tables))
	})

	t.Run("format-sql", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		sql, _ := rpRun(t, 0, "read", index, "--format", "sql", "--exclude-tables", "sc.ver_e",
			"--omit-columns", "sc.gen.s,sc.gen.vv,sc.gen.vi,sc.gen_nopk.s,sc.gen_nopk.vv")
		for _, l := range strings.Split(string(sql), "\n") {
			if !strings.HasPrefix(l, "--") && strings.Contains(strings.ToUpper(l), "TRIGGER") {
				t.Errorf("the SQL holds trigger DDL: %s", l)
			}
		}
		if !bytes.Contains(sql, []byte("without seeing the target")) {
			t.Errorf("the SQL does not say what it cannot check")
		}
		rpMysql(t, dst, sql)
		rpSame(t, "read --format sql | mariadb", scSnapshot(t, dst, "sc.ver_e"), scSnapshot(t, src, "sc.ver_e"))
	})

	t.Run("fire-triggers", func(t *testing.T) {
		// Opted in: the replayed triggers fire again. The first AFTER INSERT
		// writes audit row 1 on the target, so the binlog's audit row 1 is
		// a duplicate key: a conflict, even though the pipelined batch's
		// redo (its AUTO_INCREMENT moved on) would not meet it again.
		dst := testserver.Start(t, testserver.Options{})
		_, errOut := rpRun(t, 1, "read", index, "--to", dst.DSN()+"/", "--fire-triggers")
		if !strings.Contains(errOut, "conflict: insert of `sc`.`audit` (`id`=1)") || !strings.Contains(errOut, "Duplicate entry '1'") {
			t.Errorf("the duplicate key is not reported:\n%s", errOut)
		}
	})

	t.Run("kill9", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		args := []string{"read", index, "--to", dst.DSN() + "/", "--group-rows", "3", "--group-time", "5ms"}
		g := rpSeed(t)
		runs, kills := rpKillLoop(t, g, args, 10, 20, 100)
		t.Logf("%d runs, %d killed with SIGKILL", runs, kills)
		if kills < 3 {
			t.Errorf("only %d kills landed while replaying (want ≥ 3): make the workload bigger", kills)
		}
		rpSame(t, "read --to with kill -9", scSnapshot(t, dst), scSnapshot(t, src))
	})
}

// TestReplayDeleteHistory: DELETE HISTORY deletes single history rows,
// which no statement can do on the target: replay stops before it, with
// the target equal to the source just before it, and says what to do.
func TestReplayDeleteHistory(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE vh",
		"CREATE TABLE vh.t (id INT PRIMARY KEY, x INT) WITH SYSTEM VERSIONING",
		"INSERT INTO vh.t VALUES (1, 1), (2, 2)",
		"UPDATE vh.t SET x = x + 1",
		"DELETE FROM vh.t WHERE id = 2")
	before := scSnapshot(t, src)
	src.Exec(t, "DELETE HISTORY FROM vh.t", "INSERT INTO vh.t VALUES (3, 3)")

	dst := testserver.Start(t, testserver.Options{})
	// One source transaction per target transaction: all before it commit.
	_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--group-rows", "1")
	if !strings.Contains(errOut, "delete of `vh`.`t`") || !strings.Contains(errOut, "DELETE HISTORY") {
		t.Errorf("the refusal does not say what and why:\n%s", errOut)
	}
	rpSame(t, "read --to, stopped at DELETE HISTORY", scSnapshot(t, dst), before)

	_, errOut = rpRun(t, 1, "read", src.BinlogIndex(), "--format", "sql")
	if !strings.Contains(errOut, "DELETE HISTORY") {
		t.Errorf("--format sql does not refuse DELETE HISTORY:\n%s", errOut)
	}
}

// TestReplayDDLTimestamp: a DDL statement that writes its own start time
// into existing rows (ADD COLUMN … DEFAULT CURRENT_TIMESTAMP or NOW(),
// ADD SYSTEM VERSIONING, whose row_start is that time) runs on the
// target at the source's time and time zone, as a native replica runs it
// (the QUERY event's SET TIMESTAMP and time_zone), not at the target's
// clock in UTC: before, the rows got the time of the replay, and the
// history rows of the next update were lost (the target made none, its
// row_start being after the update), exit 0.
func TestReplayDDLTimestamp(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE dt", "USE dt",
		"CREATE TABLE a (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE b (id INT PRIMARY KEY, x INT)",
		"INSERT INTO a SELECT seq, seq FROM seq_1_to_20",
		"INSERT INTO b SELECT seq, seq FROM seq_1_to_20",
		// Seconds only (the binlog has no microseconds for it), NOW() in
		// the session's time zone, then microseconds (MariaDB's Q_HRNOW).
		"SET time_zone = '+05:00'",
		"ALTER TABLE a ADD COLUMN created TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, ADD COLUMN d DATETIME DEFAULT NOW()",
		"SET time_zone = '+00:00'",
		"ALTER TABLE a ADD COLUMN created6 TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)",
		"ALTER TABLE b ADD SYSTEM VERSIONING",
		"UPDATE b SET x = x + 1",
		"DELETE FROM b WHERE id <= 5",
		"INSERT INTO a (id, v) VALUES (21, 21)")
	if n := stVal(t, src, "SELECT COUNT(*) FROM dt.b FOR SYSTEM_TIME ALL"); n != "40" {
		t.Fatalf("source: %s rows of dt.b with history, want 40", n)
	}
	want := scSnapshot(t, src)
	// The replays run in another second than the ALTERs.
	src.Exec(t, "DO SLEEP(1.1)")

	dst := testserver.Start(t, testserver.Options{})
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
	rpSame(t, "read --to", scSnapshot(t, dst), want)

	sqlDst := testserver.Start(t, testserver.Options{})
	sql, _ := rpRun(t, 0, "read", src.BinlogIndex(), "--format", "sql")
	rpMysql(t, sqlDst, sql)
	rpSame(t, "read --format sql | mariadb", scSnapshot(t, sqlDst), want)
}
