package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// rdSnap is what a server holds of a table: its column definitions, its
// SHOW CREATE TABLE (secondary keys left out: recover does not rebuild
// them, and says so), every row as HEX() of every column (and floats as
// text with their sign, ENUM and SET as numbers), ordered, and CHECKSUM
// TABLE.
type rdSnap struct{ cols, create, rows, sum []string }

var (
	rdSecondaryKey  = regexp.MustCompile(`(?m)^  (UNIQUE )?KEY .*\n`)
	rdCheck         = regexp.MustCompile(` CHECK \(json_valid\(.*\)\)`)
	rdColumnCharset = regexp.MustCompile(`(?m)( CHARACTER SET \w+)?( COLLATE \w+)?( DEFAULT| NOT NULL| NULL|,$)`)
)

func rdSnapshot(t *testing.T, srv *testserver.Server, db, table string) rdSnap {
	t.Helper()
	var s rdSnap
	s.cols = recSnapshot(t, srv, "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLLATION_NAME, EXTRA, COLUMN_DEFAULT, COLUMN_COMMENT FROM information_schema.COLUMNS "+
		"WHERE TABLE_SCHEMA = '"+db+"' AND TABLE_NAME = '"+table+"' ORDER BY ORDINAL_POSITION")
	full := rpQ(db) + "." + rpQ(table)
	create := *srv.QueryStrings(t, "SHOW CREATE TABLE "+full)[0][1]
	create = rdSecondaryKey.ReplaceAllString(create, "")
	create = strings.Replace(create, ",\n)", "\n)", 1)
	// recover names every column's charset; the columns' collations are compared above.
	create = rdColumnCharset.ReplaceAllString(create, "$3")
	// Without the table's name, and the table options (recover leaves
	// them out, and its comment says so: after a CONVERT TO CHARACTER SET
	// the table's DEFAULT CHARSET is not rebuilt), nor a CHECK constraint
	// (a JSON column's json_valid, once CONVERT made it LONGTEXT).
	lines := strings.Split(rdCheck.ReplaceAllString(create, ""), "\n")
	s.create = lines[1 : len(lines)-1]
	var exprs []string
	for _, r := range srv.QueryStrings(t, "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '"+db+"' AND TABLE_NAME = '"+table+"' ORDER BY ORDINAL_POSITION") {
		c := rpQ(*r[0])
		exprs = append(exprs, "HEX("+c+")")
		switch *r[1] {
		case "float", "double", "decimal":
			exprs = append(exprs, fmt.Sprintf("CONCAT(%s, ' ', ATAN2(%[1]s, -1))", c))
		case "enum", "set":
			exprs = append(exprs, c+" + 0")
		}
	}
	list := strings.Join(exprs, ", ")
	s.rows = recSnapshot(t, srv, "SELECT "+list+" FROM "+full+" ORDER BY "+list)
	s.sum = recSnapshot(t, srv, "SELECT 0 FROM DUAL")
	s.sum[0] = strings.SplitN(recSnapshot(t, srv, "CHECKSUM TABLE "+full)[0], " | ", 2)[1]
	return s
}

func rdSame(t *testing.T, how string, got, want rdSnap) {
	t.Helper()
	recSameRows(t, how+": columns", got.cols, want.cols)
	recSameRows(t, how+": SHOW CREATE TABLE", got.create, want.create)
	recSameRows(t, how+": rows", got.rows, want.rows)
	recSameRows(t, how+": CHECKSUM TABLE", got.sum, want.sum)
}

// rdSeed is the workload's generator: seeded by RD_SEED, or 1.
func rdSeed(t *testing.T) *rpGen { return seededGen(t, "RD_SEED", 1) }

