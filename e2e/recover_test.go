package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// Tests of 'binlogcdc recover' on real MariaDB servers: the workload runs
// on a source server, its binlogs are given to the CLI, and the recovered
// table (its SQL loaded into a fresh server with the mariadb client, or
// restored there with --to) must equal what SELECT returned on the source
// just before the table was dropped, truncated or renamed away.

// snapshot returns the rows of a query as text, exactly as the server
// sent them ("\N" for NULL).
func recSnapshot(t *testing.T, srv *testserver.Server, sql string) []string {
	t.Helper()
	var out []string
	for _, r := range srv.QueryStrings(t, sql) {
		var f []string
		for _, v := range r {
			if v == nil {
				f = append(f, `\N`)
			} else {
				f = append(f, fmt.Sprintf("%q", *v))
			}
		}
		out = append(out, strings.Join(f, " | "))
	}
	return out
}

func recSameRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return
	}
	t.Errorf("%s: %d rows recovered, %d before the drop", what, len(got), len(want))
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("row %d:\n recovered %s\n    wanted %s", i, g, w)
		}
	}
}

// loadSQL pipes SQL into the mariadb client connected to srv.
func recLoadSQL(t *testing.T, srv *testserver.Server, sql []byte) {
	t.Helper()
	client, err := exec.LookPath("mariadb")
	if err != nil {
		client, err = exec.LookPath("mysql")
	}
	if err != nil {
		t.Fatal("the mariadb client is missing (apt-get install -y mariadb-client)")
	}
	cmd := exec.Command(client, "--host=127.0.0.1", fmt.Sprintf("--port=%d", srv.Port), "--user=root", "--binary-mode", "--batch")
	cmd.Stdin = bytes.NewReader(sql)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("loading the recovered SQL: %v: %s\n--- SQL (head) ---\n%s", err, out, clip(string(sql)))
	}
}

// recoverCLI runs binlogcdc recover and fails unless it exits with want.
func recoverCLI(t *testing.T, want int, args ...string) (stdout []byte, stderr string) {
	t.Helper()
	out, errs, code := runCLI(t, nil, append([]string{"recover"}, args...)...)
	if os.Getenv("RECOVER_LOG") != "" {
		t.Logf("recover %s\n%s\n%s", strings.Join(args, " "), errs, out)
	}
	if code != want {
		t.Fatalf("binlogcdc recover %s: exit %d, want %d\nstderr:\n%s\nstdout:\n%s", strings.Join(args, " "), code, want, errs, clip(string(out)))
	}
	if want == 0 && len(out) > 0 && !slices.ContainsFunc(args, func(a string) bool {
		return a == "--to" || a == "--list" || a == "--memory-budget" || strings.HasPrefix(a, "--to=")
	}) {
		// The same SQL, byte for byte, from the on-disk store.
		disk, derrs, code := runCLI(t, nil, append([]string{"recover", "--memory-budget", "0"}, args...)...)
		if code != 0 || !bytes.Equal(disk, out) {
			t.Fatalf("binlogcdc recover --memory-budget 0 %s: exit %d, and the SQL differs from the in-memory one (%v)\nstderr:\n%s\nstdout:\n%s", strings.Join(args, " "), code, !bytes.Equal(disk, out), derrs, clip(string(disk)))
		}
	}
	return out, errs
}

// The column types of the workload tables: every kind of value.
const recAllTypes = `(
	id INT NOT NULL PRIMARY KEY,
	i8 TINYINT, u64 BIGINT UNSIGNED, m MEDIUMINT,
	d DECIMAL(12,3), f FLOAT, dbl DOUBLE,
	dt DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(2), y YEAR, dd DATE,
	s VARCHAR(50) CHARACTER SET utf8mb4, l VARCHAR(20) CHARACTER SET latin1, c CHAR(5) CHARACTER SET latin1 COLLATE latin1_bin,
	b VARBINARY(16), bn BINARY(4), bl BLOB,
	e ENUM('a','b','it''s') CHARACTER SET latin1, st SET('x','y','z'),
	j JSON, tx TEXT, bt BIT(5), g GEOMETRY NULL, p POINT NULL
)`

