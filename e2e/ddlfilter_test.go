package e2e

// DDL and the table filters (issue 10, items 6 and 7): DDL is selected by
// the tables it touches, whatever the session's default database; a
// statement touching selected and excluded tables stops the run; account
// statements are never replayed and their passwords appear nowhere.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
)

// dfPasswords are the account statements' secrets: none may appear in
// any output.
var dfPasswords = []string{"S3cretPw", "An0therPw", "Th1rdPw", "F0urthPw", "*0123456789ABCDEF0123456789ABCDEF01234567"}

// dfSource runs the workload: tables in shop and hr, DDL issued from
// other default databases, multi-table statements that stay within the
// selections, and account statements.
func dfSource(t *testing.T) *testserver.Server {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t,
		// IF NOT EXISTS: the targets below hold a shop database of their own.
		"CREATE DATABASE IF NOT EXISTS shop", "CREATE DATABASE hr", "CREATE DATABASE other",
		"USE shop",
		"CREATE TABLE orders (id INT PRIMARY KEY, v VARCHAR(10))",
		"CREATE TABLE promo (id INT PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO orders VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO promo VALUES (1, 'p')",
		"USE other",
		"CREATE TABLE hr.emp (id INT PRIMARY KEY, name VARCHAR(20))",
		"INSERT INTO hr.emp VALUES (1, 'ann'), (2, 'bob')",
		"CREATE TABLE hr.tmp LIKE hr.emp",
		"INSERT INTO hr.tmp VALUES (7, 'x')",
		"RENAME TABLE hr.tmp TO hr.tmp2, hr.emp TO hr.emp0, hr.emp0 TO hr.emp",
		"CREATE INDEX i_name ON hr.emp (name)",
		"USE shop",
		"CREATE TABLE hr.dept (id INT PRIMARY KEY)",
		"INSERT INTO hr.dept VALUES (10)",
		"DROP TABLE promo",
		"ALTER TABLE orders ADD COLUMN w INT DEFAULT 5",
		"UPDATE orders SET v = 'c' WHERE id = 2",
		"CREATE TABLE shop.t1 (id INT PRIMARY KEY)", "CREATE TABLE t2 (id INT PRIMARY KEY)",
		"INSERT INTO t1 VALUES (1)",
		"DROP TABLE t1, shop.t2",
		"USE hr",
		"TRUNCATE TABLE hr.tmp2",
		"INSERT INTO hr.tmp2 VALUES (8, 'y')",
		"ALTER TABLE shop.orders ADD COLUMN z INT",
		"INSERT INTO shop.orders VALUES (3, 'd', 6, 7)",
		// Account statements, with passwords.
		"CREATE USER 'dfuser'@'%' IDENTIFIED BY 'S3cretPw'",
		"GRANT SELECT ON shop.* TO 'dfuser'@'%'",
		"ALTER USER 'dfuser'@'%' IDENTIFIED BY 'An0therPw'",
		"SET PASSWORD FOR 'dfuser'@'%' = PASSWORD('Th1rdPw')",
		"CREATE USER dfuser2 IDENTIFIED BY PASSWORD '*0123456789ABCDEF0123456789ABCDEF01234567'",
		"GRANT SELECT ON hr.* TO dfuser3 IDENTIFIED BY 'F0urthPw'",
		"CREATE ROLE dfrole",
		"REVOKE SELECT ON shop.* FROM 'dfuser'@'%'",
		"DROP USER dfuser2",
		"INSERT INTO shop.orders VALUES (4, 'e', 8, 9)",
	)
	return src
}

// dfNoPassword fails if any output holds a password.
func dfNoPassword(t *testing.T, what string, out string) {
	t.Helper()
	for _, pw := range dfPasswords {
		if strings.Contains(out, pw) {
			t.Errorf("%s holds the password %q", what, pw)
		}
	}
}

// dfTarget is a target server whose general log records every statement
// binlogcdc runs, and that holds a table of its own in shop.
func dfTarget(t *testing.T) (*testserver.Server, string) {
	dst := testserver.Start(t, testserver.Options{})
	logFile := filepath.Join(dst.Dir, "general.log")
	dst.Exec(t, "SET GLOBAL general_log_file = '"+logFile+"'", "SET GLOBAL log_output = 'FILE'", "SET GLOBAL general_log = 1",
		"CREATE DATABASE shop", "CREATE TABLE shop.promo (id INT PRIMARY KEY, v VARCHAR(10))", "INSERT INTO shop.promo VALUES (99, 'mine')")
	return dst, logFile
}

