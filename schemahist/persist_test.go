package schemahist

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// fresh encodes h without the per-table cache, as every save did before
// it: the cached encoding must give the same bytes (the checkpoint names
// the history by their SHA-256).
func fresh(t *testing.T, h *History) string {
	t.Helper()
	s := savedHistory{Version: formatVersion, MariaDB: h.mariadb, Tables: []savedTable{}}
	for _, e := range h.tables {
		s.Tables = append(s.Tables, e.saved())
	}
	sort.Slice(s.Tables, func(i, j int) bool {
		a, b := s.Tables[i], s.Tables[j]
		return a.DB < b.DB || a.DB == b.DB && a.Name < b.Name
	})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// After each statement (create, alter, rename, drop, drop database, a
// TABLE_MAP that settles a guessed charset) the cached encoding equals a
// fresh one, and a reload of it gives the same bytes again.
func TestMarshalCached(t *testing.T) {
	h := New(false)
	if b, _ := h.MarshalJSON(); string(b) != fresh(t, h) {
		t.Fatalf("empty: %s", b)
	}
	off := uint64(4)
	step := func(sql string) {
		t.Helper()
		off += 100
		h.Apply(Statement{SQL: sql, DB: "d", Pos: change.Position{File: "b.1", Offset: off}})
		got, err := h.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if want := fresh(t, h); string(got) != want {
			t.Fatalf("after %s:\ncached %s\nfresh  %s", sql, got, want)
		}
		if back, err := Decode(got, "test"); err != nil {
			t.Fatal(err)
		} else if again, _ := back.MarshalJSON(); string(again) != string(got) {
			t.Fatalf("after %s: reload differs:\n%s\n%s", sql, again, got)
		}
	}
	for _, sql := range []string{
		"CREATE TABLE d.a (id INT PRIMARY KEY, s VARCHAR(10) DEFAULT '<&>')",
		"CREATE TABLE d.b (id INT)",
		"CREATE TABLE e.c (id INT, v TEXT) CHARSET=latin1",
		"ALTER TABLE d.a ADD COLUMN n INT DEFAULT 7 COMMENT 'new'",
		"RENAME TABLE d.b TO d.b2",
		"CREATE TABLE d.b (x BIGINT)",
		"DROP TABLE d.a",
		"CREATE TABLE d.a (id INT, w VARCHAR(3))",
		"ALTER TABLE d.b2 RENAME TO e.b3",
		"CREATE TABLE d.lost (x INT) SELECT 1",
		"DROP DATABASE e",
		"CREATE TABLE d.ll LIKE d.a",
	} {
		step(sql)
	}
	// A TABLE_MAP settling a guessed default charset changes the entry in
	// place (createSQL goes): the cache must follow.
	h2 := New(false)
	h2.Apply(Statement{SQL: "CREATE TABLE d.g (id INT, s VARCHAR(4))", CollationServer: 8, Pos: change.Position{File: "b.1", Offset: 4}})
	if _, err := h2.MarshalJSON(); err != nil {
		t.Fatal(err)
	}
	if h2.tables[key("d", "g")].createSQL == "" {
		t.Fatal("no guessed charset: the test does not test the in-place change")
	}
	tm := *h2.tables[key("d", "g")].sh.T // a TABLE_MAP that agrees with the guess
	tm.Columns = append([]tablemap.Column(nil), tm.Columns...)
	if _, warn := h2.Check(&tm, change.Position{File: "b.1", Offset: 9}); warn != "" {
		t.Fatal(warn)
	}
	if h2.tables[key("d", "g")].createSQL != "" {
		t.Fatal("the TABLE_MAP did not settle the guess: the test does not test the in-place change")
	}
	if got, _ := h2.MarshalJSON(); string(got) != fresh(t, h2) {
		t.Fatalf("after Check:\ncached %s\nfresh  %s", got, fresh(t, h2))
	}
}
