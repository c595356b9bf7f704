package schemahist

import (
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
)

// TestApplyChanges: what each statement did, with the tables before and
// after.
func TestApplyChanges(t *testing.T) {
	h := New(true)
	const utf8mb4 = 45 // utf8mb4_general_ci
	step := func(sql, db string) []change.SchemaChange {
		t.Helper()
		warns, sc := h.ApplyChanges(Statement{SQL: sql, DB: db, CollationServer: utf8mb4})
		if len(warns) > 0 {
			t.Fatalf("%s: %v", sql, warns)
		}
		return sc
	}
	desc := func(sc []change.SchemaChange) string {
		var out []string
		for _, c := range sc {
			s := c.Kind.String() + " " + c.DB + "." + c.Table
			if c.Charset != "" {
				s += " charset=" + c.Charset
			}
			for _, d := range []*change.TableDef{c.Old, c.New} {
				if d == nil {
					s += " -"
					continue
				}
				var cols []string
				for i, col := range d.Table.Columns {
					n := col.Name
					if d.Columns[i].HasDefault {
						n += "=" + d.Columns[i].Default
					}
					if d.Columns[i].AutoIncrement {
						n += "+ai"
					}
					cols = append(cols, n)
				}
				s += " " + d.Table.DB + "." + d.Table.Name + "(" + strings.Join(cols, ",") + ")/" + d.Charset
			}
			out = append(out, s)
		}
		return strings.Join(out, "; ")
	}
	for _, tc := range []struct{ sql, db, want string }{
		{"CREATE DATABASE d CHARACTER SET = latin1", "", "database-create d. charset=latin1 - -"},
		{"CREATE SCHEMA IF NOT EXISTS e", "", "database-create e. charset=utf8mb4 - -"},
		{"ALTER DATABASE COLLATE latin1_swedish_ci", "d", "database-alter d. charset=latin1 - -"},
		{"CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v INT DEFAULT 5)", "d", "table-create d.t - d.t(id+ai,v=5)/utf8mb4"},
		{"CREATE TABLE IF NOT EXISTS t (x INT)", "d", ""},
		{"ALTER TABLE t ADD COLUMN w INT", "d", "table-alter d.t d.t(id+ai,v=5)/utf8mb4 d.t(id+ai,v=5,w)/utf8mb4"},
		{"RENAME TABLE d.t TO e.u", "", "table-alter d.t d.t(id+ai,v=5,w)/utf8mb4 e.u(id+ai,v=5,w)/utf8mb4"},
		{"CREATE TABLE v LIKE e.u", "d", "table-create d.v - d.v(id+ai,v=5,w)/utf8mb4"},
		{"ALTER TABLE old ADD COLUMN z INT", "d", "table-alter d.old - -"},
		{"TRUNCATE TABLE d.v", "", ""},
		{"DROP TABLE d.v, e.u", "", "table-drop d.v d.v(id+ai,v=5,w)/utf8mb4 -; table-drop e.u e.u(id+ai,v=5,w)/utf8mb4 -"},
		{"DROP DATABASE e", "", "database-drop e. - -"},
		{"CREATE OR REPLACE DATABASE d", "", "database-create d. charset=utf8mb4 - -"},
		{"CREATE VIEW w AS SELECT 1", "d", ""},
	} {
		if got := desc(step(tc.sql, tc.db)); got != tc.want {
			t.Errorf("%s:\n got  %s\n want %s", tc.sql, got, tc.want)
		}
	}
}

// TestAlterDefaultCharset: a table created without a character column
// takes its CREATE session's default for a column an ALTER adds without
// a character set (a guess, as for CREATE TABLE, checked by the
// TABLE_MAPs), instead of being lost.
func TestAlterDefaultCharset(t *testing.T) {
	h := New(true)
	const utf8mb4 = 45
	h.Apply(Statement{SQL: "CREATE TABLE d.t (id INT PRIMARY KEY)", CollationServer: utf8mb4})
	data, err := h.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if h, err = Decode(data, "saved"); err != nil { // saved and restored, as a restart does
		t.Fatal(err)
	}
	warns, sc := h.ApplyChanges(Statement{SQL: "ALTER TABLE d.t ADD COLUMN s VARCHAR(7)", CollationServer: 8})
	if len(warns) > 0 || len(sc) != 1 || sc[0].New == nil {
		t.Fatalf("%v %+v", warns, sc)
	}
	if c := sc[0].New.Table.Columns[1]; c.Collation != utf8mb4 || c.Length != 28 {
		t.Errorf("s: collation %d, length %d; want %d, 28", c.Collation, c.Length, utf8mb4)
	}
	if cs := sc[0].New.Charset; cs != "utf8mb4" {
		t.Errorf("table charset %q", cs)
	}
}

// TestDeclaredType: each column's type as declared, kept through an
// ALTER TABLE, a save and a load.
func TestDeclaredType(t *testing.T) {
	h := New(true)
	sql := "CREATE TABLE t (a INTEGER(11) UNSIGNED, b double  precision, c CHARACTER VARYING(255), d bool, e DEC, " +
		"f int signed zerofill, g char(60) binary, h SERIAL, i ENUM('x','y'), j UUID, k LONG VARCHAR, l REAL, m NUMERIC(5,2), n datetime(0), o decimal ( 8 , 3 ))"
	if warns, _ := h.ApplyChanges(Statement{SQL: sql, DB: "d", CollationServer: 45}); len(warns) > 0 {
		t.Fatal(warns)
	}
	want := []string{"INTEGER(11) UNSIGNED", "double precision", "CHARACTER VARYING(255)", "bool", "DEC",
		"int UNSIGNED ZEROFILL", "char(60) BINARY", "SERIAL", "", "", "LONG VARCHAR", "REAL", "NUMERIC(5,2)", "datetime(0)", "decimal(8,3)"}
	check := func(what string, h *History) {
		t.Helper()
		_, sc := h.ApplyChanges(Statement{SQL: "ALTER TABLE t ADD COLUMN z INT(3)", DB: "d", CollationServer: 45})
		if len(sc) != 1 || sc[0].Old == nil || sc[0].New == nil {
			t.Fatalf("%s: %+v", what, sc)
		}
		var got []string
		for _, c := range sc[0].Old.Columns {
			got = append(got, c.Declared)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s:\n got  %q\n want %q", what, got, want)
		}
		if z := sc[0].New.Columns[len(want)].Declared; z != "INT(3)" {
			t.Errorf("%s: z %q", what, z)
		}
	}
	b, err := h.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Decode(b, "test")
	if err != nil {
		t.Fatal(err)
	}
	check("applied", h)
	check("saved and loaded", loaded)
}
