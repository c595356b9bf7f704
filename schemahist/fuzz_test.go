package schemahist

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// FuzzHistory feeds statements (separated by ';') to a history, checks
// TABLE_MAPs against it and saves and loads it: it must never panic, and
// what it saves must load.
func FuzzHistory(f *testing.F) {
	for _, s := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(3) DEFAULT 'x', g INT AS (id) VIRTUAL) CHARSET=utf8mb4;ALTER TABLE t ADD b INT FIRST, DROP a",
		"CREATE TABLE t (a INT);RENAME TABLE t TO u;CREATE TABLE v LIKE u;DROP DATABASE d",
		"CREATE TABLE t (a INT, b TEXT, PRIMARY KEY (a));ALTER TABLE t CHANGE a c BIGINT, ADD PRIMARY KEY (c), RENAME TO t",
		"CREATE OR REPLACE TABLE t (a ENUM('x','y') NOT NULL);CREATE INDEX i ON t (a);DROP INDEX `PRIMARY` ON t",
		"ALTER TABLE t MODIFY a INT GENERATED ALWAYS AS ((a)) STORED AFTER b;TRUNCATE t",
	} {
		f.Add(s)
	}
	maps := []*tablemap.Table{
		{DB: "d", Name: "t", Columns: []tablemap.Column{{Name: "id", Type: 3}, {Name: "a", Type: 15, Length: 12, Collation: 45, Nullable: true}}},
		{DB: "d", Name: "u", Columns: []tablemap.Column{{Name: "a", Type: 3, Nullable: true}}},
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 4096 {
			return
		}
		h := New(true)
		for i, sql := range strings.Split(in, ";") {
			if i >= 64 {
				break
			}
			h.Apply(Statement{SQL: sql, DB: "d", Pos: change.Position{File: "f", Offset: uint64(i)}, CollationServer: 45})
			for _, m := range maps {
				if got, _ := h.Check(m, change.Position{}); got != nil && len(got.Columns) != len(m.Columns) {
					t.Fatalf("%s: a table of %d columns agreed with a TABLE_MAP of %d", sql, len(got.Columns), len(m.Columns))
				}
			}
		}
		data, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(data, "fuzz"); err != nil {
			t.Fatal(err)
		}
	})
}

// The check of a TABLE_MAP seen before: the hit path of every row event.
func BenchmarkCheck(b *testing.B) {
	h := New(true)
	create := "CREATE TABLE d.t (id INT NOT NULL, v VARCHAR(5), g INT AS (id) VIRTUAL, PRIMARY KEY (id)) CHARSET=latin1"
	h.Apply(Statement{SQL: create})
	sh, err := shapeFromCreate(create, nil, 0, true, true)
	if err != nil {
		b.Fatal(err)
	}
	m := sh.T
	m.DB, m.Name = "d", "t"
	if got, _ := h.Check(m, change.Position{}); got == nil {
		b.Fatal("not known")
	}
	b.ReportAllocs()
	for b.Loop() {
		if got, _ := h.Check(m, change.Position{}); got == nil {
			b.Fatal("not known")
		}
	}
}

// Two tables alternating: the map path.
func BenchmarkCheckTwoTables(b *testing.B) {
	h := New(true)
	var ms []*tablemap.Table
	for _, n := range []string{"t", "u"} {
		create := "CREATE TABLE d." + n + " (id INT NOT NULL, v VARCHAR(5), PRIMARY KEY (id)) CHARSET=latin1"
		h.Apply(Statement{SQL: create})
		sh, err := shapeFromCreate(create, nil, 0, true, true)
		if err != nil {
			b.Fatal(err)
		}
		sh.T.DB, sh.T.Name = "d", n
		ms = append(ms, sh.T)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if got, _ := h.Check(ms[i&1], change.Position{}); got == nil {
			b.Fatal("not known")
		}
		i++
	}
}
