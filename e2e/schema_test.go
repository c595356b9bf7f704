package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// autoOracles returns db.table's columns in table order and an oracle
// for each, chosen by the column's type in information_schema.
func autoOracles(t testing.TB, srv *testserver.Server, db, table string) ([]string, map[string]Oracle) {
	t.Helper()
	var cols []string
	o := map[string]Oracle{}
	for _, r := range srv.QueryStrings(t, fmt.Sprintf(
		"SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME = '%s' ORDER BY ORDINAL_POSITION", db, table)) {
		c, typ := *r[0], *r[1]
		q := "`" + c + "`"
		cols = append(cols, c)
		switch typ {
		case "tinyint", "smallint", "mediumint", "int", "bigint", "year":
			o[c] = Num(q)
		case "bit":
			o[c] = Num("CAST(" + q + " AS UNSIGNED)")
		case "float":
			o[c] = Float(q)
		case "double":
			o[c] = Double(q)
		case "decimal", "date", "datetime", "timestamp", "time":
			o[c] = Char(q)
		case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "json":
			o[c] = Str(q)
		case "set":
			o[c] = Set(q)
		case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
			o[c] = Bytes(q)
		default:
			t.Fatalf("autoOracles: no oracle for %s.%s.%s of type %s", db, table, c, typ)
		}
	}
	return cols, o
}

// expectedRow is one row as the server had it at one moment.
type expectedRow struct {
	table string
	pk    []string
	cols  []string
	vals  map[string]any
}

// rowNow reads the row key = id of db.table as expected JSON, with the
// table's columns and primary key as they are now.
func rowNow(t testing.TB, srv *testserver.Server, db, table string, id int) expectedRow {
	t.Helper()
	cols, o := autoOracles(t, srv, db, table)
	snap := snapshot(t, srv, db, table, "id", cols, o)
	vals, ok := snap[fmt.Sprint(id)]
	if !ok {
		t.Fatalf("%s.%s has no row id=%d", db, table, id)
	}
	return expectedRow{table: table, pk: primaryKey(t, srv, db, table), cols: cols, vals: vals}
}

func checkRow(t testing.TB, what string, got Rec, op string, want expectedRow, img *Obj) {
	t.Helper()
	if got.Op != op || got.Table != want.table {
		t.Errorf("%s: decoded %s on %s, want %s on %s: %s", what, got.Op, got.Table, op, want.table, got.Line)
		return
	}
	if !equalStrings(got.PK, want.pk) {
		t.Errorf("%s: pk %q, want %q", what, got.PK, want.pk)
	}
	checkImage(t, what, img, want.cols, want.vals)
}

// TestSchemaChanges: ALTER TABLE between inserts (ADD, DROP, RENAME and
// MODIFY COLUMN, a new primary key), RENAME TABLE, and DROP TABLE before
// decoding: every row is decoded with the table's name, columns, types
// and key as they were when it was written, compared with the server's
// row and information_schema at that moment.
func TestSchemaChanges(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE sc", "USE sc", "CREATE TABLE s (id INT PRIMARY KEY, a INT, b VARCHAR(10))")

	type want struct {
		op            string
		before, after *expectedRow
		ddl           string
	}
	var wants []want
	ddl := func(sql string) {
		srv.Exec(t, sql)
		wants = append(wants, want{op: "ddl", ddl: sql})
	}
	insert := func(table string, id int, sql string) {
		srv.Exec(t, sql)
		r := rowNow(t, srv, "sc", table, id)
		wants = append(wants, want{op: "insert", after: &r})
	}
	update := func(table string, id int, sql string) {
		b := rowNow(t, srv, "sc", table, id)
		srv.Exec(t, sql)
		a := rowNow(t, srv, "sc", table, id)
		wants = append(wants, want{op: "update", before: &b, after: &a})
	}
	del := func(table string, id int, sql string) {
		b := rowNow(t, srv, "sc", table, id)
		srv.Exec(t, sql)
		wants = append(wants, want{op: "delete", before: &b})
	}

	insert("s", 1, "INSERT INTO s VALUES (1, 10, 'one')")
	ddl("ALTER TABLE s ADD COLUMN c DATE AFTER a")
	insert("s", 2, "INSERT INTO s VALUES (2, 20, '2024-01-02', 'two')")
	ddl("ALTER TABLE s DROP COLUMN a")
	insert("s", 3, "INSERT INTO s VALUES (3, '2024-01-03', 'three')")
	ddl("ALTER TABLE s RENAME COLUMN b TO bee")
	insert("s", 4, "INSERT INTO s VALUES (4, NULL, 'four')")
	ddl("ALTER TABLE s MODIFY bee TEXT CHARACTER SET latin1, MODIFY id BIGINT UNSIGNED NOT NULL")
	insert("s", 5, "INSERT INTO s VALUES (5, '2024-01-05', 'fünf €')")
	update("s", 1, "UPDATE s SET bee = 'uno' WHERE id = 1")
	ddl("ALTER TABLE s ADD COLUMN amount DECIMAL(8,3) FIRST, DROP PRIMARY KEY, ADD PRIMARY KEY (bee(3), id)")
	insert("s", 6, "INSERT INTO s VALUES (-1.5, 6, '2024-01-06', 'six')")
	ddl("RENAME TABLE s TO s2")
	insert("s2", 7, "INSERT INTO s2 VALUES (7.25, 7, NULL, 'seven')")
	del("s2", 2, "DELETE FROM s2 WHERE id = 2")
	ddl("ALTER TABLE s2 MODIFY c VARCHAR(20)")
	update("s2", 3, "UPDATE s2 SET c = 'not a date' WHERE id = 3")
	ddl("CREATE TABLE gone (id INT PRIMARY KEY, x VARCHAR(5))")
	insert("gone", 1, "INSERT INTO gone VALUES (1, 'x')")
	// The rows of dropped tables must still decode, with names.
	srv.Exec(t, "DROP TABLE gone", "DROP TABLE s2")

	recs := DecodeServer(t, srv)
	var got []Rec
	for _, r := range recs {
		if r.Op != "ddl" || strings.HasPrefix(r.SQL, "ALTER") || strings.HasPrefix(r.SQL, "RENAME") || strings.HasPrefix(r.SQL, "CREATE TABLE gone") {
			got = append(got, r)
		}
	}
	if len(got) != len(wants) {
		for _, r := range got {
			t.Log(r.Line)
		}
		t.Fatalf("%d records, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		r := got[i]
		what := fmt.Sprintf("record %d (%s)", i, w.op)
		switch w.op {
		case "ddl":
			if r.Op != "ddl" || r.SQL != w.ddl || r.DB != "sc" {
				t.Errorf("%s: got %s", what, r.Line)
			}
		case "insert":
			checkRow(t, what+" after", r, w.op, *w.after, r.After)
		case "update":
			checkRow(t, what+" before", r, w.op, *w.before, r.Before)
			checkRow(t, what+" after", r, w.op, *w.after, r.After)
		case "delete":
			checkRow(t, what+" before", r, w.op, *w.before, r.Before)
		}
	}
	// A few of the facts literally.
	for _, c := range []struct {
		i    int
		keys string
	}{{0, "id,a,b"}, {2, "id,a,c,b"}, {4, "id,c,b"}, {6, "id,c,bee"}, {11, "amount,id,c,bee"}} {
		if c.i < len(got) && got[c.i].After != nil && strings.Join(got[c.i].After.Keys, ",") != c.keys {
			t.Errorf("record %d: columns %v, want %s", c.i, got[c.i].After.Keys, c.keys)
		}
	}
}