// dfSnap is rpSnapshot restricted to the tables matching keep.
func dfSnap(t *testing.T, srv *testserver.Server, keep func(name string) bool) map[string]string {
	out := map[string]string{}
	for k, v := range rpSnapshot(t, srv) {
		if keep(k) {
			out[k] = v
		}
	}
	return out
}

func dfUsers(t *testing.T, srv *testserver.Server) string {
	r := srv.QueryStrings(t, "SELECT COUNT(*) FROM mysql.user WHERE user LIKE 'df%'")
	return *r[0][0]
}

func TestDDLFilters(t *testing.T) {
	src := dfSource(t)
	index := src.BinlogIndex()
	notPromo := func(n string) bool { return n != "`shop`.`promo`" }

	for _, mode := range []string{"to", "sql"} {
		t.Run("exclude-promo-"+mode, func(t *testing.T) {
			dst, logFile := dfTarget(t)
			var out []byte
			var errOut string
			args := []string{"read", index, "--exclude-tables", "shop.promo"}
			if mode == "to" {
				out, errOut = rpRun(t, 0, append(args, "--to", dst.DSN()+"/")...)
			} else {
				out, errOut = rpRun(t, 0, append(args, "--format", "sql")...)
				rpMysql(t, dst, out)
			}
			dfNoPassword(t, "stdout", string(out))
			dfNoPassword(t, "stderr", errOut)
			// The note says what this run does: it does not replay them,
			// and --replay-accounts would.
			if !strings.Contains(errOut, "CREATE USER not replayed: account management (users, roles, grants, passwords) is replayed only with --replay-accounts") ||
				strings.Contains(errOut, "never replayed") {
				t.Errorf("no true note about the account statements left out:\n%s", errOut)
			}
			rpSame(t, "selected tables", dfSnap(t, dst, notPromo), dfSnap(t, src, notPromo))
			// The excluded table is untouched: binlogcdc neither created
			// nor dropped it, and left its rows alone.
			if got := rpRows(t, dst, "SELECT * FROM shop.promo"); got != `"99","mine"` {
				t.Errorf("excluded shop.promo on the target: %s, want its own row 99", got)
			}
			if n := dfUsers(t, dst); n != "0" {
				t.Errorf("the target has %s of the source's accounts, want none", n)
			}
			gl, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			dfNoPassword(t, "the target's general log", string(gl))
		})
	}

	// Only the selected tables reach the target, whatever the default
	// database of their DDL: hr's tables were created, renamed and
	// indexed from other and shop, which the target does not have;
	// hr.dept was created while shop was the default database.
	for _, c := range []struct {
		pattern string
		keep    func(string) bool
	}{
		{"hr.*", func(n string) bool { return strings.HasPrefix(n, "`hr`.") }},
		{"shop.orders", func(n string) bool { return n == "`shop`.`orders`" }},
	} {
		t.Run("tables-"+c.pattern, func(t *testing.T) {
			for _, mode := range []string{"to", "sql"} {
				dst := testserver.Start(t, testserver.Options{})
				if mode == "to" {
					rpRun(t, 0, "read", index, "--tables", c.pattern, "--to", dst.DSN()+"/")
				} else {
					sql, _ := rpRun(t, 0, "read", index, "--tables", c.pattern, "--format", "sql")
					rpMysql(t, dst, sql)
				}
				rpSame(t, "--tables "+c.pattern+" "+mode, dfSnap(t, dst, func(string) bool { return true }), dfSnap(t, src, c.keep))
			}
		})
	}

	t.Run("json", func(t *testing.T) {
		out, errOut := rpRun(t, 0, "read", index, "--ddl", "--tables", "hr.*")
		recs, err := ParseLines(out)
		if err != nil {
			t.Fatal(err)
		}
		var ddl []string
		for _, r := range recs {
			if r.Op == "ddl" {
				ddl = append(ddl, r.SQL)
			}
		}
		want := []string{
			"CREATE DATABASE hr",
			"CREATE TABLE hr.emp (id INT PRIMARY KEY, name VARCHAR(20))",
			"CREATE TABLE hr.tmp LIKE hr.emp",
			"RENAME TABLE hr.tmp TO hr.tmp2, hr.emp TO hr.emp0, hr.emp0 TO hr.emp",
			"CREATE INDEX i_name ON hr.emp (name)",
			"CREATE TABLE hr.dept (id INT PRIMARY KEY)",
			"TRUNCATE TABLE hr.tmp2",
		}
		if strings.Join(ddl, "\n") != strings.Join(want, "\n") {
			t.Errorf("DDL records for --tables hr.*:\n%s\nwant:\n%s", strings.Join(ddl, "\n"), strings.Join(want, "\n"))
		}
		if !strings.Contains(string(out), `"kind":"table","tables":[{"db":"hr","table":"tmp"},{"db":"hr","table":"tmp2"},{"db":"hr","table":"emp"},{"db":"hr","table":"emp0"}]`) {
			t.Errorf("the RENAME record does not list its tables:\n%s", out)
		}
		if strings.Contains(errOut, "matched no table") {
			t.Errorf("a warning about unmatched patterns: %s", errOut)
		}
		// JSON replays nothing: the note says why the filters leave the
		// account statements out.
		if !strings.Contains(errOut, "CREATE USER left out: account management (users, roles, grants, passwords) concerns no table, so --tables/--exclude-tables select none of it") ||
			strings.Contains(errOut, "replayed") {
			t.Errorf("read --ddl --tables: the note about account statements:\n%s", errOut)
		}

		// Without filters, --format sql notes each one it leaves out,
		// and how to have it replayed.
		_, errOut = rpRun(t, 0, "read", index, "--format", "sql")
		if !strings.Contains(errOut, "account management (users, roles, grants, passwords) is not replayed without --replay-accounts: CREATE USER 'dfuser'@'%' IDENTIFIED BY <redacted>") {
			t.Errorf("read --format sql: the note about account statements:\n%s", errOut)
		}

		// Without filters, the account statements are there, redacted.
		out, errOut = rpRun(t, 0, "read", index, "--ddl")
		dfNoPassword(t, "read --ddl", string(out))
		dfNoPassword(t, "read --ddl's stderr", errOut)
		if !strings.Contains(string(out), `"sql":"CREATE USER 'dfuser'@'%' IDENTIFIED BY <redacted>","kind":"account"`) {
			t.Errorf("no redacted CREATE USER record:\n%s", out)
		}
	})

	t.Run("kafka", func(t *testing.T) {
		brokers := kafkatest.Cluster(t)
		prefix := kafkatest.Prefix(t)
		_, errOut := rpRun(t, 0, "read", index, "--ddl", "--to", "kafka://"+strings.Join(brokers, ","), "--kafka-topic-prefix", prefix)
		dfNoPassword(t, "stderr", errOut)
		var all strings.Builder
		n := 0
		for _, r := range kafkatest.Consume(t, brokers, kafkatest.Topics(t, brokers, prefix+"."), false) {
			all.Write(r.Key)
			all.Write(r.Value)
			for _, h := range r.Headers {
				all.Write(h.Value)
			}
			if strings.Contains(string(r.Value), `"kind":"account"`) {
				n++
			}
		}
		dfNoPassword(t, "the Kafka records", all.String())
		if n != 9 {
			t.Errorf("%d account records in Kafka, want 9 (redacted)", n)
		}
	})

	t.Run("replay-accounts", func(t *testing.T) {
		// Opted in: the target gets the source's accounts, passwords
		// (hashes) included; JSON refuses the flag.
		users := "SELECT user, host, authentication_string, is_role FROM mysql.user WHERE user LIKE 'df%' ORDER BY user, host"
		for _, mode := range []string{"to", "sql"} {
			dst := testserver.Start(t, testserver.Options{})
			var errOut string
			if mode == "to" {
				_, errOut = rpRun(t, 0, "read", index, "--exclude-tables", "shop.promo", "--replay-accounts", "--to", dst.DSN()+"/")
			} else {
				var sql []byte
				sql, errOut = rpRun(t, 0, "read", index, "--exclude-tables", "shop.promo", "--replay-accounts", "--format", "sql")
				rpMysql(t, dst, sql)
			}
			// Replayed: no note says otherwise.
			if strings.Contains(errOut, "account management") || strings.Contains(errOut, "replayed") {
				t.Errorf("%s --replay-accounts: a note about account statements:\n%s", mode, errOut)
			}
			if got, want := rpRows(t, dst, users), rpRows(t, src, users); got != want || want == "" {
				t.Errorf("%s: accounts on the target:\n%s\nwant:\n%s", mode, got, want)
			}
		}
		_, errOut := rpRun(t, 2, "read", index, "--ddl", "--replay-accounts")
		if !strings.Contains(errOut, "--replay-accounts needs --to or --format sql") {
			t.Errorf("JSON with --replay-accounts:\n%s", errOut)
		}
	})

	t.Run("unmatched-pattern", func(t *testing.T) {
		_, errOut := rpRun(t, 0, "read", index, "--tables", "shop.order", "--exclude-tables", "`shop`.`promo`")
		if !strings.Contains(errOut, "--tables shop.order matched no table") || strings.Contains(errOut, "promo` matched no table") {
			t.Errorf("want a warning for shop.order only:\n%s", errOut)
		}
	})
}

