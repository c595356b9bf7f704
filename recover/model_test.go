package recovery

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

func intCol(name string, nullable bool) tablemap.Column {
	return tablemap.Column{Name: name, Type: mysql.MYSQL_TYPE_LONG, Nullable: nullable, Visible: true}
}

func row(vs ...any) change.Row {
	r := make(change.Row, len(vs))
	for i, v := range vs {
		switch v := v.(type) {
		case nil:
			r[i] = change.NullValue()
		case int:
			r[i] = change.IntValue(int64(v))
		case string:
			if v == "-" {
				r[i] = change.Value{} // absent
			} else {
				r[i] = change.TextValue(change.String, []byte(v))
			}
		}
	}
	return r
}

func show(rows []change.Row) string {
	var out []string
	for _, r := range rows {
		var f []string
		for _, v := range r {
			switch {
			case v.IsAbsent():
				f = append(f, "-")
			case v.IsNull():
				f = append(f, "NULL")
			case v.Kind() == change.Int:
				f = append(f, fmt.Sprint(v.Int()))
			default:
				f = append(f, string(v.Bytes()))
			}
		}
		out = append(out, "("+strings.Join(f, ",")+")")
	}
	return strings.Join(out, " ")
}

func TestStorePrimaryKey(t *testing.T) {
	tbl := &tablemap.Table{Columns: []tablemap.Column{intCol("id", false), intCol("v", true)}, PrimaryKey: []int{0}}
	s := newStore(tbl, false)
	ins := func(r change.Row) { s.apply(&change.Change{Op: change.Insert, After: r}) }
	upd := func(b, a change.Row) { s.apply(&change.Change{Op: change.Update, Before: b, After: a}) }
	del := func(b change.Row) { s.apply(&change.Change{Op: change.Delete, Before: b}) }

	ins(row(1, 10))
	ins(row(2, 20))
	ins(row(3, 30))
	upd(row(2, 20), row(2, 21))
	upd(row(3, 30), row(4, 40)) // key change
	del(row(1, 10))
	ins(row(5, nil))
	upd(row(5, "-"), row("-", 55)) // MINIMAL: before has the key, after the changed column
	if got := show(s.sorted()); got != "(2,21) (4,40) (5,55)" {
		t.Errorf("rows %s", got)
	}
	if s.c != (Conflicts{}) {
		t.Errorf("conflicts %+v", s.c)
	}

	ins(row(2, 99))               // duplicate key: the later row wins
	upd(row(7, 70), row(7, 71))   // a row never inserted, complete image: kept
	upd(row(8, "-"), row("-", 1)) // never inserted, partial image: left out
	del(row(9, 90))               // never inserted
	if got := show(s.sorted()); got != "(4,40) (5,55) (2,99) (7,71)" {
		t.Errorf("rows %s", got)
	}
	want := Conflicts{UpdateMissing: 2, DeleteMissing: 1, InsertExisting: 1, Incomplete: 1}
	if s.c != want {
		t.Errorf("conflicts %+v, want %+v", s.c, want)
	}
	if s.size() != 4 {
		t.Errorf("size %d", s.size())
	}

	// keysOnly counts the same conflicts.
	k := newStore(tbl, true)
	for _, c := range []change.Change{
		{Op: change.Insert, After: row(1, 1)},
		{Op: change.Update, Before: row(1, "-"), After: row(2, "-")},
		{Op: change.Update, Before: row(2, 1), After: row(2, 5)},
		{Op: change.Delete, Before: row(1, 1)},
		{Op: change.Update, Before: row(3, 1), After: row(3, 2)},
	} {
		k.apply(&c)
	}
	if want := (Conflicts{UpdateMissing: 1, DeleteMissing: 1}); k.c != want {
		t.Errorf("keysOnly conflicts %+v, want %+v", k.c, want)
	}
}

