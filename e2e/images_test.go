package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// snapshot reads every row of db.table as expected JSON values, keyed by
// the key column's text.
func snapshot(t testing.TB, srv *testserver.Server, db, table, key string, cols []string, oracles map[string]Oracle) map[string]map[string]any {
	t.Helper()
	exprs := []string{"CAST(`" + key + "` AS CHAR)"}
	for _, c := range cols {
		exprs = append(exprs, oracles[c].Expr)
	}
	out := map[string]map[string]any{}
	for _, r := range srv.QueryStrings(t, fmt.Sprintf("SELECT %s FROM `%s`.`%s`", strings.Join(exprs, ", "), db, table)) {
		row := map[string]any{}
		for i, c := range cols {
			row[c] = oracles[c].Want(r[i+1])
		}
		out[*r[0]] = row
	}
	return out
}

// checkImage compares a decoded row image with the server's row: it must
// carry exactly the columns want (in table order), each equal to the
// server's value; absent columns are missing, NULLs are null.
func checkImage(t testing.TB, what string, got *Obj, want []string, server map[string]any) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: no image", what)
		return
	}
	if !equalStrings(got.Keys, want) {
		t.Errorf("%s: columns %q, want %q", what, got.Keys, want)
	}
	for _, c := range want {
		if v, ok := got.M[c]; ok && !equalJSON(v, server[c]) {
			t.Errorf("%s: %s = %s, server has %s", what, c, show(v), show(server[c]))
		}
	}
}

// TestRowImages: updates and deletes with binlog_row_image FULL, MINIMAL
// and NOBLOB. Every image is compared with the server's row before and
// after the statement, and the columns each image carries are what
// MariaDB logs for that setting: with MINIMAL and NOBLOB the columns it
// leaves out are missing from the JSON object, while NULL columns it logs
// are present as null.
func TestRowImages(t *testing.T) {
	t.Parallel()
	all := []string{"id", "a", "b", "c", "d", "v", "s"}
	noBlob := []string{"id", "a", "b", "d", "v", "s"}
	nkAll := []string{"x", "y", "z"}
	type step struct {
		sql           string
		table         string
		op            string
		before, after []string // columns of each image; nil: no such image
	}
	cases := map[string][]step{
		"FULL": {
			{"INSERT INTO img (id, a, b, c) VALUES (1, 10, 'x', 'blob1')", "img", "insert", nil, all},
			{"UPDATE img SET a = 11 WHERE id = 1", "img", "update", all, all},
			{"UPDATE img SET b = NULL WHERE id = 1", "img", "update", all, all},
			{"UPDATE img SET c = 'blob2' WHERE id = 1", "img", "update", all, all},
			{"DELETE FROM img WHERE id = 1", "img", "delete", all, nil},
			{"INSERT INTO nk VALUES (1, NULL, 'zz')", "nk", "insert", nil, nkAll},
			{"UPDATE nk SET y = 5", "nk", "update", nkAll, nkAll},
			{"DELETE FROM nk", "nk", "delete", nkAll, nil},
		},
		// MINIMAL: inserts log the columns the statement set (plus STORED
		// generated ones); updates and deletes log the primary key as the
		// before image and the assigned columns (plus STORED generated
		// ones) as the after image. Without a primary key, images are full.
		"MINIMAL": {
			{"INSERT INTO img (id, a, b, c) VALUES (1, 10, 'x', 'blob1')", "img", "insert", nil, []string{"id", "a", "b", "c", "s"}},
			{"UPDATE img SET a = 11 WHERE id = 1", "img", "update", []string{"id"}, []string{"a", "s"}},
			{"UPDATE img SET b = NULL WHERE id = 1", "img", "update", []string{"id"}, []string{"b", "s"}},
			{"UPDATE img SET c = 'blob2' WHERE id = 1", "img", "update", []string{"id"}, []string{"c", "s"}},
			{"DELETE FROM img WHERE id = 1", "img", "delete", []string{"id"}, nil},
			{"INSERT INTO nk VALUES (1, NULL, 'zz')", "nk", "insert", nil, nkAll},
			{"UPDATE nk SET y = 5", "nk", "update", nkAll, nkAll},
			{"DELETE FROM nk", "nk", "delete", nkAll, nil},
		},
		// NOBLOB: everything but BLOB/TEXT columns the statement did not
		// change.
		"NOBLOB": {
			{"INSERT INTO img (id, a, b, c) VALUES (1, 10, 'x', 'blob1')", "img", "insert", nil, all},
			{"UPDATE img SET a = 11 WHERE id = 1", "img", "update", noBlob, noBlob},
			{"UPDATE img SET b = NULL WHERE id = 1", "img", "update", noBlob, noBlob},
			{"UPDATE img SET c = 'blob2' WHERE id = 1", "img", "update", noBlob, all},
			{"DELETE FROM img WHERE id = 1", "img", "delete", noBlob, nil},
			{"INSERT INTO nk VALUES (1, NULL, 'zz')", "nk", "insert", nil, nkAll},
			{"UPDATE nk SET y = 5", "nk", "update", nkAll, nkAll},
			{"DELETE FROM nk", "nk", "delete", nkAll, nil},
		},
	}
	oracles := map[string]Oracle{
		"id": Num("id"), "a": Num("a"), "b": Str("b"), "c": Bytes("c"), "d": Num("d"), "v": Num("v"), "s": Num("s"),
		"x": Num("x"), "y": Num("y"), "z": Str("z"),
	}
	for _, image := range []string{"FULL", "MINIMAL", "NOBLOB"} {
		steps := cases[image]
		t.Run(image, func(t *testing.T) {
			t.Parallel()
			srv := testserver.Start(t, testserver.Options{RowImage: image})
			if got := one(t, srv, "SELECT @@binlog_row_image"); got == nil || *got != image {
				t.Fatalf("binlog_row_image = %v", got)
			}
			srv.Exec(t, "CREATE DATABASE ri", "USE ri",
				"CREATE TABLE img (id INT PRIMARY KEY, a INT, b VARCHAR(10) NULL, c BLOB, d INT NULL, v INT AS (a * 2) VIRTUAL, s INT AS (a + 1) STORED)",
				"CREATE TABLE nk (x INT, y INT NULL, z TEXT)")
			keyOf := map[string]string{"img": "id", "nk": "x"}
			colsOf := map[string][]string{"img": all, "nk": nkAll}
			var pre, post []map[string]map[string]any
			for _, s := range steps {
				pre = append(pre, snapshot(t, srv, "ri", s.table, keyOf[s.table], colsOf[s.table], oracles))
				srv.Exec(t, s.sql)
				post = append(post, snapshot(t, srv, "ri", s.table, keyOf[s.table], colsOf[s.table], oracles))
			}
			var recs []Rec
			for _, r := range DecodeServer(t, srv) {
				if r.Op != "ddl" {
					recs = append(recs, r)
				}
			}
			if len(recs) != len(steps) {
				t.Fatalf("%d row records, want %d (one per statement)", len(recs), len(steps))
			}
			for i, s := range steps {
				r := recs[i]
				what := fmt.Sprintf("%s %q", image, s.sql)
				if r.Op != s.op || r.Table != s.table {
					t.Errorf("%s: decoded %s on %s", what, r.Op, r.Table)
					continue
				}
				if s.before != nil {
					checkImage(t, what+" before", r.Before, s.before, pre[i]["1"])
				} else if r.Before != nil {
					t.Errorf("%s: unexpected before image", what)
				}
				if s.after != nil {
					checkImage(t, what+" after", r.After, s.after, post[i]["1"])
				} else if r.After != nil {
					t.Errorf("%s: unexpected after image", what)
				}
			}
			if image == "MINIMAL" {
				// Absent and NULL, explicitly: d is NULL on the server but
				// the insert did not set it, so it is absent, not null; the
				// update set b to NULL, so b is present as null.
				ins, upd := recs[0], recs[2]
				if v, ok := post[0]["1"]["d"]; !ok || v != nil {
					t.Fatalf("server d = %v, want NULL", v)
				}
				if ins.After.Has("d") {
					t.Errorf("MINIMAL insert: d is present (%s), want absent: %s", show(ins.After.M["d"]), ins.Line)
				}
				if !upd.After.Has("b") || upd.After.M["b"] != nil {
					t.Errorf("MINIMAL update b = NULL: b must be present as null: %s", upd.Line)
				}
				if upd.After.Has("a") || upd.Before.Has("a") {
					t.Errorf("MINIMAL update b = NULL: a must be absent: %s", upd.Line)
				}
				if !strings.Contains(upd.Line, `"after":{"b":null,`) {
					t.Errorf("MINIMAL update: want a literal \"b\":null in the line: %s", upd.Line)
				}
			}
			if image == "NOBLOB" {
				if r := recs[1]; r.Before.Has("c") || r.After.Has("c") {
					t.Errorf("NOBLOB update of a: the unchanged BLOB c must be absent: %s", r.Line)
				}
				if r := recs[1]; !r.Before.Has("d") || r.Before.M["d"] != nil {
					t.Errorf("NOBLOB update of a: the NULL column d must be present as null: %s", r.Line)
				}
			}
		})
	}
}