// TestDDLFiltersMixed: a statement touching a selected and an excluded
// table stops the run before it is applied, naming it and what to do.
func TestDDLFiltersMixed(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t,
		"CREATE DATABASE shop", "USE shop",
		"CREATE TABLE orders (id INT PRIMARY KEY)", "CREATE TABLE promo (id INT PRIMARY KEY)",
		"INSERT INTO orders VALUES (1)")
	before := rpMasterPos(t, src)
	src.Exec(t, "DROP TABLE orders, promo")
	index := src.BinlogIndex()
	for _, args := range [][]string{
		{"--ddl"},
		{"--format", "sql"},
	} {
		out, errOut := rpRun(t, 1, append([]string{"read", index, "--exclude-tables", "shop.promo"}, args...)...)
		file, _, _ := strings.Cut(before, ":")
		if !strings.Contains(errOut, "DROP TABLE touches selected tables `shop`.`orders` and tables the filters leave out `shop`.`promo`") ||
			!strings.Contains(errOut, file) || !strings.Contains(errOut, "hint:") {
			t.Errorf("%v: want an error naming the statement, its tables and position:\n%s", args, errOut)
		}
		if strings.Contains(string(out), "DROP TABLE orders") {
			t.Errorf("%v: the statement was written:\n%s", args, out)
		}
	}
}

