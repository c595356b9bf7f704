package e2e

import (
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// Regressions found by TestRecoverDifferential, each reduced to its
// smallest workload.

// An incarnation the binlogs hold no row change of (created, then
// truncated or dropped while empty) has no TABLE_MAP: its schema is its
// CREATE TABLE statement, and it is recovered empty.
func TestRecoverEmptyIncarnation(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE re", "USE re",
		"CREATE TABLE empty (id INT PRIMARY KEY, v VARCHAR(10) DEFAULT 'x')", "DROP TABLE empty",
		"CREATE TABLE tr (id INT PRIMARY KEY, v INT)", "TRUNCATE TABLE tr", "INSERT INTO tr VALUES (1, 1)", "DROP TABLE tr")
	for _, c := range []struct{ table, inc string }{{"empty", ""}, {"tr", "1"}} {
		t.Run(c.table, func(t *testing.T) {
			args := []string{"--table", "re." + c.table}
			if c.inc != "" {
				args = append(args, "--incarnation", c.inc)
			}
			out, _ := recoverCLI(t, 0, append(args, src.BinlogIndex())...)
			dst.Exec(t, "DROP DATABASE IF EXISTS re")
			recLoadSQL(t, dst, out)
			if n := *one(t, dst, "SELECT COUNT(*) FROM re."+c.table); n != "0" {
				t.Errorf("%s: %s rows recovered, want none", c.table, n)
			}
			dst.Exec(t, "DROP DATABASE IF EXISTS re")
			recoverCLI(t, 0, append(args, "--to", dst.DSN(), src.BinlogIndex())...)
			if n := *one(t, dst, "SELECT COUNT(*) FROM re."+c.table); n != "0" {
				t.Errorf("%s --to: %s rows recovered, want none", c.table, n)
			}
		})
	}
}