func TestStoreNoPrimaryKey(t *testing.T) {
	tbl := &tablemap.Table{Columns: []tablemap.Column{intCol("a", true), intCol("b", true)}}
	s := newStore(tbl, false)
	for i := 0; i < 3; i++ {
		s.apply(&change.Change{Op: change.Insert, After: row(1, nil)})
	}
	s.apply(&change.Change{Op: change.Insert, After: row(2, 2)})
	s.apply(&change.Change{Op: change.Delete, Before: row(1, nil)})
	s.apply(&change.Change{Op: change.Update, Before: row(1, nil), After: row(1, 1)})
	s.apply(&change.Change{Op: change.Delete, Before: row(3, 3)})
	s.apply(&change.Change{Op: change.Update, Before: row(2, "-"), After: row(2, 3)})
	if got := show(s.sorted()); got != "(1,NULL) (2,2) (1,1)" {
		t.Errorf("rows %s", got)
	}
	if want := (Conflicts{DeleteMissing: 1, Unidentifiable: 1}); s.c != want {
		t.Errorf("conflicts %+v, want %+v", s.c, want)
	}
}

func TestConverter(t *testing.T) {
	pos := func(off uint64) change.Position { return change.Position{File: "binlog.000001", Offset: off} }
	old := &tablemap.Table{Columns: []tablemap.Column{intCol("id", false), intCol("a", true), intCol("b", true), intCol("gone", true)}, PrimaryKey: []int{0}}
	final := &tablemap.Table{Columns: []tablemap.Column{
		intCol("id", false), intCol("B2", true), intCol("a", true),
		{Name: "s", Type: mysql.MYSQL_TYPE_VARCHAR, Length: 10, Collation: 45, Visible: true}, // NOT NULL, DEFAULT 'x'
		{Name: "n", Type: mysql.MYSQL_TYPE_LONG, Visible: true},                               // NOT NULL, no DEFAULT: 0
		{Name: "e", Type: mysql.MYSQL_TYPE_DATETIME2, Nullable: true, Visible: true},          // DEFAULT NOW(): a guess
		intCol("mystery", true),
	}, PrimaryKey: []int{0}}
	alter := func(off uint64, sql string) alterEvent {
		as := schemahist.ParseDDL(sql, "d")
		return alterEvent{ev: &Event{Pos: pos(off), SQL: sql}, info: as[0].Alter}
	}
	a1 := alter(200, "ALTER TABLE t CHANGE b b2 INT, DROP COLUMN gone, ADD s VARCHAR(10) NOT NULL DEFAULT 'x', ADD n INT NOT NULL")
	a2 := alter(300, "ALTER TABLE t ADD e DATETIME DEFAULT NOW(), MODIFY a INT")
	// The schema after a1 is unknown: the rows before it go through both.
	cv := newConverter(final, []stage{{t: old}, {alter: &a1}, {alter: &a2, t: final}})
	c, err := cv.convert(&change.Change{Op: change.Insert, Table: old, Pos: pos(100), After: row(1, 2, 3, 4)})
	if err != nil {
		t.Fatal(err)
	}
	if got := show([]change.Row{c.After}); got != "(1,3,2,x,0,NULL,NULL)" {
		t.Errorf("converted %s", got)
	}
	if c.Table != final {
		t.Error("the converted change does not name the final table")
	}
	// A row written after both ALTERs is already in the final schema.
	c, _ = cv.convert(&change.Change{Op: change.Update, Table: final, Pos: pos(350), Before: row(1, 3, 2, "x", 0, nil, nil), After: row(1, 3, 2, "y", 0, nil, nil)})
	if got := show([]change.Row{c.Before, c.After}); got != "(1,3,2,x,0,NULL,NULL) (1,3,2,y,0,NULL,NULL)" {
		t.Errorf("identity %s", got)
	}
	var notes []string
	for n, k := range cv.notes {
		notes = append(notes, fmt.Sprintf("%s [%d]", n, k.n))
	}
	joined := strings.Join(notes, "\n")
	if !strings.Contains(joined, "column `e` was added by the ALTER TABLE at binlog.000001:300 with a DEFAULT expression") ||
		!strings.Contains(joined, "column `mystery` is not in the rows written before it appeared") || len(notes) != 2 {
		t.Errorf("notes:\n%s", joined)
	}
}