// TestMultiRowStatements: one statement changing several rows gives one
// rows event; its rows share pos.offset and count pos.row from 0.
func TestMultiRowStatements(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE mr", "USE mr",
		"CREATE TABLE t (id INT PRIMARY KEY, a INT)",
		"INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)",
		"UPDATE t SET a = a + 10",
		"DELETE FROM t WHERE id >= 2",
	)
	recs := Rows(DecodeServer(t, srv), "mr", "t")
	if len(recs) != 8 {
		t.Fatalf("%d records, want 8", len(recs))
	}
	for _, g := range [][]Rec{recs[0:3], recs[3:6], recs[6:8]} {
		for i, r := range g {
			if r.Offset != g[0].Offset || r.Row != i || r.Op != g[0].Op || r.GTID != g[0].GTID {
				t.Errorf("record %d of a %s statement: offset %d row %d gtid %s, want offset %d row %d gtid %s",
					i, g[0].Op, r.Offset, r.Row, r.GTID, g[0].Offset, i, g[0].GTID)
			}
		}
	}
	for i, r := range recs[3:6] {
		id := fmt.Sprint(i + 1)
		if fmt.Sprint(r.Before.M["a"]) != id || fmt.Sprint(r.After.M["a"]) != fmt.Sprint(i+11) {
			t.Errorf("update row %d: %s", i, r.Line)
		}
	}
	if recs[0].GTID == recs[3].GTID || recs[0].Offset >= recs[3].Offset || recs[3].Offset >= recs[6].Offset {
		t.Errorf("statements are not separate transactions in order: %s / %s / %s", recs[0].Line, recs[3].Line, recs[6].Line)
	}
}