// TestDDLFiltersDatabases: DROP DATABASE passes when the filters select
// the whole database, is left out when they select none of it, and stops
// the run when they select part of it; a routine in a partly selected
// database is left out with a warning.
func TestDDLFiltersDatabases(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t,
		"CREATE DATABASE shop", "CREATE DATABASE hr",
		"CREATE TABLE shop.orders (id INT PRIMARY KEY)", "CREATE TABLE shop.promo (id INT PRIMARY KEY)",
		"CREATE TABLE hr.emp (id INT PRIMARY KEY)", "CREATE TABLE hr.dept (id INT PRIMARY KEY)",
		"USE hr",
		"CREATE PROCEDURE shop.p() BEGIN END",
		"DROP DATABASE hr")
	index := src.BinlogIndex()
	ddlOf := func(out []byte) string {
		recs, err := ParseLines(out)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, r := range recs {
			s = append(s, r.SQL)
		}
		return strings.Join(s, "\n")
	}

	out, errOut := rpRun(t, 0, "read", index, "--ddl", "--tables", "hr.*")
	if got := ddlOf(out); got != "CREATE DATABASE hr\nCREATE TABLE hr.emp (id INT PRIMARY KEY)\nCREATE TABLE hr.dept (id INT PRIMARY KEY)\nDROP DATABASE hr" {
		t.Errorf("--tables hr.*: DDL\n%s", got)
	}
	if strings.Contains(errOut, "warning") {
		t.Errorf("--tables hr.*: %s", errOut)
	}

	out, errOut = rpRun(t, 0, "read", index, "--ddl", "--tables", "shop.orders")
	if got := ddlOf(out); got != "CREATE DATABASE shop\nCREATE TABLE shop.orders (id INT PRIMARY KEY)" {
		t.Errorf("--tables shop.orders: DDL\n%s", got)
	}
	if !strings.Contains(errOut, "CREATE PROCEDURE in the database `shop`, where the filters select some tables only") {
		t.Errorf("--tables shop.orders: no warning about the procedure:\n%s", errOut)
	}

	_, errOut = rpRun(t, 1, "read", index, "--ddl", "--tables", "hr.emp")
	if !strings.Contains(errOut, "DROP DATABASE touches the database `hr`, which holds tables the filters select and tables they leave out") {
		t.Errorf("--tables hr.emp: want an error for DROP DATABASE hr:\n%s", errOut)
	}
}