var recAllTypesRows = []string{
	`(1, -128, 18446744073709551615, -8388608, -123456789.123, 3.14159, -2.718281828459045,
	  '2024-06-15 12:34:56.123456', '2024-06-15 12:00:00.5', '-838:59:59.99', 2024, '2024-02-29',
	  'héllo 世界 🎉', 'café', 'ab', X'00FF0010', X'0102', X'DEADBEEF',
	  'it''s', 'x,z', '{"k": [1, 2.5, "v"]}', 'line\nbreak\ttab \\ back', b'10101',
	  ST_GeomFromText('LINESTRING(0 0, 1 1.5)', 4326), POINT(-1.25, 2))`,
	`(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
	`(3, 127, 0, 0, 0.001, -0, 1e300, '1000-01-01 00:00:00', '1970-01-01 00:00:01', '00:00:00', 1901, '0000-00-00',
	  '', '', '', '', X'00000000', '', 'a', '', 'null', '', b'0', POINT(0, 0), NULL)`,
	`(4, 5, 42, 7, 99.5, 1.5, 2.25, '2038-01-19 03:14:07.999999', '2038-01-19 03:14:07.999', '838:59:59', 2155, '9999-12-31',
	  'quote '' and "dq"', 'Ärger', 'zz', X'27', X'FFFFFFFF', REPEAT(X'AB', 1000), 'b', 'x,y,z', '[]', REPEAT('long ', 500), b'11111',
	  ST_GeomFromText('POLYGON((0 0, 1 0, 1 1, 0 0))'), POINT(1e10, -1e-10))`,
}

// TestRecover drives one source server through the scenarios of
// 'binlogcdc recover' and restores each table elsewhere.
func TestRecover(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{}) // a fresh server: SQL loads and --to

	// A table older than the binlogs: created and filled in the first
	// binlog file, which the "older" scenario leaves out.
	src.Exec(t, "CREATE DATABASE app", "USE app",
		"CREATE TABLE legacy (id INT PRIMARY KEY, v VARCHAR(20) NOT NULL, n INT)",
		"INSERT INTO legacy VALUES (1, 'one', 1), (2, 'two', 2), (3, 'three', 3), (4, 'four', 4)")
	src.FlushLogs(t)
	legacyStart := filepath.Base(src.BinlogFiles(t)[1]) + ":4"
	legacyBackup := recSnapshot(t, src, "SELECT * FROM app.legacy ORDER BY id")
	src.Exec(t, "USE app",
		"UPDATE legacy SET v = 'TWO', n = 22 WHERE id = 2",
		"DELETE FROM legacy WHERE id = 3",
		"INSERT INTO legacy VALUES (5, 'five', 5), (6, 'six', NULL)",
		"UPDATE legacy SET n = 66 WHERE id = 6")
	legacyBefore := recSnapshot(t, src, "SELECT * FROM app.legacy ORDER BY id")
	src.Exec(t, "DROP TABLE app.legacy")

	// (1) Daily tables: created, filled, altered, changed, dropped, and
	// created again under the same name.
	src.Exec(t, "USE app", "CREATE TABLE daily "+recAllTypes)
	for _, r := range recAllTypesRows {
		src.Exec(t, "INSERT INTO daily VALUES "+r)
	}
	src.Exec(t,
		"UPDATE daily SET s = 'updated ✓', d = d + 1, j = JSON_ARRAY(1, 'two') WHERE id = 1",
		"DELETE FROM daily WHERE id = 3",
		"ALTER TABLE daily ADD COLUMN extra VARCHAR(10) NOT NULL DEFAULT 'dflt', CHANGE COLUMN l l2 VARCHAR(30) CHARACTER SET latin1, ADD COLUMN n2 INT",
		"INSERT INTO daily (id, s, l2, extra, n2) VALUES (10, 'after alter', 'ü', 'mine', 5)",
		"UPDATE daily SET n2 = 7 WHERE id = 4",
		"INSERT INTO daily (id, i8) VALUES (11, 1)",
		"DELETE FROM daily WHERE id = 11")
	daily1 := recSnapshot(t, src, "SELECT * FROM app.daily ORDER BY id")
	src.Exec(t, "DROP TABLE daily")
	src.Exec(t, "CREATE TABLE `app`.`daily` "+recAllTypes)
	for _, r := range recAllTypesRows[:2] {
		src.Exec(t, "INSERT INTO daily VALUES "+r)
	}
	src.Exec(t, "UPDATE daily SET tx = 'day two' WHERE id = 2")
	daily2 := recSnapshot(t, src, "SELECT * FROM app.daily ORDER BY id")
	src.Exec(t, "DROP TABLE IF EXISTS `daily`")

	// A table without a primary key, with equal rows.
	src.Exec(t, "CREATE TABLE nopk (a INT, b VARCHAR(10), c DOUBLE)",
		"INSERT INTO nopk VALUES (1, 'x', 0.1), (1, 'x', 0.1), (1, 'x', 0.1), (2, NULL, NULL), (3, 'z', -1)",
		"DELETE FROM nopk WHERE a = 1 LIMIT 1",
		"UPDATE nopk SET b = 'y' WHERE a = 2",
		"UPDATE nopk SET c = 2 WHERE a = 1 LIMIT 1")
	nopk := recSnapshot(t, src, "SELECT * FROM app.nopk ORDER BY a, b, c")
	src.Exec(t, "DROP TABLE nopk")

	// (2) A table whose whole history is in the binlogs, altered, to be
	// restored into the fresh server with the schema built from its
	// TABLE_MAP.
	src.Exec(t, "CREATE TABLE hist (id BIGINT UNSIGNED NOT NULL, k VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL, "+
		"amount DECIMAL(10,2) NOT NULL, at DATETIME(3) NULL, tag ENUM('new','old') NOT NULL, PRIMARY KEY (id, k(10)), KEY (amount))",
		"INSERT INTO hist VALUES (1, 'alpha', 10.50, '2024-01-01 00:00:00.001', 'new'), (2, 'beta', -3.00, NULL, 'old'), (3, 'gamma', 0, '2024-03-03 03:03:03', 'new')",
		"ALTER TABLE hist ADD COLUMN note TEXT CHARACTER SET latin1 NULL AFTER amount, MODIFY amount DECIMAL(12,2) NOT NULL",
		"UPDATE hist SET note = 'noted', amount = 1234567.89 WHERE id = 2",
		"INSERT INTO hist VALUES (4, 'delta', 4.44, 'n4', NULL, 'old')",
		"DELETE FROM hist WHERE id = 3")
	hist := recSnapshot(t, src, "SELECT * FROM app.hist ORDER BY id")
	histCols := recSnapshot(t, src, "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'hist' ORDER BY ORDINAL_POSITION")
	histSum := recSnapshot(t, src, "CHECKSUM TABLE app.hist")
	src.Exec(t, "DROP TABLE hist")

	// (3) A truncated table: TRUNCATE ends an incarnation.
	src.Exec(t, "CREATE TABLE tr (id INT PRIMARY KEY, v TEXT)",
		"INSERT INTO tr VALUES (1, 'a'), (2, 'b'), (3, 'c')",
		"UPDATE tr SET v = 'B' WHERE id = 2")
	tr := recSnapshot(t, src, "SELECT * FROM app.tr ORDER BY id")
	src.Exec(t, "TRUNCATE TABLE tr", "INSERT INTO tr VALUES (9, 'after truncate')")

	// (4) A dropped database.
	src.Exec(t, "CREATE DATABASE gone", "CREATE TABLE gone.x (id INT PRIMARY KEY, v VARCHAR(10) CHARACTER SET latin1)",
		"INSERT INTO gone.x VALUES (1, 'é'), (2, 'ß')", "UPDATE gone.x SET v = 'à' WHERE id = 2")
	gone := recSnapshot(t, src, "SELECT * FROM gone.x ORDER BY id")
	src.Exec(t, "DROP DATABASE gone")

	// (5) A table renamed, then dropped under its new name, while a new
	// table took the old name.
	src.Exec(t, "USE app", "CREATE TABLE rn (id INT PRIMARY KEY, v INT)",
		"INSERT INTO rn VALUES (1, 10), (2, 20)",
		"CREATE TABLE rn_side (id INT)",
		"RENAME TABLE rn TO rn_old, app.rn_side TO app.rn_side2",
		"CREATE TABLE rn (id INT PRIMARY KEY, v INT, w INT)",
		"INSERT INTO rn VALUES (100, 1, 1)",
		"INSERT INTO rn_old VALUES (3, 30)",
		"UPDATE rn_old SET v = 21 WHERE id = 2",
		"ALTER TABLE `app`.`rn_old` RENAME TO `rn_older`",
		"DELETE FROM rn_older WHERE id = 1")
	rn := recSnapshot(t, src, "SELECT * FROM app.rn_older ORDER BY id")
	src.Exec(t, "DROP TABLE app.rn_older")

	// (6) CREATE TABLE … LIKE and … SELECT, dropped together; and a table
	// filled under another name and swapped in by RENAME.
	src.Exec(t, "USE app",
		"CREATE TABLE lk LIKE tr",
		"CREATE TABLE sel AS SELECT id, v, 'k' AS k FROM tr",
		"INSERT INTO lk VALUES (1, 'like')",
		"INSERT INTO sel VALUES (2, 'two', 'j')",
		"UPDATE sel SET v = 'nine' WHERE id = 9")
	lk := recSnapshot(t, src, "SELECT * FROM app.lk ORDER BY id")
	sel := recSnapshot(t, src, "SELECT * FROM app.sel ORDER BY id")
	src.Exec(t, "DROP TABLE lk, app.sel",
		"CREATE TABLE sw (id INT PRIMARY KEY, v INT)", "INSERT INTO sw VALUES (1, 1)",
		"CREATE TABLE sw_new (id INT PRIMARY KEY, v INT)", "INSERT INTO sw_new VALUES (2, 2), (3, 3)",
		"RENAME TABLE sw TO sw_prev, sw_new TO sw",
		"UPDATE sw SET v = 33 WHERE id = 3")
	sw := recSnapshot(t, src, "SELECT * FROM app.sw ORDER BY id")
	src.Exec(t, "DROP TABLE sw")

	files := src.BinlogFiles(t)

	t.Run("list", func(t *testing.T) {
		out, _ := recoverCLI(t, 0, "--table", "app.daily", "--list", src.BinlogIndex())
		s := string(out)
		for _, re := range []string{
			`(?m)^1\s+\S+ \S+ binlog\.000002:\d+\s+DROP TABLE \S+ \S+ binlog\.000002:\d+\s+6/2/2\s+app\.daily$`,
			`(?m)^2\s+\S+ \S+ binlog\.000002:\d+\s+DROP TABLE \S+ \S+ binlog\.000002:\d+\s+2/1/0\s+app\.daily$`,
			`restores #2 by default`,
		} {
			if !regexp.MustCompile(re).MatchString(s) {
				t.Errorf("--list output does not match %s:\n%s", re, s)
			}
		}
		out, _ = recoverCLI(t, 0, "--table", "app.rn", "--list", src.BinlogIndex())
		s = string(out)
		for _, re := range []string{
			`(?m)^1 .*DROP TABLE \S+ \S+ binlog\.000002:\d+ \(as app\.rn_older\)\s+3/1/1\s+app\.rn -> app\.rn_old -> app\.rn_older$`,
			`(?m)^2 .*still exists\s+1/0/0\s+app\.rn$`,
		} {
			if !regexp.MustCompile(re).MatchString(s) {
				t.Errorf("--list output does not match %s:\n%s", re, s)
			}
		}
		out, _ = recoverCLI(t, 0, "--table", "app.tr", "--list", src.BinlogIndex())
		s = string(out)
		for _, re := range []string{
			`(?m)^1 .*TRUNCATE \S+ \S+ binlog\.000002:\d+\s+3/1/0\s+app\.tr$`,
			`(?m)^2\s+\S+ \S+ binlog\.000002:\d+ \(TRUNCATE\)\s+still exists\s+1/0/0\s+app\.tr$`,
		} {
			if !regexp.MustCompile(re).MatchString(s) {
				t.Errorf("--list output does not match %s:\n%s", re, s)
			}
		}
		out, _ = recoverCLI(t, 0, "--table", "app.legacy", "--list", files[1])
		if !regexp.MustCompile(`(?m)^1\s+before the binlogs\s+DROP TABLE .*\s+2/2/1\s+app\.legacy$`).Match(out) {
			t.Errorf("--list of a table older than the binlogs:\n%s", out)
		}
		_, errs := recoverCLI(t, 1, "--table", "app.nosuch", "--list", src.BinlogIndex())
		if !strings.Contains(errs, "never mention") {
			t.Errorf("unknown table: %s", errs)
		}
	})

	restore := func(t *testing.T, db, table, query string, want []string, args ...string) string {
		t.Helper()
		out, errs := recoverCLI(t, 0, append([]string{"--table", db + "." + table}, args...)...)
		dst.Exec(t, "DROP DATABASE IF EXISTS `"+db+"`")
		recLoadSQL(t, dst, out)
		recSameRows(t, db+"."+table, recSnapshot(t, dst, query), want)
		return errs
	}

	t.Run("daily", func(t *testing.T) {
		errs := restore(t, "app", "daily", "SELECT * FROM app.daily ORDER BY id", daily2, src.BinlogIndex())
		if !strings.Contains(errs, "schema: the binlog's CREATE TABLE statement") {
			t.Errorf("incarnation 2 was never altered: its schema should be the binlog's CREATE TABLE\n%s", errs)
		}
		errs = restore(t, "app", "daily", "SELECT * FROM app.daily ORDER BY id", daily1, "--incarnation", "1", src.BinlogIndex())
		if !strings.Contains(errs, "schema: the binlog's CREATE TABLE statement at") || !strings.Contains(errs, "and the ALTER TABLE after it") {
			t.Errorf("incarnation 1 was altered: its schema should come from its CREATE and ALTER TABLE\n%s", errs)
		}
		// --before picks by drop time: before now, the last one is #2.
		out, _ := recoverCLI(t, 0, "--table", "app.daily", "--before", "2999-01-01", src.BinlogIndex())
		if !bytes.Contains(out, []byte("incarnation #2 of 2")) {
			t.Errorf("--before: %s", clip(string(out)))
		}
		recoverCLI(t, 1, "--table", "app.daily", "--before", "2000-01-01", src.BinlogIndex())
	})

	t.Run("nopk", func(t *testing.T) {
		restore(t, "app", "nopk", "SELECT * FROM app.nopk ORDER BY a, b, c", nopk, src.BinlogIndex())
	})

	t.Run("fresh-server-built-schema", func(t *testing.T) {
		dst.Exec(t, "DROP DATABASE IF EXISTS app")
		_, errs := recoverCLI(t, 0, "--table", "app.hist", "--to", dst.DSN(), src.BinlogIndex())
		if !strings.Contains(errs, "and the ALTER TABLE after it") {
			t.Errorf("hist was altered: its schema should come from its CREATE and ALTER TABLE\n%s", errs)
		}
		recSameRows(t, "app.hist", recSnapshot(t, dst, "SELECT * FROM app.hist ORDER BY id"), hist)
		cols := recSnapshot(t, dst, "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'hist' ORDER BY ORDINAL_POSITION")
		recSameRows(t, "app.hist columns", cols, histCols)
		if strings.Join(cols, "\n") == strings.Join(histCols, "\n") {
			recSameRows(t, "CHECKSUM TABLE app.hist", recSnapshot(t, dst, "CHECKSUM TABLE app.hist"), histSum)
		}
		if n := *one(t, dst, "SELECT COUNT(*) FROM binlogcdc.checkpoint"); n != "0" {
			t.Errorf("the recover's checkpoint row was left behind (%s rows)", n)
		}
		// Again: the table exists now, recover refuses to mix.
		_, errs = recoverCLI(t, 1, "--table", "app.hist", "--to", dst.DSN(), src.BinlogIndex())
		if !strings.Contains(errs, "already exists on the target") {
			t.Errorf("recover into an existing table: %s", errs)
		}
		// --as restores it under another name.
		recoverCLI(t, 0, "--table", "app.hist", "--to", dst.DSN(), "--as", "app.hist_restored", src.BinlogIndex())
		recSameRows(t, "app.hist_restored", recSnapshot(t, dst, "SELECT * FROM app.hist_restored ORDER BY id"), hist)
	})

	t.Run("truncated", func(t *testing.T) {
		restore(t, "app", "tr", "SELECT * FROM app.tr ORDER BY id", tr, src.BinlogIndex())
	})

	t.Run("dropped-database", func(t *testing.T) {
		restore(t, "gone", "x", "SELECT * FROM gone.x ORDER BY id", gone, src.BinlogIndex())
	})

	t.Run("renamed-then-dropped", func(t *testing.T) {
		restore(t, "app", "rn", "SELECT * FROM app.rn ORDER BY id", rn, src.BinlogIndex())
	})

	t.Run("like-select-swap", func(t *testing.T) {
		errs := restore(t, "app", "lk", "SELECT * FROM app.lk ORDER BY id", lk, src.BinlogIndex())
		if !strings.Contains(errs, "LIKE") || !strings.Contains(errs, "schema: the TABLE_MAP") {
			t.Errorf("CREATE TABLE … LIKE: the schema must come from the TABLE_MAP:\n%s", errs)
		}
		restore(t, "app", "sel", "SELECT * FROM app.sel ORDER BY id", sel, src.BinlogIndex())
		restore(t, "app", "sw", "SELECT * FROM app.sw ORDER BY id", sw, src.BinlogIndex())
		out, _ := recoverCLI(t, 0, "--table", "app.sw", "--list", src.BinlogIndex())
		if !regexp.MustCompile(`(?m)^2 .* as app\.sw_new\s+DROP TABLE .*\s+2/1/0\s+app\.sw_new -> app\.sw$`).Match(out) {
			t.Errorf("--list of a table swapped in by RENAME:\n%s", out)
		}
	})

	t.Run("older-than-the-binlogs", func(t *testing.T) {
		// From the binlogs alone: the rows they inserted, and the row they
		// updated (its full after image); the others are unknown.
		out, errs := recoverCLI(t, 0, "--table", "app.legacy", files[1])
		for _, want := range []string{"existed before the binlogs", "1 updates and 1 deletes refer to rows the binlogs never inserted", "restore your last backup"} {
			if !strings.Contains(errs, want) {
				t.Errorf("stderr lacks %q:\n%s", want, errs)
			}
		}
		dst.Exec(t, "DROP DATABASE IF EXISTS app")
		recLoadSQL(t, dst, out)
		recSameRows(t, "app.legacy from the binlogs alone", recSnapshot(t, dst, "SELECT * FROM app.legacy ORDER BY id"),
			[]string{legacyBefore[1], legacyBefore[3], legacyBefore[4]})

		// The point-in-time flow: restore the backup, then recover --to it
		// from the backup's binlog position.
		dst.Exec(t, "DROP DATABASE IF EXISTS app", "CREATE DATABASE app",
			"CREATE TABLE app.legacy (id INT PRIMARY KEY, v VARCHAR(20) NOT NULL, n INT)",
			"INSERT INTO app.legacy VALUES (1, 'one', 1), (2, 'two', 2), (3, 'three', 3), (4, 'four', 4)")
		recSameRows(t, "the backup", recSnapshot(t, dst, "SELECT * FROM app.legacy ORDER BY id"), legacyBackup)
		_, errs = recoverCLI(t, 0, "--table", "app.legacy", "--to", dst.DSN(), "--start-position", legacyStart, src.BinlogIndex())
		if !strings.Contains(errs, "existed before the binlogs") || !strings.Contains(errs, "applied to the rows the target has") {
			t.Errorf("stderr:\n%s", errs)
		}
		recSameRows(t, "app.legacy restored from the backup and the binlogs", recSnapshot(t, dst, "SELECT * FROM app.legacy ORDER BY id"), legacyBefore)
	})

	t.Run("metadata-not-full", func(t *testing.T) {
		src.Exec(t, "SET GLOBAL binlog_row_metadata = MINIMAL")
		src.Exec(t, "CREATE TABLE app.minimal (id INT PRIMARY KEY)", "INSERT INTO app.minimal VALUES (1)", "DROP TABLE app.minimal")
		src.Exec(t, "SET GLOBAL binlog_row_metadata = FULL")
		_, errs := recoverCLI(t, 3, "--table", "app.minimal", src.BinlogIndex())
		if !strings.Contains(errs, "binlog_row_metadata") || !strings.Contains(errs, "minimal") {
			t.Errorf("stderr:\n%s", errs)
		}
		// Other tables are not affected.
		recoverCLI(t, 0, "--table", "app.tr", "--list", src.BinlogIndex())
	})
}
