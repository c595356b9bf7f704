package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// dfHexRows is every table's rows as HEX() of each column (the text
// snapshot, rpSnapshot, shows floats and the rest as the server prints
// them), ordered.
func dfHexRows(t testing.TB, srv *testserver.Server, ts []*dfTable) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tb := range ts {
		var exprs, order []string
		for i, c := range strings.Split(tb.colList(), ", ") {
			exprs = append(exprs, "IFNULL(HEX("+c+"), 'NULL')")
			order = append(order, fmt.Sprint(i+1))
		}
		for _, c := range tb.cols {
			if strings.HasPrefix(c.ddl, "FLOAT") || strings.HasPrefix(c.ddl, "DOUBLE") {
				// HEX() of a number is of its integer: the value as text,
				// and its sign (ATAN2 tells -0 from 0).
				exprs = append(exprs, fmt.Sprintf("CONCAT(%s, ' ', ATAN2(%[1]s, -1))", rpQ(c.name)))
			}
			if strings.HasPrefix(c.ddl, "ENUM") || strings.HasPrefix(c.ddl, "SET") {
				exprs = append(exprs, rpQ(c.name)+" + 0") // '' the member, or the error value
			}
		}
		out[tb.full()] = rpRows(t, srv, "SELECT "+strings.Join(exprs, ", ")+" FROM "+tb.full()+" ORDER BY "+strings.Join(order, ", "))
	}
	return out
}

// dfSameHex compares dfHexRows snapshots, naming the first row and the
// columns that differ.
func dfSameHex(t testing.TB, what string, ts []*dfTable, got, want map[string]string) {
	t.Helper()
	for _, tb := range ts {
		g, w := strings.Split(got[tb.full()], "\n"), strings.Split(want[tb.full()], "\n")
		if len(g) != len(w) {
			t.Errorf("%s: %s has %d rows, want %d", what, tb.full(), len(g), len(w))
		}
		for i := 0; i < len(g) && i < len(w); i++ {
			if g[i] == w[i] {
				continue
			}
			gf, wf := strings.Split(g[i], ","), strings.Split(w[i], ",")
			names := strings.Split(tb.colList(), ", ")
			var diffs []string
			for j := 0; j < len(gf) && j < len(wf); j++ {
				if gf[j] != wf[j] {
					name := "extra"
					if j < len(names) {
						name = names[j]
					}
					diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s", name, clip(gf[j]), clip(wf[j])))
				}
			}
			t.Errorf("%s: %s row %d (%s) differs: %s", what, tb.full(), i, clip(wf[0]), strings.Join(diffs, "; "))
			break
		}
	}
}

// TestReplayDifferential replays one source's binlog five ways, each
// into a fresh target — --to (multi-row INSERTs encoded as queued,
// batched updates and deletes, pipelines, background groups), --to
// --bulk-load=false, --to --load-data (LOAD DATA LOCAL), --to
// --parallel 3, --format sql | mariadb — and compares every target with
// the source: ordered rows as text and as HEX() of every column, and
// CHECKSUM TABLE. The workload (replay_diff_gen_test.go) puts every
// column type at its edges into seven tables with keys of every kind
// (INT, BIGINT UNSIGNED, composite, text, BINARY, one with a UNIQUE key
// besides, none) in runs of inserts, updates and deletes long enough for
// the fast paths, in FULL images, then MINIMAL and NOBLOB ones.
func TestReplayDifferential(t *testing.T) {
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	// Not strict: zero dates, 2020-02-30, an ENUM's error value.
	src.Exec(t, "SET SESSION sql_mode = 'ALLOW_INVALID_DATES,NO_AUTO_VALUE_ON_ZERO'", "CREATE DATABASE df")
	ts := dfTables(g)
	for _, tb := range ts {
		src.Exec(t, tb.create())
	}
	rows := 0
	for i := 0; i < 40; i++ {
		tx := dfTx(g, ts)
		rows += len(tx)
		src.Exec(t, tx...)
	}
	// Partial images, on the tables with a key.
	keyed := ts[:len(ts)-1]
	for _, image := range []string{"MINIMAL", "NOBLOB"} {
		src.Exec(t, "SET SESSION binlog_row_image = "+image)
		for i := 0; i < 10; i++ {
			src.Exec(t, dfTx(g, keyed)...)
		}
	}
	src.Exec(t, "SET SESSION binlog_row_image = FULL")
	for i := 0; i < 5; i++ {
		src.Exec(t, dfTx(g, ts)...)
	}
	end := rpMasterPos(t, src)
	index := src.BinlogIndex()
	want, wantHex := rpSnapshot(t, src), dfHexRows(t, src, ts)
	var sizes []string
	for _, tb := range ts {
		sizes = append(sizes, fmt.Sprintf("%s %d cols %s rows", tb.name, len(tb.cols), stVal(t, src, "SELECT COUNT(*) FROM "+tb.full())))
	}
	t.Logf("source: %s", strings.Join(sizes, ", "))

	for _, v := range []struct {
		name string
		args []string
	}{
		{"to", nil},
		{"no-bulk", []string{"--bulk-load=false"}},
		{"load-data", []string{"--load-data"}},
		{"parallel", []string{"--parallel", "3"}},
		{"format-sql", nil},
	} {
		t.Run(v.name, func(t *testing.T) {
			dst := testserver.Start(t, testserver.Options{})
			if v.name == "format-sql" {
				sql, _ := rpRun(t, 0, "read", index, "--format", "sql")
				rpMysql(t, dst, sql)
			} else {
				_, errOut := rpRun(t, 0, append([]string{"read", index, "--to", dst.DSN() + "/"}, v.args...)...)
				if cp := rpCheckpoint(t, dst); cp != end {
					t.Errorf("checkpoint %q, want %q", cp, end)
				}
				t.Logf("stderr: %s", clip(errOut))
			}
			var st []string
			for _, s := range []string{"Com_load", "Com_insert", "Com_update", "Com_delete", "Com_rollback_to_savepoint"} {
				st = append(st, s+"="+stStatus(t, dst, s))
			}
			t.Logf("target: %s", strings.Join(st, " "))
			if v.name == "load-data" && stCount(t, dst, "Com_load") == 0 {
				t.Errorf("no LOAD DATA on the target: the workload no longer reaches the fast paths")
			}
			rpSame(t, v.name, rpSnapshot(t, dst), want)
			dfSameHex(t, v.name, ts, dfHexRows(t, dst, ts), wantHex)
			if t.Failed() {
				t.Logf("the workload's seed is logged above: RP_SEED repeats it")
			}
		})
	}
}