// TestStatementDMLFilters: a row change logged as a statement
// (binlog_format=STATEMENT) is selected by the table it writes, not by
// the session's default database: one into a selected table stops the
// run, one into a table the filters leave out is passed over.
func TestStatementDMLFilters(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t,
		"CREATE DATABASE hr", "CREATE DATABASE other",
		"CREATE TABLE hr.emp (id INT PRIMARY KEY)", "CREATE TABLE other.x (id INT PRIMARY KEY)",
		"SET SESSION binlog_format = 'STATEMENT'",
		"USE hr", "INSERT INTO other.x VALUES (1)",
		"SET SESSION binlog_format = 'ROW'", "INSERT INTO hr.emp VALUES (1)")
	mark := rpMasterPos(t, src)
	src.Exec(t, "SET SESSION binlog_format = 'STATEMENT'", "USE other", "INSERT INTO hr.emp VALUES (2)", "SET SESSION binlog_format = 'ROW'")
	index := src.BinlogIndex()
	out, errOut := rpRun(t, 0, "read", index, "--tables", "hr.*", "--stop-position", mark)
	if recs, err := ParseLines(out); err != nil || len(recs) != 1 {
		t.Errorf("before the mark: %d records (%v), want hr.emp's row; stderr:\n%s", len(recs), err, errOut)
	}
	_, errOut = rpRun(t, 4, "read", index, "--tables", "hr.*")
	if !strings.Contains(errOut, "statement logged instead of rows: INSERT INTO hr.emp VALUES (2)") {
		t.Errorf("want an error for the INSERT into hr.emp logged as a statement:\n%s", errOut)
	}
}

// TestDDLFiltersKill9: a filtered replay with DDL from other default
// databases, killed with SIGKILL at random points and restarted, ends
// with the selected tables equal to the source's and the excluded table
// untouched.
func TestDDLFiltersKill9(t *testing.T) {
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE IF NOT EXISTS shop", "CREATE DATABASE hr", "CREATE DATABASE other",
		"CREATE TABLE shop.orders (id INT PRIMARY KEY, v INT)", "CREATE TABLE shop.promo (id INT PRIMARY KEY, v INT)")
	for r := 0; r < 40; r++ {
		var rows []string
		for i := 0; i < 60; i++ {
			rows = append(rows, fmt.Sprintf("(%d, %d)", r*100+i, g.pick(1000)))
		}
		vals := strings.Join(rows, ",")
		src.Exec(t,
			"USE other",
			fmt.Sprintf("CREATE TABLE hr.t%d (id INT PRIMARY KEY, v INT)", r),
			fmt.Sprintf("INSERT INTO hr.t%d VALUES %s", r, vals),
			"USE shop",
			"INSERT INTO orders VALUES "+vals,
			"INSERT INTO promo VALUES "+vals,
			fmt.Sprintf("UPDATE orders SET v = v + 1 WHERE id %% 7 = %d", r%7),
			fmt.Sprintf("DELETE FROM promo WHERE id %% 5 = %d", r%5))
		if r%4 == 3 {
			src.Exec(t, "USE other",
				fmt.Sprintf("RENAME TABLE hr.t%d TO hr.u%d", r, r),
				fmt.Sprintf("ALTER TABLE hr.u%d ADD COLUMN w INT DEFAULT %d", r, r),
				fmt.Sprintf("DROP TABLE hr.t%d", r-1),
				"USE shop", "TRUNCATE promo")
		}
	}
	src.Exec(t, "CREATE USER dfk IDENTIFIED BY 'S3cretPw'", "USE shop", "DROP TABLE promo")
	end := rpMasterPos(t, src)

	dst, _ := dfTarget(t)
	args := []string{"read", src.BinlogIndex(), "--exclude-tables", "shop.promo", "--to", dst.DSN() + "/", "--group-rows", "25", "--group-time", "5ms"}
	runs, kills := rpKillLoop(t, g, args, 10, 15, 80)
	t.Logf("%d runs, %d killed with SIGKILL", runs, kills)
	if kills < 5 {
		t.Errorf("only %d kills landed while replaying (want ≥ 5): make the workload bigger", kills)
	}
	// Once more: nothing left to apply.
	_, errOut := rpRun(t, 0, args...)
	if !strings.Contains(errOut, "applied 0 rows") {
		t.Errorf("the last run applied something:\n%s", errOut)
	}
	notPromo := func(n string) bool { return n != "`shop`.`promo`" }
	rpSame(t, "after kill -9", dfSnap(t, dst, notPromo), dfSnap(t, src, notPromo))
	if got := rpRows(t, dst, "SELECT * FROM shop.promo"); got != `"99","mine"` {
		t.Errorf("excluded shop.promo on the target: %s, want its own row 99", got)
	}
	if cp := rpCheckpoint(t, dst); cp != end {
		t.Errorf("checkpoint %q, want %q", cp, end)
	}
	if n := dfUsers(t, dst); n != "0" {
		t.Errorf("the target has %s of the source's accounts", n)
	}
}