// TestRecoverDifferential runs a random workload (recover_diff_gen_test.go)
// over tables with every column type at its edges and keys of every kind,
// with ALTER TABLE chains, TRUNCATE, RENAME TABLE and partial row images,
// snapshots each table, drops it, and recovers it four ways — SQL on
// stdout (in memory; recoverCLI also checks the on-disk store gives the
// same bytes) loaded with the mariadb client, -o FILE with a 1 MB budget
// (the store moves to Pebble midway), --to, --to with --memory-budget 0
// — each compared with the snapshot: column definitions, SHOW CREATE
// TABLE, HEX() of every row, CHECKSUM TABLE. recover must report no
// approximation and no conflict.
func TestRecoverDifferential(t *testing.T) {
	g := rdSeed(t)
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	// Not strict: zero dates, 2020-02-30, and ALTERs that cut and clip.
	src.Exec(t, "SET SESSION sql_mode = 'ALLOW_INVALID_DATES,NO_AUTO_VALUE_ON_ZERO'", "CREATE DATABASE df")
	ts := rdTables()
	byName := map[string]*dfTable{}
	for _, tb := range ts {
		src.Exec(t, tb.create())
		byName[tb.name] = tb
	}
	want := map[string]rdSnap{} // by the name recover is given, and "#1" for an incarnation
	evo, comp, cyc, nokey := byName["evo"], byName["comp"], byName["cyc"], byName["nokey"]
	alter := func(tb *dfTable, a rdAlter) {
		src.Exec(t, "ALTER TABLE "+tb.full()+" "+a.sql)
		a.apply(tb)
	}
	live := append([]*dfTable(nil), ts...)
	for round := 0; round < 36; round++ {
		switch round {
		case 12:
			src.Exec(t, "SET SESSION binlog_row_image = MINIMAL")
		case 20:
			src.Exec(t, "SET SESSION binlog_row_image = NOBLOB")
		case 28:
			src.Exec(t, "SET SESSION binlog_row_image = FULL")
		}
		if step := round / 4; round%4 == 3 && step < len(rdEvoChain) {
			alter(evo, rdEvoChain[step])
		}
		if round == 9 || round == 22 {
			alter(comp, rdCompChain[round/20])
		}
		switch round {
		case 10: // the first incarnation of cyc ends
			want["cyc#1"] = rdSnapshot(t, src, "df", "cyc")
			src.Exec(t, "TRUNCATE TABLE df.cyc")
			cyc.live, cyc.keyOf = nil, map[int][]string{}
		case 18:
			src.Exec(t, "RENAME TABLE df.cyc TO df.cyc_r")
			cyc.name = "cyc_r"
		case 26:
			src.Exec(t, "ALTER TABLE df.cyc_r RENAME TO df.cyc_s")
			cyc.name = "cyc_s"
		case 15, 30: // equal rows in the table without a key
			row := nokey.insert(g, -1)
			nokey.live = append(nokey.live, nokey.live[len(nokey.live)-1])
			src.Exec(t, fmt.Sprintf("INSERT INTO %s (%s) VALUES %s, %[3]s, %[3]s", nokey.full(), nokey.colList(), row),
				"DELETE FROM "+nokey.full()+" WHERE "+nokey.where(nokey.live[len(nokey.live)-1]))
		}
		src.Exec(t, dfTx(g, live)...)
		if round == 10 || round == 18 {
			src.Exec(t, dfTx(g, []*dfTable{cyc})...)
		}
	}
	var sizes []string
	for _, tb := range ts {
		name := strings.SplitN(tb.name, "_", 2)[0]
		want[name] = rdSnapshot(t, src, "df", tb.name)
		sizes = append(sizes, fmt.Sprintf("%s %d cols %d rows", tb.name, len(want[name].cols), len(want[name].rows)))
	}
	t.Logf("source: %s", strings.Join(sizes, ", "))
	src.Exec(t, "DROP TABLE df.ubig, df.bkey", "DROP TABLE df.cyc_s")
	src.Exec(t, "DROP DATABASE df")
	index := src.BinlogIndex()
	dir := t.TempDir()

	names := []string{"cyc#1"}
	for _, tb := range ts {
		names = append(names, strings.SplitN(tb.name, "_", 2)[0])
	}
	for _, name := range names {
		t.Run(strings.ReplaceAll(name, "#", "-"), func(t *testing.T) {
			table, inc, _ := strings.Cut(name, "#")
			args := []string{"--table", "df." + table}
			if inc != "" {
				args = append(args, "--incarnation", inc)
			}
			w := want[name]
			clean := func(errs string) {
				t.Helper()
				for _, bad := range []string{"approximation", "conflict", "never inserted", "cannot"} {
					if strings.Contains(strings.ReplaceAll(errs, "conflicts: 0 skipped, 0 overwritten", ""), bad) {
						t.Errorf("recover reports %q:\n%s", bad, errs)
					}
				}
			}
			out, errs := recoverCLI(t, 0, append(args, index)...)
			clean(errs)
			file := filepath.Join(dir, table+inc+".sql")
			recoverCLI(t, 0, append(args, "--memory-budget", "1", "-o", file, index)...)
			if b, err := os.ReadFile(file); err != nil || !bytes.Equal(b, out) {
				t.Errorf("-o FILE --memory-budget 1 wrote other SQL than stdout (%d bytes, %d on stdout; %v)", len(b), len(out), err)
			}
			dst.Exec(t, "DROP DATABASE IF EXISTS df")
			recLoadSQL(t, dst, out)
			rdSame(t, "SQL", rdSnapshot(t, dst, "df", table), w)
			if t.Failed() {
				t.Logf("stderr:\n%s", errs)
			}
			for _, budget := range []string{"16", "0"} {
				dst.Exec(t, "DROP DATABASE IF EXISTS df")
				_, errs := recoverCLI(t, 0, append(args, "--to", dst.DSN(), "--memory-budget", budget, index)...)
				clean(errs)
				rdSame(t, "--to --memory-budget "+budget, rdSnapshot(t, dst, "df", table), w)
			}
		})
	}
}
