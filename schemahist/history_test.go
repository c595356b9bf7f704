package schemahist

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// cols describes a history table: "name[:VIRTUAL|:STORED][=default]" per column.
func cols(t *Table) string {
	if t == nil {
		return "<unknown>"
	}
	var out []string
	for _, c := range t.Columns {
		s := c.Name
		if c.Generated != "" {
			s += ":" + c.Generated
		}
		if c.HasDefault {
			s += "=" + c.Default
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// A table's life, statement by statement, as the history follows it.
func TestHistoryLife(t *testing.T) {
	h := New(true)
	off := uint64(100)
	steps := []struct {
		sql, db  string
		table    string // db.name to look at
		want     string
		warnings int
	}{
		{"CREATE DATABASE s", "", "s.t", "<unknown>", 0},
		{"CREATE TABLE s.t (id INT PRIMARY KEY, a VARCHAR(10) DEFAULT 'x', g INT AS (id+1) VIRTUAL, " +
			"st INT GENERATED ALWAYS AS (id*2) STORED) DEFAULT CHARSET=utf8mb4", "", "s.t", "id a='x' g:VIRTUAL st:STORED", 0},
		// The default database comes from the QUERY event (USE s).
		{"ALTER TABLE t ADD COLUMN b INT NOT NULL DEFAULT 5 AFTER id, DROP COLUMN a", "s", "s.t", "id b=5 g:VIRTUAL st:STORED", 0},
		{"ALTER TABLE t CHANGE b bb BIGINT, MODIFY st INT AS (id*3) PERSISTENT", "s", "s.t", "id bb g:VIRTUAL st:STORED", 0},
		{"ALTER TABLE t RENAME COLUMN bb TO b2, ADD p INT AS (id) FIRST", "s", "s.t", "p:VIRTUAL id b2 g:VIRTUAL st:STORED", 0},
		{"ALTER TABLE t ADD INDEX i (b2), DROP PRIMARY KEY, ADD PRIMARY KEY (id, b2)", "s", "s.t", "p:VIRTUAL id b2 g:VIRTUAL st:STORED", 0},
		{"CREATE INDEX j ON t (b2)", "s", "s.t", "p:VIRTUAL id b2 g:VIRTUAL st:STORED", 0},
		{"DROP INDEX j ON s.t", "x", "s.t", "p:VIRTUAL id b2 g:VIRTUAL st:STORED", 0},
		{"ALTER TABLE t ALTER COLUMN b2 SET DEFAULT 7", "s", "s.t", "p:VIRTUAL id b2=7 g:VIRTUAL st:STORED", 0},
		{"RENAME TABLE s.t TO s.u", "", "s.t", "<unknown>", 0},
		{"TRUNCATE TABLE s.u", "", "s.u", "p:VIRTUAL id b2=7 g:VIRTUAL st:STORED", 0},
		{"CREATE TABLE s.v LIKE s.u", "", "s.v", "p:VIRTUAL id b2=7 g:VIRTUAL st:STORED", 0},
		{"CREATE TABLE IF NOT EXISTS s.v (x INT)", "", "s.v", "p:VIRTUAL id b2=7 g:VIRTUAL st:STORED", 0},
		{"CREATE OR REPLACE TABLE s.v (x INT DEFAULT NULL)", "", "s.v", "x=NULL", 0},
		{"ALTER TABLE s.v RENAME TO s.w", "", "s.w", "x=NULL", 0},
		{"DROP TABLE IF EXISTS s.w, s.nothing", "", "s.w", "<unknown>", 0},
		{"CREATE TABLE s.sel (x INT) SELECT 1 AS x", "", "s.sel", "<unknown>", 0},
		{"ALTER TABLE s.u ADD COLUMN z FROBNICATE", "", "s.u", "<unknown>", 1},
		{"CREATE TABLE s.u (k INT)", "", "s.u", "k", 0},
		{"CREATE TABLE other.o (k INT)", "", "other.o", "k", 0},
		{"DROP DATABASE s", "", "s.u", "<unknown>", 0},
		{"INSERT INTO other.o VALUES (1)", "", "other.o", "k", 0},
	}
	for _, s := range steps {
		off += 100
		pos := change.Position{File: "b.000001", Offset: off}
		warns := h.Apply(Statement{SQL: s.sql, DB: s.db, Pos: pos, CollationServer: Collation("utf8mb4", "", true)})
		if len(warns) != s.warnings {
			t.Errorf("%s: warnings %q, want %d", s.sql, warns, s.warnings)
		}
		for _, w := range warns {
			if !strings.Contains(w, "b.000001:"+itoa(off)) {
				t.Errorf("%s: warning %q names no position", s.sql, w)
			}
		}
		db, name, _ := strings.Cut(s.table, ".")
		if got := cols(h.Table(db, name)); got != s.want {
			t.Errorf("%s:\n got %s\nwant %s", s.sql, got, s.want)
		}
	}
	if h.Table("other", "o") == nil || h.Len() != 1 { // DROP DATABASE s ended every s table, lost or not
		t.Errorf("%d tables left", h.Len())
	}
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }

// tableMapOf is the TABLE_MAP a server would log for a CREATE TABLE.
func tableMapOf(t *testing.T, sql string) *tablemap.Table {
	t.Helper()
	sh, err := shapeFromCreate(sql, nil, 0, true, true)
	if err != nil {
		t.Fatal(err)
	}
	m := *sh.T
	m.Columns = append([]tablemap.Column(nil), sh.T.Columns...)
	return &m
}

// Every TABLE_MAP is checked: one that disagrees leaves the table on its
// TABLE_MAPs, with one warning naming the position.
func TestHistoryCheck(t *testing.T) {
	h := New(true)
	create := "CREATE TABLE d.t (id INT NOT NULL, v VARCHAR(5), g INT AS (id) VIRTUAL, PRIMARY KEY (id)) CHARSET=latin1"
	h.Apply(Statement{SQL: create, Pos: change.Position{File: "b.1", Offset: 4}})
	m := tableMapOf(t, create)
	m.DB, m.Name = "d", "t"
	for range 2 {
		got, warn := h.Check(m, change.Position{File: "b.1", Offset: 10})
		if got == nil || warn != "" || got.GeneratedCount() != 1 {
			t.Fatalf("agreeing TABLE_MAP: %v %q", got, warn)
		}
	}
	// Not in the history: nothing to say.
	other := *m
	other.Name = "u"
	if got, warn := h.Check(&other, change.Position{}); got != nil || warn != "" {
		t.Errorf("unknown table: %v %q", got, warn)
	}
	// Another column type than the history's.
	bad := *m
	bad.Columns = append([]tablemap.Column(nil), m.Columns...)
	bad.Columns[1].Length = 50
	got, warn := h.Check(&bad, change.Position{File: "b.1", Offset: 77})
	if got != nil || !strings.Contains(warn, "b.1:77") || !strings.Contains(warn, "`v`") {
		t.Fatalf("disagreeing TABLE_MAP: %v %q", got, warn)
	}
	if got, warn := h.Check(&bad, change.Position{File: "b.1", Offset: 99}); got != nil || warn != "" {
		t.Errorf("second check: %v %q (one warning only)", got, warn)
	}
	if got, _ := h.Check(m, change.Position{}); got != nil {
		t.Errorf("the table is lost until created again, got %v", got)
	}
	// Created again: known again.
	h.Apply(Statement{SQL: "DROP TABLE d.t", Pos: change.Position{File: "b.1", Offset: 200}})
	h.Apply(Statement{SQL: create, Pos: change.Position{File: "b.1", Offset: 300}})
	if got, _ := h.Check(m, change.Position{}); got == nil {
		t.Error("re-created table not known")
	}
}

// A CREATE TABLE that names no character set takes the session's (a
// guess), corrected by its first TABLE_MAP.
func TestHistoryGuessedCharset(t *testing.T) {
	h := New(true)
	create := "CREATE TABLE t (v VARCHAR(5))"
	latin1, utf8 := Collation("latin1", "", true), Collation("utf8mb4", "", true)
	h.Apply(Statement{SQL: create, DB: "d", CollationServer: latin1})
	m := tableMapOf(t, "CREATE TABLE t (v VARCHAR(5)) CHARSET=utf8mb4")
	m.DB, m.Name = "d", "t"
	if m.Columns[0].Collation != utf8 {
		t.Fatal(m.Columns[0].Collation)
	}
	if got, warn := h.Check(m, change.Position{}); got == nil || warn != "" {
		t.Fatalf("%v %q", got, warn)
	}
}

func TestHistorySaveLoad(t *testing.T) {
	h := New(true)
	for _, sql := range []string{
		"CREATE TABLE d.t (id INT PRIMARY KEY, u UUID, a VARCHAR(10) DEFAULT 'x' COMMENT 'c', g INT AS (id+1) STORED) CHARSET=utf8mb4",
		"CREATE TABLE d.lost (x INT) SELECT 1",
	} {
		h.Apply(Statement{SQL: sql, Pos: change.Position{File: "b.1", Offset: 4}})
	}
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data, "test")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h.Table("d", "t"), back.Table("d", "t")) || back.Table("d", "lost") != nil || back.Len() != 2 {
		t.Errorf("round trip:\n%s\n%s", cols(h.Table("d", "t")), cols(back.Table("d", "t")))
	}
	again, _ := json.Marshal(back)
	if string(again) != string(data) {
		t.Errorf("not stable:\n%s\n%s", data, again)
	}
	for _, bad := range []string{"", "{", `{"version":9}`, `{"version":1,"tables":[{"db":"d","name":"t","table":{"Columns":[],"PrimaryKey":[3]}}]}`} {
		if _, err := Decode([]byte(bad), "x.schema-history"); err == nil || !strings.Contains(err.Error(), "x.schema-history") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
